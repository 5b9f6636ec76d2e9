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
            "chicken_v0",
            "--training",
            "--training-decisions",
            "256",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert "| game | busy processes | training decisions/s | env AEC decisions/s |" in result.stdout
    training = json.loads(out.read_text())["training"]
    assert [row["load"] for row in training] == [0, 2]
    assert all(row["decisions"] >= 256 and row["decisions_per_s"] > 0 for row in training)
