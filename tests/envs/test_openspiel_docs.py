"""docs/openspiel.md's code blocks, run as written."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

pytest.importorskip("pyspiel")

PAGE = Path(__file__).resolve().parents[2] / "docs" / "openspiel.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)


def _run(code: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(PAGE), "exec"), {})
    return out.getvalue()


def test_the_loading_block_runs():
    printed = _run(_blocks()[0])
    assert printed.startswith("True [(0, 0.16666")


def test_the_cfr_plus_snippet_prints_a_nash_conv_below_a_hundredth():
    printed = _run(_blocks()[1])
    value = float(printed.split()[-1])
    assert 0.0 <= value < 0.01
