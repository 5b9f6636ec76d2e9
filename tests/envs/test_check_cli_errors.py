"""fowlplay-check: a bad --seed or --json is a usage error of one line, before any check runs."""

from __future__ import annotations

import json

import pytest
from fowlplay.evaluation.check_cli import USAGE_ERROR, main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--seed", "-1"], "argument --seed: -1 is not a seed: give an integer from 0 to 2**63 - 1"),
        (["--seed", "x"], "argument --seed: 'x' is not an integer"),
        (["--json", "{missing}/report.json"], "the folder {missing} does not exist"),
        (["--json", "{tmp}"], "is a folder; give the path of the file to write"),
    ],
)
def test_a_bad_seed_or_json_path_is_one_line_before_the_checks_run(tmp_path, capsys, argv, message):
    where = {"missing": str(tmp_path / "missing"), "tmp": str(tmp_path)}
    with pytest.raises(SystemExit) as exit_info:
        main(["chicken_v0", *(a.format(**where) for a in argv)])
    assert exit_info.value.code == USAGE_ERROR
    captured = capsys.readouterr()
    assert captured.out == ""  # no check ran
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("fowlplay-check: error: ") and message.format(**where) in line


def test_a_seed_of_zero_checks_a_correct_env_cleanly_and_writes_the_report(tmp_path, capsys):
    report = tmp_path / "report.json"
    assert (
        main(["chicken_v1", "--games", "3", "--exact-decisions", "2", "--seed", "0", "--json", str(report)])
        == 0
    )
    assert json.loads(report.read_text())["results"]
    assert capsys.readouterr().err == ""
