"""Every mistake a user can make with fowlplay-train is one line naming it, never a traceback."""

from __future__ import annotations

import errno
import warnings
from pathlib import Path

import numpy as np
import pytest
from fowlplay.training import snapshots as callbacks
from fowlplay.training.checkpoint import CheckpointWarning
from fowlplay.training.cli import main
from fowlplay.training.config import ConfigError, from_dict, load_config
from fowlplay.training.sb3.trainer import torch_device

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
CHICKEN = str(CONFIGS / "chicken_v1.yaml")
#: A tiny in-process run: 256 timesteps, a checkpoint and a snapshot every 128.
TINY = [
    "--n-envs", "2", "--no-progress", "--total-timesteps", "256",
    "--set", "vec_env=dummy", "--set", "tensorboard=false",
    "--set", "ppo.n_steps=64", "--set", "ppo.batch_size=64", "--set", "ppo.n_epochs=1",
    "--set", "ppo.net_arch=[8]", "--set", "opponents.snapshot_every=128", "--set", "checkpoint_every=128",
]  # fmt: skip


def one_line_error(capsys, argv: list[str], status: int = 2) -> str:
    assert main(argv) == status
    err = capsys.readouterr().err.strip()
    assert err.startswith("fowlplay-train: error: ") and "\n" not in err, err
    return err


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("seed=[1,", "--set seed=[1,: the value is not plain YAML"),
        ("seed=!!python/object/apply:os.system ['echo hacked']", "tags such as !!python/... are never run"),
        ("seed.x=1", "--set seed.x: seed is a value (0), not a section"),
        ("ppo.net_arch.x=1", "--set ppo.net_arch.x: ppo.net_arch is a value ([128, 128]), not a section"),
        ("ppo.learning_rate=0", "ppo.learning_rate must be > 0"),
        ("ppo.learning_rate=-1e-3", "ppo.learning_rate must be > 0"),
        ("ppo.learning_rate=nan", "ppo.learning_rate must be a finite number"),
        ("decision_cost=nan", "decision_cost must be a finite number"),
        ("shaping=.inf", "shaping must be a finite number"),
        ("device=gpu", "device must be one of ['auto', 'cpu', 'cuda', 'cuda:N', 'mps']; got 'gpu'"),
        ("seed=-1", "seed must be an int in 0..2147483647; got -1"),
    ],
)
def test_bad_settings_are_one_line_errors(capsys, tmp_path, setting, message):
    err = one_line_error(capsys, ["--config", CHICKEN, "--out", str(tmp_path / "run"), "--set", setting])
    assert message in err
    assert not (tmp_path / "run").exists()  # nothing was started


def test_python_tags_in_a_setting_never_run(capsys, tmp_path):
    marker = tmp_path / "ran"
    main(["--config", CHICKEN, "--set", f"seed=!!python/object/apply:os.system ['touch {marker}']"])
    capsys.readouterr()
    assert not marker.exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\xff\xfe", "is not a text file; it must be YAML"),
        (b"", "is empty; it must set at least the game"),
        (b"# only a comment\n", "is empty"),
        (b"- a list\n", "must be a mapping of keys to values; got list"),
        (b"game: [unclosed\n", "is not valid YAML"),
    ],
)
def test_bad_config_files_are_one_line_errors(capsys, tmp_path, content, message):
    path = tmp_path / "config.yaml"
    path.write_bytes(content)
    assert message in one_line_error(capsys, ["--config", str(path)])
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_other_ppo_values_are_checked():
    for key, value, message in [
        ("clip_range", 0.0, "ppo.clip_range must be > 0"),
        ("max_grad_norm", -1.0, "ppo.max_grad_norm must be > 0"),
        ("ent_coef", -0.1, "ppo.ent_coef must be >= 0"),
        ("target_kl", 0.0, "ppo.target_kl must be > 0"),
        ("gamma", float("nan"), "ppo.gamma must be a finite number"),
    ]:
        with pytest.raises(ConfigError, match=message):
            from_dict({"ppo": {key: value}})
    assert from_dict({"device": "cuda:1"}).device == "cuda:1"  # checked against the machine at start


def test_cuda_on_a_machine_without_it_says_it_falls_back(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.warns(CheckpointWarning, match="device 'cuda'.*training on the CPU instead"):
        assert torch_device("cuda") == "cpu"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert torch_device("cpu") == "cpu"


def test_leftover_temporary_and_corrupt_snapshots_are_skipped(tmp_path):
    folder = tmp_path / "snapshots"
    state = {"w": np.ones((2, 3), np.float32)}
    for step in (100, 200, 300):
        callbacks.save_snapshot(folder, step, state)
    (folder / "step_400.tmp.npz").write_bytes(b"half a file")  # a kill during an older save
    (folder / "step_500.npz.tmp").write_bytes(b"half a file")
    (folder / "step_300.npz").write_bytes(b"\x00" * 10)  # damaged
    (folder / "step_250.npz").write_bytes(np.zeros(3).tobytes())  # not a zip at all
    with pytest.warns(CheckpointWarning) as said:
        loaded = callbacks.load_snapshots(folder, window=2)
    assert [name for name, _ in loaded] == ["step_100", "step_200"]
    assert [str(w.message).split("/")[-1] for w in said] == [
        "step_300.npz is corrupt (not a NumPy .npz archive); skipped",
        "step_250.npz is corrupt (not a NumPy .npz archive); skipped",
    ]
    callbacks.save_snapshot(folder, 600, {"w": np.ones((4, 3), np.float32)})
    with pytest.warns(CheckpointWarning) as said:
        loaded = callbacks.load_snapshots(folder, window=5, shapes={"w": (2, 3)})
    assert [name for name, _ in loaded] == ["step_100", "step_200"]
    assert "step_600.npz does not fit the learner's network" in str(said[0].message)


def test_a_full_disk_during_training_names_the_file_and_the_checkpoint_to_resume(
    monkeypatch, capsys, tmp_path
):
    real_savez = np.savez

    def savez(file, *args, **kwargs):
        if "256" in str(getattr(file, "name", file)):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_savez(file, *args, **kwargs)

    monkeypatch.setattr(np, "savez", savez)
    run = tmp_path / "run"
    err = one_line_error(capsys, ["--config", CHICKEN, "--out", str(run), *TINY], status=1)
    assert "No space left on device" in err and "step_256.npz" in err
    assert f"the newest complete checkpoint is {run / 'checkpoints' / 'step_128'}" in err
    assert f"continue with: fowlplay-train --resume {run}" in err
    leftovers = [p.name for p in run.rglob("*.tmp")]
    assert leftovers == []  # the half-written file was removed, freeing its space


def test_a_stop_signal_waits_for_the_file_being_written_and_a_second_one_is_ignored():
    import os
    import signal

    from fowlplay.training.loop import Stop, StopSignals

    before = signal.getsignal(signal.SIGINT)
    written = []
    with StopSignals() as signals:
        with pytest.raises(Stop) as stop, signals.hold():
            os.kill(os.getpid(), signal.SIGTERM)  # arrives in the middle of a write
            written.append("checkpoint")  # ... which still finishes
        assert written == ["checkpoint"] and stop.value.signum == signal.SIGTERM
        os.kill(os.getpid(), signal.SIGINT)  # a second signal while stopping: ignored
        with signals.hold():
            written.append("again")
        assert written == ["checkpoint", "again"]
    assert signal.getsignal(signal.SIGINT) is before
    with StopSignals(), pytest.raises(Stop):
        os.kill(os.getpid(), signal.SIGINT)  # outside a write: stops at once
        written.append("never")
    assert written[-1] == "again"


def test_a_permission_error_names_the_newest_checkpoint_and_gives_no_disk_advice(
    monkeypatch, capsys, tmp_path
):
    run = tmp_path / "run"
    assert (
        main(
            [
                "--config",
                CHICKEN,
                "--out",
                str(run),
                *TINY,
                "--set",
                "eval_every=128",
                "--set",
                "eval_games=2",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert (run / "best.json").exists() and (run / "final.json").exists()
    real_savez = np.savez

    def savez(file, *args, **kwargs):
        if "384" in str(getattr(file, "name", file)):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_savez(file, *args, **kwargs)

    monkeypatch.setattr(np, "savez", savez)
    err = one_line_error(
        capsys, ["--resume", str(run), "--total-timesteps", "512", "--no-progress"], status=1
    )
    assert "Permission denied" in err and "free some space" not in err
    # final (256 decisions) is newer than best (128 or 256, by its score): --resume goes on from final.
    assert (
        f"the newest complete checkpoint is {run / 'final'}: once that is fixed, continue with: fowlplay-train --resume {run}"
        in err
    )


def test_a_run_whose_files_are_not_vouched_for_needs_the_flag_in_one_line(capsys, tmp_path):
    run = tmp_path / "run"
    assert main(["--config", CHICKEN, "--out", str(run), *TINY]) == 0
    capsys.readouterr()
    (run / "files.json").unlink()  # as a run of an older fowlplay, or a folder from elsewhere
    err = one_line_error(
        capsys, ["--resume", str(run), "--total-timesteps", "384", "--no-progress"], status=1
    )
    assert "has no files.json" in err and "resume with --trust-checkpoint" in err
    argv = ["--resume", str(run), "--total-timesteps", "384", "--no-progress", "--trust-checkpoint"]
    assert main(argv) == 0
    err = one_line_error(capsys, ["--config", CHICKEN, "--out", str(tmp_path / "new"), "--trust-checkpoint"])
    assert "--trust-checkpoint is for --resume" in err


def test_list_keys_into_a_pipe_closed_early_ends_quietly():
    """`fowlplay-train --list-keys | head`: the reader leaves before the table is written; no traceback."""
    import subprocess
    import sys

    child = subprocess.Popen(
        [sys.executable, "-m", "fowlplay.training.cli", "--list-keys"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    child.stdout.close()  # before the child has imported anything: its first write meets a closed pipe
    _, err = child.communicate(timeout=120)
    assert "Traceback" not in err.decode(), err.decode()
    assert "BrokenPipeError" not in err.decode()
    assert child.returncode == 0
