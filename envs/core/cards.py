"""Small card and deck helpers; every draw takes the generator it must use.

Every chance event of the engines goes through `shuffled` or `random_index`. A generator that is
not numpy's may take over the draw through a hook (`shuffle_cards(cards)`, `choose_index(n)`):
the OpenSpiel adapter (`fowlplay.envs.openspiel`) uses it to make chance explicit and to replay
chosen outcomes. Numpy generators take the usual path, so seeded games are unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_GENERATOR = np.random.Generator


def shuffled(cards: Sequence[int], rng: np.random.Generator) -> list[int]:
    """A new list with `cards` in random order drawn from `rng`."""
    if type(rng) is not _GENERATOR:  # a scripted generator (the OpenSpiel adapter) picks the order
        return rng.shuffle_cards(cards)
    order = rng.permutation(len(cards)).tolist()  # Python ints index a list faster than numpy ints
    return [cards[i] for i in order]


def random_index(n: int, rng: np.random.Generator) -> int:
    """A uniform index in 0..n-1 drawn from `rng` (a card taken at random from a hand of `n`)."""
    if type(rng) is not _GENERATOR:
        return rng.choose_index(n)
    return int(rng.integers(n))


def counts(cards: Sequence[int], num_kinds: int) -> np.ndarray:
    """How many of each card kind 0..num_kinds-1 a collection holds."""
    return np.bincount(np.asarray(cards, dtype=np.int64), minlength=num_kinds)[:num_kinds]
