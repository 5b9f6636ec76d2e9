"""What a resume loads: only files the run's signed record says this user's fowlplay wrote, and never
by unpickling (a learner built from the config gets the checkpoint's tensors and plain counters).

The payload is the evaluation tests' (`tests/evaluation/test_checkpoint_safety.py`): unpickling it
runs a shell command that leaves a marker file.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import subprocess
import sys
import textwrap
import warnings
import zipfile
from pathlib import Path

import pytest
import torch
from fowlplay.training import manifest
from fowlplay.training.checkpoint import CheckpointError, load_checkpoint, read_metadata, resolve
from fowlplay.training.config import from_dict
from fowlplay.training.sb3.trainer import hyperparameters, make_model, make_vec_env
from fowlplay.training.train import read_run_config, resume, train

from tests.evaluation.test_checkpoint_safety import plant

ROOT = Path(__file__).resolve().parents[2]
TINY = {
    "game": "chicken_v1",
    "total_timesteps": 256,
    "n_envs": 2,
    "vec_env": "dummy",
    "checkpoint_every": 128,
    "eval_every": 128,
    "eval_games": 4,
    "progress_bar": False,
    "tensorboard": False,
    "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1, "net_arch": [16]},
    "dqn": {"learning_starts": 64, "batch_size": 16, "buffer_size": 1000, "net_arch": [16]},
    "opponents": {"snapshot_every": 128},
}


def tiny_run(folder: Path, **changes) -> Path:
    train(from_dict({**TINY, "out": str(folder), **changes}), verbose=False)
    return folder


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A finished 256-decision PPO run of this user (copy it before changing it)."""
    return tiny_run(tmp_path_factory.mktemp("runs") / "ppo")


@pytest.fixture
def run(made, tmp_path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(made, copy)  # a copied run stays vouched for: its record holds contents, not paths
    return copy


def test_a_resume_of_ones_own_run_goes_on(run):
    result = resume(run, {"total_timesteps": 384}, verbose=False)
    assert result.timesteps == 384 and read_metadata(run / "final")["timesteps"] == 384


def test_a_planted_payload_in_the_checkpoint_a_resume_loads_never_runs(run, tmp_path):
    marker = tmp_path / "payload-ran"
    plant(run / "final.zip", marker)
    with pytest.raises(CheckpointError) as refused:
        resume(run, {"total_timesteps": 384}, verbose=False)
    message = str(refused.value)
    assert "final.zip is corrupt or was replaced" in message and "--trust-checkpoint" in message
    assert not marker.exists()
    # Trusted, the resume goes on, and still unpickles nothing: the payload never runs.
    resume(run, {"total_timesteps": 384}, verbose=False, trust_checkpoint=True)
    assert read_metadata(run / "final")["timesteps"] == 384 and not marker.exists()


def test_a_record_rewritten_to_vouch_for_a_planted_file_is_refused(run, tmp_path):
    marker = tmp_path / "payload-ran"
    plant(run / "final.zip", marker)
    record = json.loads((run / manifest.MANIFEST).read_text())
    record["files"]["final.zip"] = manifest.sha256_of(run / "final.zip")
    forged = json.dumps(record["files"], sort_keys=True, separators=(",", ":")).encode()
    record["hmac"] = hmac.new(b"an attacker's own key", forged, hashlib.sha256).hexdigest()
    (run / manifest.MANIFEST).write_text(json.dumps(record))
    with pytest.raises(CheckpointError, match="was not signed by this user's fowlplay"):
        resume(run, {"total_timesteps": 384}, verbose=False)
    assert not marker.exists()


def test_a_run_signed_by_another_user_or_without_a_record_needs_the_flag(run, tmp_path, monkeypatch):
    with monkeypatch.context() as elsewhere:
        elsewhere.setenv("FOWLPLAY_KEY_FILE", str(tmp_path / "someone-else.key"))
        with pytest.raises(
            CheckpointError, match=r"was not signed by this user's fowlplay.*--trust-checkpoint"
        ):
            resume(run, {"total_timesteps": 384}, verbose=False)
    (run / manifest.MANIFEST).unlink()  # a run of an older fowlplay
    with pytest.raises(CheckpointError, match=r"has no files\.json.*--trust-checkpoint"):
        resume(run, {"total_timesteps": 384}, verbose=False)
    resume(run, {"total_timesteps": 384}, verbose=False, trust_checkpoint=True)
    assert read_metadata(run / "final")["timesteps"] == 384


def test_a_snapshot_the_run_did_not_write_is_left_out_of_the_pool(run):
    snapshots = sorted((run / "snapshots").glob("step_*.npz"))
    shutil.copy(snapshots[0], snapshots[-1])  # another learner's weights, in a valid file
    with pytest.warns(UserWarning, match=rf"{snapshots[-1].name} is corrupt or was replaced.*skipped"):
        resume(run, {"total_timesteps": 384}, verbose=False)


def _state(model) -> dict:
    """Every tensor and number of a learner's policy and optimizer state, flattened."""
    flat = {}

    def walk(value, key):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{key}/{k}")
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                walk(v, f"{key}/{i}")
        else:
            flat[key] = value

    walk(model.get_parameters(), "")
    return flat


@pytest.mark.parametrize("trainer", ["ppo", "dqn"])
def test_the_restored_learner_is_the_one_sb3_would_load(trainer, made, tmp_path):
    from fowlplay.training.sb3.trainer import restore_training_state

    folder = made if trainer == "ppo" else tiny_run(tmp_path / "dqn", trainer="dqn")
    config = read_run_config(folder)
    stem = resolve(folder, prefer_best=False)
    vec_env = make_vec_env(config)
    expected, _ = load_checkpoint(stem, env=vec_env, **hyperparameters(config))  # SB3's own loader
    model = make_model(config, vec_env, "cpu")
    restore_training_state(model, stem)
    mine, theirs = _state(model), _state(expected)
    assert mine.keys() == theirs.keys()
    for key, value in theirs.items():
        same = torch.equal(value, mine[key]) if torch.is_tensor(value) else value == mine[key]
        assert same, key
    for counter in ("num_timesteps", "_n_updates", "_episode_num", "_n_calls", "exploration_rate"):
        assert getattr(model, counter, None) == getattr(expected, counter, None), counter


# ----- crafted training state, under a small memory limit --------------------------------------------
CRAFTED_SCRIPT = textwrap.dedent(
    """
    import json, resource, sys, time
    from fowlplay.training.checkpoint import CheckpointError
    from fowlplay.training.sb3.trainer import make_model, make_vec_env, restore_training_state
    from fowlplay.training.train import read_run_config
    run, cases = sys.argv[1], json.loads(sys.argv[2])
    config = read_run_config(__import__("pathlib").Path(run))
    model = make_model(config, make_vec_env(config), "cpu")
    size = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmSize")) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (size + 512 * 2**20, resource.RLIM_INFINITY))
    results = {}
    for name, stem in cases.items():
        start = time.process_time()
        try:
            restore_training_state(model, stem)
            said = "loaded"
        except CheckpointError as exc:
            said = str(exc)
        except BaseException as exc:
            said = f"UNHANDLED {type(exc).__name__}: {exc}"
        results[name] = {"said": said, "seconds": time.process_time() - start}
    print(json.dumps(results))
    """
)


def _rewrite_zip(path: Path, change) -> None:
    with zipfile.ZipFile(path) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    change(entries)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries.items():
            archive.writestr(name, content)


def test_crafted_training_state_is_refused_quickly_within_a_small_memory_limit(run, tmp_path):
    marker = tmp_path / "payload-ran"
    stem = run / "final"
    cases = {}

    def crafted(name, change):
        target = tmp_path / name
        for suffix in (".json", ".npz", ".zip"):
            shutil.copy(f"{stem}{suffix}", f"{target}{suffix}")
        _rewrite_zip(Path(f"{target}.zip"), change)
        cases[name] = str(target)

    import pickle

    from tests.evaluation.test_checkpoint_safety import Payload

    crafted("bomb", lambda e: e.update({"policy.pth": b"\0" * (64 * 2**20)}))  # 64 MB of zeros, 64 KB stored
    crafted("foreign_member", lambda e: e.update({"evil.pkl": b"x"}))
    crafted("pickled_tensors", lambda e: e.update({"policy.pth": pickle.dumps(Payload(marker))}))
    crafted("deep_data", lambda e: e.update({"data": b"[" * 200_000 + b"]" * 200_000}))
    crafted("data_a_list", lambda e: e.update({"data": b"[1, 2]"}))
    crafted("infinite_counter", lambda e: e.update({"data": b'{"num_timesteps": 1e999}'}))
    crafted("no_optimizer", lambda e: e.pop("policy.optimizer.pth"))
    crafted("other_weights", lambda e: e.update({"policy.pth": e["policy.optimizer.pth"]}))
    Path(tmp_path / "not_a_zip.zip").write_bytes(b"PK\x03\x04 not really")
    for suffix in (".json", ".npz"):
        shutil.copy(f"{stem}{suffix}", tmp_path / f"not_a_zip{suffix}")
    cases["not_a_zip"] = str(tmp_path / "not_a_zip")
    for suffix in (".json", ".npz"):
        shutil.copy(f"{stem}{suffix}", tmp_path / f"device{suffix}")
    (tmp_path / "device.zip").symlink_to("/dev/zero")
    cases["device"] = str(tmp_path / "device")
    cases["untouched"] = str(stem)

    done = subprocess.run(
        [sys.executable, "-c", CRAFTED_SCRIPT, str(run), json.dumps(cases)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1", "MALLOC_ARENA_MAX": "2"},
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.strip().splitlines()[-1])
    expected = {
        "bomb": "decompresses to",
        "foreign_member": "unexpected member 'evil.pkl'",
        "pickled_tensors": "is corrupt: UnpicklingError",
        "deep_data": "nests too deep",
        "data_a_list": "'data' entry is not a JSON object",
        "infinite_counter": "out of range",
        "no_optimizer": "does not fit the learner",
        "other_weights": "does not fit the learner",
        "not_a_zip": "is not a zip archive",
        "device": "is a device, not a regular file",
        "untouched": "loaded",
    }
    for name, words in expected.items():
        said, seconds = results[name]["said"], results[name]["seconds"]
        assert words in said and "\n" not in said, f"{name}: {said}"
        assert seconds < 1.0, f"{name} took {seconds:.2f} s of CPU"
    assert not marker.exists()


def test_a_config_that_is_no_regular_file_is_refused_in_one_line(run):
    (run / "config.yaml").unlink()
    (run / "config.yaml").symlink_to("/dev/zero")
    with pytest.raises(CheckpointError, match=r"run config .*config.yaml is corrupt: .* is a device"):
        resume(run, verbose=False)


def test_a_trusted_resume_makes_the_files_it_loaded_the_runs_own(run, tmp_path, monkeypatch):
    (run / manifest.MANIFEST).unlink()  # a run of an older fowlplay: nothing is vouched for
    resume(run, {"total_timesteps": 384}, verbose=False, trust_checkpoint=True)
    record = json.loads((run / manifest.MANIFEST).read_text())["files"]
    assert {"final.zip", "snapshots/step_128.npz", "snapshots/step_256.npz"} <= set(record)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        resume(run, {"total_timesteps": 640}, verbose=False)  # no flag needed any more
    assert not [w for w in said if "snapshot" in str(w.message)]  # every snapshot still in the pool
    # A record signed elsewhere is never carried over into one of ours.
    with monkeypatch.context() as elsewhere:
        elsewhere.setenv("FOWLPLAY_KEY_FILE", str(tmp_path / "someone-else.key"))
        manifest.record(run, [run / "config.yaml"])
    manifest.record(run, [run / "final.json"])
    assert set(json.loads((run / manifest.MANIFEST).read_text())["files"]) == {"final.json"}
