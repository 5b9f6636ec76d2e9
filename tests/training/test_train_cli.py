"""`fowlplay-train` end to end, in subprocesses: short runs, resume, Ctrl-C, and clear errors."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.core.testing import play
from fowlplay.training.agent import PolicyAgent
from fowlplay.training.checkpoint import load_checkpoint, read_metadata

ROOT = Path(__file__).resolve().parents[2]
#: Tiny settings: a run of 256 timesteps takes seconds, yet snapshots and checkpoints happen.
TINY = [
    "--n-envs", "2",
    "--set", "ppo.n_steps=64",
    "--set", "ppo.batch_size=64",
    "--set", "ppo.n_epochs=1",
    "--set", "ppo.net_arch=[16]",
    "--set", "opponents.snapshot_every=128",
    "--set", "checkpoint_every=128",
    "--set", "eval_games=4",
    "--no-progress",
    "--set", "vec_env=subproc",  # the configs run in-process; these runs cover subprocess workers
]  # fmt: skip

pytestmark = pytest.mark.slow


def fowlplay_train(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fowlplay.training.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def short_run(game: str, out: Path, *extra: str) -> subprocess.CompletedProcess:
    config = ROOT / "configs" / f"{game}.yaml"
    return fowlplay_train(
        "--config", str(config), "--out", str(out), "--total-timesteps", "256", *TINY, *extra
    )


def progress_rows(path: Path) -> list[dict[str, str]]:
    with open(path) as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def chicken_run(tmp_path_factory) -> Path:
    """A finished 256-timestep Chicken run in subprocess workers (copy it before changing it)."""
    out = tmp_path_factory.mktemp("runs") / "chicken"
    result = short_run("chicken_v1", out)
    assert result.returncode == 0, result.stderr
    return out


@pytest.mark.parametrize("game", envs.ENV_NAMES)
def test_short_run_writes_a_loadable_checkpoint(game, tmp_path, chicken_run):
    out = chicken_run if game == "chicken_v1" else tmp_path / game
    if game != "chicken_v1":
        # In-process environments: the Chicken run and the Ctrl-C test cover subprocess workers.
        result = short_run(game, out, "--set", "vec_env=dummy")
        assert result.returncode == 0, result.stderr
    assert (out / "config.yaml").exists()
    periodic = sorted(p.name for p in (out / "checkpoints").iterdir())
    assert periodic == [f"step_{n}.{ext}" for n in (128, 256) for ext in ("json", "npz", "zip")]
    assert sorted(p.name for p in (out / "snapshots").iterdir()) == ["step_128.npz", "step_256.npz"]
    metadata = read_metadata(out / "final")
    assert (metadata["game"], metadata["timesteps"], metadata["kind"]) == (game, 256, "final")
    assert metadata["config"]["total_timesteps"] == 256 and metadata["config"]["ppo"]["n_steps"] == 64
    # Logs: CSV with the per-opponent win rates, and TensorBoard events.
    rows = progress_rows(out / "logs" / "progress.csv")
    assert int(rows[-1]["time/total_timesteps"]) == 256
    assert any(key.startswith("selfplay/win_rate_") for key in rows[-1])
    assert list((out / "logs").glob("events.out.tfevents.*"))
    # The checkpoint plays the game of env_options (reward_options shape training only), and only it.
    env = envs.make(game, **metadata["config"]["env_options"])
    agent = PolicyAgent.from_checkpoint(out, env=env, seed=0)
    env.reset(seed=0)
    decisions = sum(1 for _ in play(env, lambda a, o: agent.act(o["observation"], o["action_mask"])))
    assert decisions > 0 and env.agents == []


def test_resume_continues_to_the_new_total(chicken_run, tmp_path):
    run = tmp_path / "moved"
    shutil.copytree(chicken_run, run)  # a run continues where it is now, even if it was moved
    first, _ = load_checkpoint(run)
    result = fowlplay_train(
        "--resume", str(run), "--total-timesteps", "384", "--no-progress", "--set", "vec_env=dummy"
    )
    assert result.returncode == 0, result.stderr
    assert "resuming from" in result.stdout and "at step 256" in result.stdout
    metadata = read_metadata(run / "final")
    assert (metadata["timesteps"], metadata["kind"]) == (384, "final")
    assert metadata["config"]["out"] == str(run) and metadata["config"]["total_timesteps"] == 384
    resumed = progress_rows(run / "logs" / "progress_resumed_256.csv")
    assert int(resumed[-1]["time/total_timesteps"]) == 384
    assert int(progress_rows(run / "logs" / "progress.csv")[-1]["time/total_timesteps"]) == 256
    model, _ = load_checkpoint(run)
    assert model.num_timesteps == 384
    # It learned on: the weights moved away from the checkpoint it resumed from.
    before = first.policy.state_dict()["action_net.weight"].numpy()
    assert not np.allclose(model.policy.state_dict()["action_net.weight"].numpy(), before)


def stop_a_long_run(out: Path, *signals: signal.Signals, extra: tuple[str, ...] = ()) -> tuple[int, str]:
    """Start a long run, wait until it has logged twice, send `signals` to its process group (as a
    terminal's Ctrl-C or `timeout` does), and return its exit status and stderr."""
    config = ROOT / "configs" / "chicken_v1.yaml"
    command = [sys.executable, "-m", "fowlplay.training.cli", "--config", str(config), "--out", str(out)]
    command += ["--total-timesteps", "10000000", *TINY, "--set", "checkpoint_every=0", *extra]
    proc = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 90
        progress = out / "logs" / "progress.csv"
        while not (progress.exists() and len(progress_rows(progress)) >= 2):
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "training did not log within 90 s"
            time.sleep(0.2)
        for signum in signals:
            os.killpg(proc.pid, signum)
            time.sleep(0.05)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, stderr


def test_ctrl_c_saves_a_checkpoint_that_resumes(tmp_path):
    out = tmp_path / "interrupted"
    returncode, stderr = stop_a_long_run(out, signal.SIGINT)
    assert returncode == 130, stderr
    assert "interrupted; saved" in stderr and "Traceback" not in stderr
    assert f"Continue with: fowlplay-train --resume {out}" in stderr
    saved = sorted((out / "checkpoints").glob("step_*.json"))
    assert len(saved) == 1 and not (out / "final.zip").exists()
    metadata = json.loads(saved[0].read_text())
    assert metadata["kind"] == "periodic" and metadata["timesteps"] >= 128
    model, _ = load_checkpoint(out)
    assert model.num_timesteps == metadata["timesteps"]
    target = str(metadata["timesteps"] + 128)
    result = fowlplay_train(
        "--resume", str(out), "--total-timesteps", target, "--no-progress", "--set", "vec_env=dummy"
    )
    assert result.returncode == 0, result.stderr
    assert read_metadata(out / "final")["timesteps"] >= int(target)


def test_existing_run_needs_resume_or_overwrite(chicken_run):
    result = short_run("chicken_v1", chicken_run)
    assert result.returncode == 2
    assert (
        "already holds a run" in result.stderr
        and "--resume" in result.stderr
        and "--overwrite" in result.stderr
    )


def test_resume_errors_are_clear(chicken_run, tmp_path):
    result = fowlplay_train("--resume", str(tmp_path / "nowhere"))
    assert result.returncode == 1 and "nowhere does not exist" in result.stderr
    run = tmp_path / "broken"
    shutil.copytree(chicken_run, run)
    (run / "final.zip").write_bytes(b"\x00" * 100)
    result = fowlplay_train("--resume", str(run), "--no-progress")
    assert result.returncode == 1 and "final.zip is corrupt" in result.stderr
    assert "Traceback" not in result.stderr
    result = fowlplay_train("--resume", str(run), "--seed", "3")
    assert result.returncode == 2 and "seed cannot change" in result.stderr


def test_sigterm_saves_a_checkpoint_like_ctrl_c(tmp_path):
    out = tmp_path / "terminated"
    returncode, stderr = stop_a_long_run(out, signal.SIGTERM)  # what `timeout` sends to the group
    assert returncode == 143, stderr
    assert stderr.strip().splitlines()[-1].startswith("fowlplay-train: stopped by SIGTERM; saved ")
    assert "Traceback" not in stderr
    (saved,) = sorted((out / "checkpoints").glob("step_*.json"))
    assert json.loads(saved.read_text())["kind"] == "periodic"


def test_a_double_ctrl_c_still_saves_once_and_says_so_in_one_line(tmp_path):
    out = tmp_path / "twice"
    returncode, stderr = stop_a_long_run(out, signal.SIGINT, signal.SIGINT, extra=("--set", "vec_env=dummy"))
    assert returncode == 130, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("fowlplay-train: interrupted; saved ") and "Traceback" not in stderr
    (saved,) = sorted((out / "checkpoints").glob("step_*.json"))
    assert read_metadata(saved)["kind"] == "periodic"
    assert not list(out.rglob("*.tmp"))


def test_resume_keeps_the_network_and_changes_nothing_before_loading(chicken_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(chicken_run, run)
    before = (run / "config.yaml").read_text()
    for setting, message in [
        ("ppo.net_arch=[32]", "ppo.net_arch is [16] in"),
        ("ppo.activation=relu", "ppo.activation is 'tanh' in"),
    ]:
        result = fowlplay_train("--resume", str(run), "--set", setting, "--no-progress")
        assert result.returncode == 2 and message in result.stderr and "cannot become" in result.stderr
        assert (run / "config.yaml").read_text() == before
    # A run whose config.yaml an older version rewrote still resumes, with the model's own network.
    (run / "config.yaml").write_text(before.replace("activation: tanh", "activation: relu"))
    # A kill during a snapshot save left a temporary file; a damaged snapshot is skipped with a warning.
    (run / "snapshots" / "step_300.tmp.npz").write_bytes(b"half")
    (run / "snapshots" / "step_200.npz").write_bytes(b"damaged")
    result = fowlplay_train(
        "--resume", str(run), "--total-timesteps", "384", "--no-progress", "--set", "vec_env=dummy",
        "--set", "ppo.learning_rate=1e-5",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "says ppo.activation 'relu', but the model" in result.stderr
    assert "snapshot" in result.stderr and "step_200.npz is corrupt" in result.stderr
    assert "Traceback" not in result.stderr
    assert "activation: tanh" in (run / "config.yaml").read_text()
    model, metadata = load_checkpoint(run)
    assert metadata["timesteps"] == 384 and metadata["config"]["ppo"]["activation"] == "tanh"
    assert model.learning_rate == 1e-5 and metadata["config"]["ppo"]["learning_rate"] == 1e-5


def _workers(pgid: int, trainer: int) -> list[int]:
    """The subprocess workers of a run: processes of its group that are not the trainer or the
    forkserver and resource tracker it started."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == trainer:
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and int(fields[1]) != trainer:  # the forkserver's children
            found.append(int(entry.name))
    return found


def test_a_killed_worker_or_two_quick_sigterms_print_no_worker_traceback(tmp_path):
    returncode, stderr = stop_a_long_run(tmp_path / "twice", signal.SIGTERM, signal.SIGTERM)
    assert returncode == 143 and "Traceback" not in stderr and "Broken pipe" not in stderr, stderr
    # A worker killed mid-run (the OOM killer, say): one line naming it, a checkpoint saved, no hang.
    out = tmp_path / "killed"
    config = ROOT / "configs" / "chicken_v1.yaml"
    command = [sys.executable, "-m", "fowlplay.training.cli", "--config", str(config), "--out", str(out)]
    command += ["--total-timesteps", "10000000", *TINY, "--set", "checkpoint_every=0"]
    proc = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 90
        progress = out / "logs" / "progress.csv"
        while not (progress.exists() and len(progress_rows(progress)) >= 2):
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "training did not log within 90 s"
            time.sleep(0.2)
        (worker, *_) = _workers(proc.pid, proc.pid)
        os.kill(worker, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1 and "Traceback" not in stderr, stderr
    (line,) = [line for line in stderr.splitlines() if line.strip()]
    assert line.startswith(
        f"fowlplay-train: error: an environment worker died (pid {worker} (killed by SIGKILL))"
    )
    assert (
        f"; saved {out / 'checkpoints'}" in line and f"continue with: fowlplay-train --resume {out}" in line
    )
