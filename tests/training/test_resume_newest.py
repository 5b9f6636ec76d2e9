"""A resume goes on from the run's newest checkpoint, never from its best one.

The run below evaluates best at 128 decisions and ends at 256, so `best` and `final` differ: a resume
that loaded `best` would still reach the asked total, so the final count alone proves nothing. These
tests look at where the resumed learner stood: its weights, and the decisions it counted from.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
from fowlplay.training import ladder, loop
from fowlplay.training.checkpoint import read_metadata
from fowlplay.training.cli import main
from fowlplay.training.config import from_dict
from fowlplay.training.train import RunFinished, resume, train

TINY = {
    "game": "chicken_v1",
    "total_timesteps": 256,
    "n_envs": 2,
    "vec_env": "dummy",
    "checkpoint_every": 0,
    "eval_every": 128,
    "eval_games": 4,
    "progress_bar": False,
    "tensorboard": False,
    "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1, "net_arch": [16]},
    "opponents": {"snapshot_every": 128},
}
#: The ladder's scores, scripted: the first evaluation (at 128) is the best; every later one scores less.
FIRST, LATER = {"random": 0.9, "baseline": 0.5}, {"random": 0.2, "baseline": 0.1}


def scripted_ladder(monkeypatch) -> None:
    calls = []

    def scores(aec, policy, games):
        calls.append(None)
        return FIRST if len(calls) == 1 else LATER

    # where the run loop looks the scores up (its module imports the name) and where they are defined
    for module in (ladder, loop):
        if hasattr(module, "ladder_scores"):
            monkeypatch.setattr(module, "ladder_scores", scores)


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A finished 256-decision PPO run whose best checkpoint is its first evaluation's, at 128."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        scripted_ladder(monkeypatch)
        out = tmp_path_factory.mktemp("runs") / "ppo"
        train(from_dict({**TINY, "out": str(out)}), verbose=False)
    best, final = read_metadata(out / "best"), read_metadata(out / "final")
    assert (best["timesteps"], final["timesteps"]) == (128, 256)
    assert best["policy"]["weights_sha256"] != final["policy"]["weights_sha256"]
    return out


@pytest.fixture
def run(made, tmp_path, monkeypatch) -> Path:
    scripted_ladder(monkeypatch)
    copy = tmp_path / "run"
    shutil.copytree(made, copy)  # a copied run stays vouched for: its record holds contents, not paths
    return copy


def evaluated_at(run: Path) -> list[int]:
    with open(run / "evaluation.csv", newline="") as handle:
        return [int(row["timesteps"]) for row in csv.DictReader(handle)]


def files_of(run: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(path.relative_to(run)): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(run.rglob("*"))
        if path.is_file()
    }


def test_a_finished_run_resumed_says_so_in_one_line_and_writes_nothing(run, capsys):
    before = files_of(run)
    with pytest.raises(RunFinished, match="is finished: its final checkpoint holds 256 decisions"):
        resume(run, {"total_timesteps": 256}, verbose=False)
    # No evaluation again (no row in evaluation.csv), no log, config.yaml and the final untouched;
    # vouching for the folder records nothing either.
    with pytest.raises(RunFinished):
        resume(run, verbose=False, trust_checkpoint=True)
    assert files_of(run) == before
    assert main(["--resume", str(run)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        f"fowlplay-train: {run} is finished: its final checkpoint holds 256 decisions of "
        "total_timesteps 256; nothing was done (raise --total-timesteps to train it further)"
    ]
    assert files_of(run) == before


def test_a_resume_counts_on_from_the_newest_checkpoints_decisions(run):
    before = evaluated_at(run)
    assert before == [128, 256, 256]
    result = resume(run, {"total_timesteps": 384}, verbose=False)
    assert result.timesteps == 384 and read_metadata(run / "final")["timesteps"] == 384
    # It resumed at 256: its own log is named so, and it evaluated only past 256.
    assert sorted(p.name for p in (run / "logs").glob("progress_resumed_*.csv")) == [
        "progress_resumed_256.csv"
    ]
    after = evaluated_at(run)
    assert after[: len(before)] == before
    assert after[len(before) :] and all(steps > 256 for steps in after[len(before) :]), after
    # The best checkpoint is still the one of 128 decisions: later evaluations scored less.
    assert read_metadata(run / "best")["timesteps"] == 128
