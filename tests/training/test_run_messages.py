"""What a run tells its user and writes once: one evaluation row per weights and count, a --set
mistake blamed on --set, commands printed by the name the user ran, and the run's two figures named
apart. None of these tests trains: the ladder's scores and the policy are scripted."""

from __future__ import annotations

import csv
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from fowlplay.envs.runtime.cli import invoked_as
from fowlplay.training import ladder, loop
from fowlplay.training.cli import _summary, main
from fowlplay.training.config import ConfigError, load_config
from fowlplay.training.loop import Evaluations, RunResult, StopSignals

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "chicken_v1.yaml"
W1, W2 = {"pi": np.zeros(3, np.float32)}, {"pi": np.ones(3, np.float32)}


@pytest.fixture
def evaluations(monkeypatch, tmp_path):
    """An `Evaluations` of a run in tmp_path whose ladder scores each call 0.1 higher than the last."""
    calls = []

    def scores(aec, policy, games):
        calls.append(None)
        return {"random": 0.1 * len(calls), "baseline": 0.0}

    monkeypatch.setattr(ladder, "ladder_scores", scores)
    monkeypatch.setattr(loop, "playing_policy", lambda aec, network, weights: None)
    config = load_config(CONFIG, {"eval_every": 100, "eval_games": 4})

    def make() -> Evaluations:
        return Evaluations(tmp_path, None, config, StopSignals(), lambda steps, weights, learning: None)

    return make


def rows(run: Path) -> list[tuple[int, str]]:
    with open(run / "evaluation.csv", newline="") as handle:
        return [(int(row["timesteps"]), row["score_random"]) for row in csv.DictReader(handle)]


def test_a_final_evaluation_at_a_periodic_ones_count_writes_no_second_row(evaluations, tmp_path):
    run = evaluations()
    run.evaluate(100, W1)
    run.evaluate(200, W1)
    # The final evaluation of the weights just scored at 200 (the jax trainer's case): no new row,
    # asked through evaluate_last or evaluate itself.
    run.evaluate_last(200, W1)
    run.evaluate(200, W1, learning=False)
    assert rows(tmp_path) == [(100, "0.1000"), (200, "0.2000")]
    # Weights changed by an update that took no new decisions (SB3's last) are scored, in their own row.
    run.evaluate_last(200, W2)
    assert rows(tmp_path) == [(100, "0.1000"), (200, "0.2000"), (200, "0.3000")]
    # A resumed session that took no update since evaluation.csv's newest row adds nothing to it.
    evaluations().evaluate_last(200, W2)
    assert rows(tmp_path)[-1] == (200, "0.3000") and len(rows(tmp_path)) == 3


@pytest.mark.parametrize(
    ("argv", "blamed"),
    [
        (["--set", "ppo.n_steps=abc"], "--set ppo.n_steps=abc: ppo.n_steps must be an int; got 'abc'"),
        (["--set", "eval_games=0", "--seed", "3"], "--set eval_games=0: eval_games must be > 0; got 0"),
        (["--total-timesteps", "-5"], "--total-timesteps -5: total_timesteps must be > 0; got -5"),
        # The valid keys the message lists name --out's key too: the key it is about comes first.
        (["--set", "nosuch=1"], "--set nosuch=1: unknown key 'nosuch'; valid keys: ['game'"),
    ],
)
def test_a_command_line_value_is_blamed_not_the_yaml_file(argv, blamed, tmp_path, capsys):
    assert main(["--config", str(CONFIG), "--out", str(tmp_path / "run"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"fowlplay-train: error: {blamed}") and str(CONFIG) not in err, err


def test_the_files_own_mistake_is_still_blamed_on_the_file(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text(CONFIG.read_text().replace("eval_games: 100", "eval_games: 0"))
    with pytest.raises(ConfigError, match=rf"^{broken}: eval_games must be > 0"):
        load_config(broken, {"seed": 3}, {"seed": "--seed 3"})


def test_a_printed_command_runs_by_the_name_the_user_ran(monkeypatch, tmp_path):
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "fowlplay-train"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", os.defpath)
    # After make demo: run as .venv/bin/fowlplay-train, which the bare name does not find.
    monkeypatch.setattr(sys, "argv", [".venv/bin/fowlplay-train", "--resume", "runs/x"])
    assert invoked_as("fowlplay-train") == ".venv/bin/fowlplay-train"
    # On PATH the shell hands Python the whole path; the bare name finds the same program.
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setattr(sys, "argv", [str(script)])
    assert invoked_as("fowlplay-train") == "fowlplay-train"
    # Another program (a test runner, python -m, a league running the trainer) prints the bare name.
    monkeypatch.setattr(sys, "argv", [str(tmp_path / "pytest")])
    assert invoked_as("fowlplay-train") == "fowlplay-train"


def test_the_run_summary_names_the_training_win_rate_apart_from_the_evaluation_score(tmp_path):
    best = {"timesteps": 100, "scores": {"baseline": 0.51, "random": 0.97}, "score": 0.74, "games": 100}
    result = RunResult(
        tmp_path, tmp_path / "final", 200, 9.0, {"random": 0.13}, False, {**best, "checkpoint": "b"}
    )
    won, scored = _summary(result).splitlines()
    assert "games won while training" in won and won.endswith("random 13%")
    assert "evaluation score of the best checkpoint (win 1, draw 0.5, loss 0; 100 games" in scored
    assert "vs random 0.970, vs baseline 0.510, at 100 timesteps" in scored
