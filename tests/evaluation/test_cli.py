"""The fowlplay-eval command on every registered game: its files, its figures and its errors."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest
from fowlplay import envs
from fowlplay.evaluation.cli import main

#: Matches per check: enough to separate baseline from random, few enough to stay fast.
MATCHES = 12
PNG = b"\x89PNG\r\n\x1a\n"


def run(tmp_path, game, *agents, matches=MATCHES, extra=()):
    out = tmp_path / game
    argv = ["--game", game, "--agents", *agents, "--matches", str(matches), "--out", str(out)]
    assert main([*argv, "--workers", "1", "--seed", "0", "--bootstrap", "100", "--no-progress", *extra]) == 0
    return out, json.loads((out / "summary.json").read_text())


def pair(summary, agent, opponent):
    return next(r for r in summary["pairwise"] if (r["agent"], r["opponent"]) == (agent, opponent))


@pytest.mark.parametrize("game", envs.ENV_NAMES)
def test_each_baseline_beats_random(tmp_path, game):
    _, summary = run(tmp_path, game, "random", "baseline")
    result = pair(summary, "baseline", "random")
    assert result["score_lo"] > 0.5, result
    ratings = {r["agent"]: r for r in summary["ratings"]}
    assert ratings["random"]["elo"] == 0.0 and ratings["random"]["anchor"]
    assert ratings["baseline"]["elo_lo"] > 0
    assert summary["games"]["illegal_actions"] == 0
    players = summary["config"]["players"]
    assert players == len(envs.make(game).possible_agents)
    assert ("openskill_mu" in ratings["baseline"]) == (players > 2)


@pytest.mark.parametrize("game", envs.ENV_NAMES)
def test_random_against_random_is_even_within_its_interval(tmp_path, game):
    _, summary = run(tmp_path, game, "random", "random")
    result = pair(summary, "random", "random#2")
    assert result["score_lo"] <= 0.5 <= result["score_hi"], result
    assert result["return_lo"] <= 0.0 <= result["return_hi"], result
    ratings = {r["agent"]: r for r in summary["ratings"]}
    assert ratings["random#2"]["elo_lo"] <= 0.0 <= ratings["random#2"]["elo_hi"]


def test_output_directory_holds_every_file(tmp_path):
    out, summary = run(tmp_path, "chicken_v1", "random", "baseline", matches=3, extra=["--players", "3"])
    rows = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(rows) == 3 * 6 == summary["games"]["games"]
    pairwise = list(csv.DictReader((out / "pairwise.csv").open()))
    assert [(r["agent"], r["opponent"]) for r in pairwise] == [("random", "baseline"), ("baseline", "random")]
    assert {"wins", "draws", "losses", "score", "score_lo", "score_hi", "mean_return", "seat2_score"} <= set(
        pairwise[0]
    )
    ratings = list(csv.DictReader((out / "ratings.csv").open()))
    assert [r["agent"] for r in ratings] == ["random", "baseline"] and "openskill_ordinal" in ratings[0]
    assert summary["seeds"]["deals"] == sorted(
        {r["deal_seed"] for r in rows}, key=summary["seeds"]["deals"].index
    )
    assert summary["versions"]["fowlplay"] == envs.__version__
    assert summary["command"].startswith(
        "fowlplay-eval --game chicken_v1 --players 3 --agents random baseline"
    )
    report = (out / "report.md").read_text()
    assert "## Pairwise results" in report and "| baseline | random |" in report and "OpenSkill" in report
    for png in ("pairwise_scores.png", "ratings.png"):
        assert (out / png).read_bytes().startswith(PNG)


def test_options_reach_the_game(tmp_path):
    _, summary = run(tmp_path, "chicken_v1", "random", "baseline", matches=2, extra=["--option", "target=20"])
    assert summary["config"]["options"] == {"target": 20}
    assert "--option target=20" in summary["command"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--agents", "random", "nobody"], "unknown agent spec 'nobody'"),
        (["--agents", "random", "ckpt:missing/run"], "no checkpoint at 'missing/run'"),
        (["--agents", "random"], "at least two agents"),
        (["--agents", "random", "baseline", "--players", "9"], "supports 2-4 players"),
        (["--agents", "random", "baseline", "--option", "colour=1"], "unknown option"),
    ],
)
def test_mistakes_are_clear_errors(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        main(["--game", "chicken_v1", "--out", str(tmp_path), "--no-progress", *argv])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    if "agent spec" in message or "checkpoint" in message:
        assert "accepted: random, baseline" in err


def test_console_command_runs_with_worker_processes(tmp_path):
    out = tmp_path / "eval"
    result = subprocess.run(
        [sys.executable, "-m", "fowlplay.evaluation.cli", "--game", "chicken_v1", "--agents", "random", "baseline",
         "--matches", "4", "--workers", "2", "--bootstrap", "50", "--out", str(out)],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    assert "baseline vs random: score" in result.stdout
    assert "8/8" in result.stderr  # the progress bar
    assert (out / "report.md").exists()
