"""What is safe to load: a checkpoint whose SB3 zip carries a pickled command never runs it in
fowlplay-eval or fowlplay-play unless the user says --trust-checkpoint."""

from __future__ import annotations

import base64
import json
import os
import pickle
import shlex
import zipfile
from pathlib import Path

import pytest
from fowlplay import envs
from fowlplay.evaluation import cli as eval_cli
from fowlplay.evaluation import play
from fowlplay.training import cli as train_cli
from fowlplay.training.checkpoint import load_checkpoint, make_metadata, read_metadata, save_checkpoint


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
    from fowlplay.training.selfplay import SelfPlayEnv
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
    from fowlplay.training.selfplay import SelfPlayEnv
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
