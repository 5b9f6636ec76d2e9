"""What an evaluation's files give their reader: the mode a new file usually gets (0o666 less the
umask) for every file fowlplay writes, those written whole through a temporary file (report.md,
summary.json, run.json, the CSVs, evaluation.csv, checkpoints) as much as the plots, which
matplotlib opens plainly; and a "Reproduce" command that runs by the name the user ran."""

from __future__ import annotations

import os
import stat
import sys

import pytest
from fowlplay.envs.runtime.files import atomic_write, new_file_mode
from fowlplay.evaluation import report
from fowlplay.evaluation.agents import parse_specs
from fowlplay.evaluation.matches import EvalConfig
from fowlplay.evaluation.tournament import command_line


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_files_written_whole_get_a_new_files_usual_mode(tmp_path, umask):
    old = os.umask(umask)
    try:
        with open(tmp_path / "plot.png", "wb"):  # as matplotlib's savefig opens a plot
            pass
        report.write_text(tmp_path / "report.md", "# Evaluation\n")
        report.write_json(tmp_path / "summary.json", {"games": 1})
        report.write_csv(tmp_path / "pairwise.csv", [{"agent": "a", "score": 0.5}])
        atomic_write(tmp_path / "evaluation.csv", lambda handle: handle.write(b"timesteps\n"))
        modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in tmp_path.iterdir()}
        assert new_file_mode() == 0o666 & ~umask
    finally:
        os.umask(old)
    assert modes == dict.fromkeys(modes, 0o666 & ~umask) and len(modes) == 5, modes


def test_reproduce_runs_by_the_path_the_evaluation_was_run_by(monkeypatch, tmp_path):
    config = EvalConfig("chicken_v1", tuple(parse_specs(["random", "baseline"])), 100, 2)
    monkeypatch.setenv("PATH", os.defpath)  # make demo's .venv/bin is not on it
    monkeypatch.setattr(sys, "argv", [".venv/bin/fowlplay-eval", "--game", "chicken_v1"])
    assert command_line(config, tmp_path).startswith(".venv/bin/fowlplay-eval --game chicken_v1 ")
    monkeypatch.setattr(sys, "argv", ["/somewhere/fowlplay-league"])  # a league's evaluations
    assert command_line(config, tmp_path).startswith("fowlplay-eval --game chicken_v1 ")
