"""Small card and deck helpers; every draw takes the generator it must use."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def shuffled(cards: Sequence[int], rng: np.random.Generator) -> list[int]:
    """A new list with `cards` in random order drawn from `rng`."""
    order = rng.permutation(len(cards)).tolist()  # Python ints index a list faster than numpy ints
    return [cards[i] for i in order]


def counts(cards: Sequence[int], num_kinds: int) -> np.ndarray:
    """How many of each card kind 0..num_kinds-1 a collection holds."""
    return np.bincount(np.asarray(cards, dtype=np.int64), minlength=num_kinds)[:num_kinds]
