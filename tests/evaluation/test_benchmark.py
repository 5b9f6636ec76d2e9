"""The benchmark command runs and writes valid JSON (figures are printed, never asserted on time)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from fowlplay import envs


def test_bench_command_writes_a_table_and_valid_json(tmp_path):
    out = tmp_path / "bench.json"
    games = list(envs.ENV_NAMES)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "fowlplay.evaluation.benchmark",
            "--seconds",
            "0.05",
            "--json",
            str(out),
            "--games",
            *games,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "| game | players | AEC decisions/s" in result.stdout
    payload = json.loads(out.read_text())
    rows = {row["game"]: row for row in payload["rows"]}
    assert "pettingzoo:leduc_holdem_v4" in rows
    assert "rlcard:leduc-holdem" in rows  # every anchor of the dev install is in the same run
    assert "openspiel:leduc_poker (C++)" in rows
    assert payload["machine"]["cores"] >= 1
    for name in games:
        row = rows[name]
        assert row["default_players"] is True
        for key in (
            "aec_decisions_per_s",
            "engine_decisions_per_s",
            "resets_per_s",
            "clones_per_s",
            "resamples_per_s",
        ):
            assert row[key] > 0
        assert row["bytes_per_env"] > 0
        assert row["ratio_to_leduc"] > 0
        assert row["ratio_to_rlcard"] > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seconds", "nan"], "--seconds must be a positive finite number"),
        (["--seconds", "0"], "--seconds must be a positive finite number"),
        (["--players", "0"], "--players must be 'default', 'all' or a player count"),
        (["--players", "9"], "no game chosen supports --players 9"),
        (["--json", "/nonexistent-folder/b.json"], "its folder does not exist"),
        (["--rounds", "0"], "argument --rounds: must be an integer >= 1, got 0"),
        (["--rounds", "two"], "argument --rounds: must be an integer >= 1, got 'two'"),
    ],
)
def test_bad_arguments_are_one_line_errors_before_any_run(args, message):
    result = subprocess.run(
        [sys.executable, "-m", "fowlplay.evaluation.benchmark", "--seconds", "0.05", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert "| game |" not in result.stdout


@pytest.mark.slow
def test_training_figures_sit_beside_the_env_rate(tmp_path):
    out = tmp_path / "bench.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "fowlplay.evaluation.benchmark",
            "--seconds",
            "0.05",
            "--no-reference",
            "--games",
            "chicken_v1",
            "--training",
            "--training-decisions",
            "256",
            "--trainers",
            "ppo",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert "| game | trainer | busy processes | training decisions/s | x ppo (same load) |" in result.stdout
    training = json.loads(out.read_text())["training"]
    assert [row["load"] for row in training] == [0, 2]
    assert all(row["decisions"] >= 256 and row["decisions_per_s"] > 0 for row in training)


def test_figures_can_be_timed_on_cpu_time_for_a_busy_machine(tmp_path, capsys):
    from fowlplay.evaluation.benchmark import cli as benchmark

    out = tmp_path / "bench.json"
    argv = ["--seconds", "0.05", "--no-reference", "--games", "chicken_v1", "--clock", "cpu"]
    try:
        assert benchmark.main([*argv, "--json", str(out)]) == 0
    finally:
        benchmark.use_clock("wall")
    assert "clock: cpu (process CPU time)" in capsys.readouterr().out
    payload = json.loads(out.read_text())
    assert payload["clock"] == "cpu" and payload["rows"][0]["aec_decisions_per_s"] > 0
    with pytest.raises(ValueError, match="unknown clock 'sundial'"):
        benchmark.use_clock("sundial")


def test_rounds_keep_each_rows_fastest_figure_and_rate_against_the_fastest_anchor(monkeypatch, tmp_path):
    from fowlplay.evaluation.benchmark import cli as benchmark

    # Scripted re-measurements: the anchor's second round is its fastest, the game's third.
    again = {
        "pettingzoo:leduc_holdem_v4": iter([400.0, 100.0]),
        "chicken_v1": iter([50.0, 1e9]),
    }
    monkeypatch.setattr(benchmark, "aec_rate_again", lambda row, seconds: next(again[row["game"]]))
    monkeypatch.setattr(
        benchmark,
        "reference_rows",
        lambda seconds: [{"game": "pettingzoo:leduc_holdem_v4", "players": 2, "aec_decisions_per_s": 200.0}],
    )
    out = tmp_path / "bench.json"
    argv = ["--seconds", "0.02", "--games", "chicken_v1", "--rounds", "3", "--json", str(out)]
    assert benchmark.main(argv) == 0
    payload = json.loads(out.read_text())
    rows = {row["game"]: row for row in payload["rows"]}
    assert payload["rounds"] == 3
    assert rows["pettingzoo:leduc_holdem_v4"]["aec_decisions_per_s"] == 400.0
    assert rows["chicken_v1"]["aec_decisions_per_s"] == 1e9
    assert rows["chicken_v1"]["ratio_to_leduc"] == 1e9 / 400.0  # the best game over the best anchor
    assert all(next(rest, None) is None for rest in again.values())  # two more rounds each, no more


def test_a_real_second_round_measures_every_anchor_and_game_again():
    from fowlplay.evaluation.benchmark import aec as benchmark

    rows = [
        {"game": "pettingzoo:leduc_holdem_v4", "players": 2, "aec_decisions_per_s": 1.0},
        {"game": benchmark.RLCARD_LEDUC, "players": 2, "aec_decisions_per_s": 1.0},
        {"game": benchmark.OPENSPIEL_LEDUC, "players": 2, "aec_decisions_per_s": 1.0},
        {"game": "murray_frog_v0", "players": 4, "aec_decisions_per_s": 1.0},
    ]
    benchmark.keep_best_of_rounds(rows, rounds=2, seconds=0.02)
    assert all(row["aec_decisions_per_s"] > 1.0 and row["aec_rounds"] == 2 for row in rows)


def test_the_jax_training_bar_names_each_game_below_it_with_its_lowest_ratio():
    from fowlplay.evaluation.benchmark.cli import JAX_TRAINING_BAR, _jax_bar

    def row(game, trainer, load, rate):
        return {"game": game, "trainer": trainer, "load": load, "decisions_per_s": rate}

    fast = [row("a", "ppo", 0, 10.0), row("a", "jax", 0, 10.0 * JAX_TRAINING_BAR)]
    assert _jax_bar(fast) == "met"
    slow = [
        *fast,
        row("a", "ppo", 2, 10.0),
        row("a", "jax", 2, 40.0),
        row("b", "ppo", 0, 2.0),
        row("b", "jax", 0, 100.0),
    ]
    assert _jax_bar(slow) == "below it (lowest ratio): {'a': '4.0x'}"
    assert _jax_bar([row("a", "ppo", 0, 1.0)]).startswith("not measured")
