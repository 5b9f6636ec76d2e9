"""Argument types shared by the command-line tools of `evaluation/`."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def integer(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer from `low` (to `high`, when given), or a message naming the range."""

    def parse(text: str) -> int:
        bound = f">= {low}" if high is None else f"in {low}..{high}"
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer {bound}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be an integer {bound}, got {value}")
        return value

    return parse
