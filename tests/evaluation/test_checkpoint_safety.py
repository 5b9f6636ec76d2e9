"""What is safe to load: a checkpoint whose SB3 zip carries a pickled command never runs it in
fowlplay-eval or fowlplay-play unless the user says --trust-checkpoint."""

from __future__ import annotations

import base64
import json
import os
import pickle
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from fowlplay import envs
from fowlplay.evaluation import cli as eval_cli
from fowlplay.evaluation import play
from fowlplay.training import cli as train_cli
from fowlplay.training.checkpoint import load_checkpoint, make_metadata, read_metadata, save_checkpoint

ROOT = Path(__file__).resolve().parents[2]


class Payload:
    """Unpickling this runs a shell command that leaves a marker file (what an attacker would plant)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {shlex.quote(str(self.marker))}",)


def plant(zip_path: Path, marker: Path) -> None:
    """Put the payload in the zip's cloudpickled `data`, where SB3 keeps `ep_success_buffer`."""
    with zipfile.ZipFile(zip_path) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    data = json.loads(entries["data"])
    data["ep_success_buffer"] = {
        ":type:": "<class 'collections.deque'>",
        ":serialized:": base64.b64encode(pickle.dumps(Payload(marker))).decode(),
    }
    entries["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(zip_path, "w") as archive:
        for name, content in entries.items():
            archive.writestr(name, content)


def make_old(stem: Path) -> None:
    """Turn a checkpoint into one written before the weights file existed (zip and metadata only)."""
    Path(f"{stem}.npz").unlink()
    metadata = json.loads(Path(f"{stem}.json").read_text())
    del metadata["policy"]
    Path(f"{stem}.json").write_text(json.dumps(metadata))


@pytest.fixture
def run(tmp_path):
    """A run directory holding a Chicken checkpoint whose zip carries the payload, and its marker."""
    from fowlplay.training.sb3.selfplay import SelfPlayEnv
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    vec = DummyVecEnv([lambda: SelfPlayEnv("chicken_v1")])
    model = MaskablePPO("MlpPolicy", vec, n_steps=32, batch_size=32, policy_kwargs={"net_arch": [8]}, seed=0)
    metadata = make_metadata(envs.make("chicken_v1"), {"note": "test"}, seed=0, timesteps=0, kind="final")
    run_dir = tmp_path / "downloaded"
    save_checkpoint(model, run_dir / "final", metadata)
    marker = tmp_path / "payload-ran"
    plant(run_dir / "final.zip", marker)
    return run_dir, marker


def evaluate(tmp_path, run_dir, *extra):
    out = tmp_path / "eval"
    argv = ["--game", "chicken_v1", "--agents", str(run_dir), "random", "--matches", "1", "--out", str(out)]
    return eval_cli.main([*argv, "--workers", "1", "--bootstrap", "10", "--no-progress", *extra]), out


def test_the_planted_payload_is_live(run):
    run_dir, marker = run
    load_checkpoint(run_dir)  # SB3's own loader, as --resume of one's own run uses it
    assert marker.exists(), "the test's payload must really run when the zip is unpickled"


def test_evaluation_and_play_load_the_weights_without_running_the_payload(run, tmp_path, capsys):
    run_dir, marker = run
    status, out = evaluate(tmp_path, run_dir)
    assert status == 0 and not marker.exists()
    summary = json.loads((out / "summary.json").read_text())
    model = summary["config"]["agents"][0]["model"]
    assert model["file"] == str((run_dir / "final.npz").resolve())
    assert model["weights_sha256"] == read_metadata(run_dir)["policy"]["weights_sha256"]
    assert play.main(["--agents", str(run_dir), "random", "--quiet"]) == 0
    assert not marker.exists()
    capsys.readouterr()


def test_an_old_checkpoint_is_refused_unless_trusted(run, tmp_path, capsys):
    run_dir, marker = run
    make_old(run_dir / "final")
    status, _ = evaluate(tmp_path, run_dir)
    err = capsys.readouterr().err
    assert status == 2 and not marker.exists()
    assert "no weights file final.npz" in err and "can run any code" in err
    assert "fowlplay-train --convert" in err and "--trust-checkpoint" in err
    with pytest.raises(SystemExit) as exit_info:
        play.main(["--agents", str(run_dir), "random", "--quiet"])
    assert exit_info.value.code == 2 and not marker.exists()
    assert "--trust-checkpoint" in capsys.readouterr().err
    # Trusting it is the user's explicit choice, and then the zip is unpickled.
    status, _ = evaluate(tmp_path, run_dir, "--trust-checkpoint")
    assert status == 0 and marker.exists()


def test_an_old_checkpoint_of_ones_own_converts_to_the_safe_format(tmp_path, capsys):
    from fowlplay.training.sb3.selfplay import SelfPlayEnv
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    vec = DummyVecEnv([lambda: SelfPlayEnv("chicken_v1")])
    model = MaskablePPO("MlpPolicy", vec, n_steps=32, batch_size=32, policy_kwargs={"net_arch": [8]}, seed=0)
    metadata = make_metadata(envs.make("chicken_v1"), {"note": "test"}, seed=0, timesteps=0, kind="final")
    run_dir = tmp_path / "mine"
    save_checkpoint(model, run_dir / "checkpoints" / "step_0", {**metadata, "kind": "periodic"})
    save_checkpoint(model, run_dir / "final", metadata)
    expected = read_metadata(run_dir)["policy"]
    for stem in (run_dir / "final", run_dir / "checkpoints" / "step_0"):
        make_old(stem)
    assert train_cli.main(["--convert", str(run_dir)]) == 0
    assert "wrote" in capsys.readouterr().out
    assert read_metadata(run_dir)["policy"] == expected
    assert (run_dir / "checkpoints" / "step_0.npz").exists()
    status, _ = evaluate(tmp_path, run_dir)
    assert status == 0


# ----- crafted checkpoints: refused in one line, quickly, within a small memory limit ----------------
#: Runs fowlplay-eval on each crafted checkpoint in one process whose address space is capped at what
#: torch and the game need plus 512 MB; prints, per case, the error line, the CPU seconds and the status.
CRAFTED_SCRIPT = """
import contextlib, io, json, resource, sys, tempfile, time
from fowlplay.evaluation import cli
import fowlplay.training.policy, torch  # what loading a checkpoint imports, before the cap
size = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmSize")) * 1024
resource.setrlimit(resource.RLIMIT_AS, (size + 512 * 2**20, resource.RLIM_INFINITY))
results = {}
for name, path in json.loads(sys.argv[1]).items():
    err = io.StringIO()
    start = time.process_time()
    with contextlib.redirect_stderr(err):
        try:
            status = cli.main(["--game", "chicken_v1", "--agents", "ckpt:" + path, "random", "--matches", "1",
                               "--out", tempfile.mkdtemp(), "--workers", "1", "--no-progress", "--bootstrap", "2"])
        except SystemExit as stop:
            status = stop.code
        except BaseException as exc:
            status = f"UNHANDLED {type(exc).__name__}: {exc}"
    errors = [line for line in err.getvalue().splitlines() if "error" in line.lower()]
    results[name] = {"status": status, "errors": errors, "traceback": "Traceback" in err.getvalue(),
                     "seconds": time.process_time() - start}
print(json.dumps(results))
"""


def _npz(path: Path, arrays: dict) -> None:
    import numpy as np

    np.savez_compressed(path, **arrays)


def _lying_npy(name: str, shape: tuple, dtype: str = "<f4") -> bytes:
    """A .npy member whose header claims `shape` but holds a few bytes."""
    header = f"{{'descr': '{dtype}', 'fortran_order': False, 'shape': {shape!r}, }}"
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + b"\0" * 16


def craft_checkpoints(base: Path, folder: Path) -> dict[str, str]:
    """Every crafted checkpoint of the hostile round of issue 33, each a copy of `base` (a stem) with
    one thing changed; name -> stem."""
    import numpy as np

    folder.mkdir()
    cases: dict[str, str] = {}
    metadata = json.loads(Path(f"{base}.json").read_text())

    def case(name: str, meta=None, npz=None, json_text=None) -> Path:
        stem = folder / name
        shutil.copy(f"{base}.zip", f"{stem}.zip")
        if npz is None:
            shutil.copy(f"{base}.npz", f"{stem}.npz")
        else:
            npz(Path(f"{stem}.npz"))
        if json_text is not None:
            Path(f"{stem}.json").write_bytes(json_text)
        elif meta is not None:
            changed = json.loads(json.dumps(metadata))
            meta(changed)
            Path(f"{stem}.json").write_text(json.dumps(changed))
        else:
            shutil.copy(f"{base}.json", f"{stem}.json")
        cases[name] = str(stem)
        return stem

    def policy(key, value):
        return lambda m: m["policy"].__setitem__(key, value)

    case("net_arch_10M", policy("net_arch", [10_000_000]))
    case("net_arch_20M", policy("net_arch", [20_000_000]))
    case("net_arch_words", policy("net_arch", "wide"))
    case("activation", policy("activation", "gelu"))
    case("weights_hash", policy("weights_sha256", "not a hash"))
    case(
        "timesteps_1e999",
        json_text=json.dumps(metadata).replace('"timesteps": 0', '"timesteps": 1e999').encode(),
    )
    case("timesteps_text", lambda m: m.__setitem__("timesteps", "many"))
    case("env_options_list", lambda m: m.__setitem__("env_options", [1, 2]))
    case("observation_size_huge", lambda m: m.__setitem__("observation_size", 10**12))
    case("deep_json", json_text=b"[" * 200_000 + b"]" * 200_000)
    case("nan_json", json_text=json.dumps(metadata).replace('"timesteps": 0', '"timesteps": NaN').encode())
    case("huge_json", json_text=b'{"pad": "' + b"x" * (5 * 2**20) + b'"}')
    case("binary_json", json_text=b"\xff\xfe\x00 not text")
    with np.load(f"{base}.npz") as data:
        weights = {name: data[name] for name in data.files}

    def gib_array(path: Path) -> None:  # 256 MiB of zeros in a few hundred KB (the 1.2 MB / 1 GiB bomb)
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, array in weights.items():
                if name != "action_net.bias":
                    archive.writestr(f"{name}.npy", _npy_bytes(array))
            with archive.open("action_net.bias.npy", "w", force_zip64=True) as member:
                member.write(_lying_npy("x", (64 * 2**20,)).rstrip(b"\0"))
                for _ in range(256):
                    member.write(b"\0" * 2**20)

    case("npz_bomb", npz=gib_array)
    case(
        "npy_1e11", npz=lambda p: _with_member(p, weights, "action_net.bias.npy", _lying_npy("x", (10**11,)))
    )
    case("npz_foreign_member", npz=lambda p: _with_member(p, weights, "notes.txt", b"hello"))
    case(
        "npz_object_array",
        npz=lambda p: _with_member(
            p, weights, "action_net.bias.npy", _npy_bytes(np.array([{}], dtype=object))
        ),
    )
    case(
        "npz_missing_array",
        npz=lambda p: _npz(p, {k: v for k, v in weights.items() if k != "value_net.bias"}),
    )
    case("npz_wrong_shape", npz=lambda p: _npz(p, {**weights, "value_net.bias": np.zeros(3, np.float32)}))
    case("npz_not_a_zip", npz=lambda p: p.write_bytes(b"not a zip at all"))
    for part in ("json", "npz"):
        stem = case(f"{part}_to_dev_zero")
        Path(f"{stem}.{part}").unlink()
        Path(f"{stem}.{part}").symlink_to("/dev/zero")
        stem = case(f"{part}_fifo")
        Path(f"{stem}.{part}").unlink()
        os.mkfifo(f"{stem}.{part}")
    case("untouched")
    return cases


def _npy_bytes(array) -> bytes:
    import io

    import numpy as np

    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def _with_member(path: Path, weights: dict, name: str, content: bytes) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for key, array in weights.items():
            if f"{key}.npy" != name:
                archive.writestr(f"{key}.npy", _npy_bytes(array))
        archive.writestr(name, content)


#: What each crafted checkpoint's one error line says.
CRAFTED = {
    "net_arch_10M": "parameters (net_arch [10000000], obs 31, actions 16); at most 20,000,000 are loaded",
    "net_arch_20M": "at most 20,000,000 are loaded",
    "net_arch_words": "policy.net_arch must be a list",
    "activation": "policy.activation must be 'tanh' or 'relu'; got 'gelu'",
    "weights_hash": "policy.weights_sha256 must be 64 hex digits",
    "timesteps_1e999": "the number 1e999 is out of range",
    "timesteps_text": "timesteps must be an integer",
    "env_options_list": "env_options must be a JSON object; got [1, 2]",
    "observation_size_huge": "observation_size must be an integer in 1..10,000,000",
    "deep_json": "nests too deep",
    "nan_json": "NaN is not a number JSON allows",
    "huge_json": "more than the 4,194,304 such a file may have",
    "binary_json": "not UTF-8 text",
    "npz_bomb": "decompresses to 268,435,",
    "npy_1e11": "claims 100,000,000,000 elements",
    "npz_foreign_member": "member 'notes.txt' is not a NumPy array (.npy)",
    "npz_object_array": "holds object values; a weights file holds numbers only",
    "npz_missing_array": "missing ['value_net.bias']",
    "npz_wrong_shape": "value_net.bias (3,) (not (1,))",
    "npz_not_a_zip": "is not a zip archive",
    "json_to_dev_zero": "leads outside its folder",
    "npz_to_dev_zero": "leads outside its folder",
    "json_fifo": "is a named pipe, not a regular file",
    "npz_fifo": "is a named pipe, not a regular file",
}


def test_crafted_checkpoints_are_refused_in_one_line_quickly_within_a_small_memory_limit(run, tmp_path):
    run_dir, marker = run
    cases = craft_checkpoints(run_dir / "final", tmp_path / "crafted")
    done = subprocess.run(
        [sys.executable, "-c", CRAFTED_SCRIPT, json.dumps(cases)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OMP_NUM_THREADS": "1", "MALLOC_ARENA_MAX": "2"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert results["untouched"]["status"] == 0, results["untouched"]
    wrong = []
    for name, words in CRAFTED.items():
        result = results[name]
        one_line = result["status"] == 2 and not result["traceback"] and len(result["errors"]) == 1
        if not (one_line and words in result["errors"][0] and result["seconds"] < 1.0):
            wrong.append(f"{name}: {result}")
    assert not wrong, "\n".join(wrong)
    assert not marker.exists()


@pytest.mark.slow
def test_rerunning_an_exploit_whose_folder_holds_a_planted_zip_never_runs_it(tmp_path, capsys):
    from fowlplay.evaluation import exploit
    from fowlplay.training.checkpoint import resolve

    out = tmp_path / "exploit"
    argv = ["--game", "chicken_v1", "--agent", "random", "--total-timesteps", "128", "--matches", "1"]
    argv += ["--probes", "none", "--rungs", "none"]  # the learner's checkpoints are what this is about
    argv += ["--out", str(out), "--set", "checkpoint_every=64", "--set", "n_envs=2"]
    argv += ["--set", "ppo.n_steps=32", "--set", "ppo.batch_size=32"]
    assert exploit.main(argv) == 0
    # As if it had been interrupted: the best response has periodic checkpoints, no final one.
    for name in ("final.json", "final.npz", "final.zip"):
        (out / "br" / name).unlink()
    (out / "exploit.json").unlink()
    newest = resolve(out / "br", prefer_best=False)
    marker = tmp_path / "payload-ran"
    plant(Path(f"{newest}.zip"), marker)
    capsys.readouterr()
    assert exploit.main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"refusing to resume from {newest}.zip" in err, err
    assert "is corrupt or was replaced" in err and "--trust-checkpoint" in err
    assert not marker.exists()
    # Trusted, it goes on without unpickling anything: the payload still never runs.
    assert exploit.main([*argv, "--trust-checkpoint"]) == 0
    assert (out / "exploit.json").exists() and not marker.exists()
