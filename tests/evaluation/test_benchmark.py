"""The benchmark command runs and writes valid JSON (figures are printed, never asserted on time)."""

from __future__ import annotations

import json
import subprocess
import sys

import envs


def test_bench_command_writes_a_table_and_valid_json(tmp_path):
    out = tmp_path / "bench.json"
    games = list(envs.ENV_NAMES)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "evaluation.benchmark",
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
