"""Golden playthroughs: every game at every player count, regenerated and diffed against the files.

After an intended change to rules or encodings, rewrite them with `make playthroughs` and read
the diff before committing it.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from fowlplay.envs.core.playthrough import cases, filename, playthrough

FOLDER = Path(__file__).resolve().parent / "playthroughs"


@pytest.mark.parametrize(("name", "n"), cases(), ids=[f"{name}-{n}p" for name, n in cases()])
def test_playthrough_matches_the_golden_file(name, n):
    path = FOLDER / filename(name, n)
    assert path.exists(), f"{path.name} is missing: run `make playthroughs` and commit it"
    expected = path.read_text()
    actual = playthrough(name, n)
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(), actual.splitlines(), "golden", "now", n=2, lineterm=""
        )
        shown = "\n".join(list(diff)[:60])
        pytest.fail(
            f"{path.name} differs from a fresh playthrough (an unintended rules or encoding change? "
            f"if intended, `make playthroughs`):\n{shown}"
        )


def test_every_golden_file_belongs_to_a_game():
    expected = {filename(name, n) for name, n in cases()}
    assert {p.name for p in FOLDER.glob("*.txt")} <= expected
