"""Chance made explicit: generators that replay chosen outcomes, or record the outcomes drawn.

Every random draw of the engines goes through `envs.core.cards.shuffled` or `random_index`, which
hand the draw to a generator that is not numpy's. `Scripted` replays the outcomes it was given and,
when it has none left, raises `ChanceNeeded` naming the draw: the OpenSpiel state then becomes a
chance node. `Recorder` draws from a numpy generator exactly as the engine would and keeps what it
drew, so a seeded AEC game can be replayed through OpenSpiel's chance nodes.

A shuffle is a run of chance nodes: each draws the value of the next card (position 0 first) from
the cards not yet placed, value v with probability (copies of v left) / (cards left); the run stops
when every card left has one value. A random index (a card taken from a hand of n) is one node,
uniform over 0..n-1.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from fowlplay.envs.core.cards import random_index, shuffled


@dataclass(frozen=True)
class Draw:
    """One random draw of an engine: a shuffle of `cards`, or an index below `n` (cards empty)."""

    cards: tuple[int, ...] = ()
    n: int = 0

    @property
    def is_shuffle(self) -> bool:
        """True for a shuffle, False for a random index."""
        return self.n == 0


class ChanceNeeded(Exception):  # noqa: N818 - a request for an outcome, not an error
    """Raised by `Scripted` when the engine draws and no outcome is left to replay."""

    def __init__(self, draw: Draw) -> None:
        super().__init__(draw)
        self.draw = draw


class Scripted:
    """A generator whose outcomes are given: shuffle orders and indices, replayed in order."""

    def __init__(self, outcomes: Sequence) -> None:
        self.outcomes = outcomes
        self.used = 0

    def _next(self, draw: Draw):
        if self.used == len(self.outcomes):
            raise ChanceNeeded(draw)
        outcome = self.outcomes[self.used]
        self.used += 1
        return outcome

    def shuffle_cards(self, cards: Sequence[int]) -> list[int]:
        """The next outcome, as the list of `cards` in the chosen order."""
        order = self._next(Draw(cards=tuple(cards)))
        return arrange(cards, order)

    def choose_index(self, n: int) -> int:
        """The next outcome, an index below `n`."""
        return self._next(Draw(n=n))

    def __getattr__(self, name: str):
        # Only the two hooks may draw: anything else is an engine drawing around them.
        raise AttributeError(
            f"an engine used its generator's {name!r}: every chance event must go through "
            "envs.core.cards.shuffled or random_index for OpenSpiel to see it"
        )


class Recorder:
    """Draws from a numpy generator as the engine would, keeping each draw and its outcome."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        #: (draw, outcome) in order: a shuffle's outcome is the card values in order, an index an int.
        self.draws: list[tuple[Draw, tuple[int, ...] | int]] = []

    @property
    def bit_generator(self):
        """The wrapped generator's (so that `copy_rng` can copy a game holding a recorder)."""
        return self.rng.bit_generator

    def shuffle_cards(self, cards: Sequence[int]) -> list[int]:
        """`shuffled(cards, rng)`, recorded."""
        order = shuffled(cards, self.rng)
        self.draws.append((Draw(cards=tuple(int(c) for c in cards)), tuple(int(c) for c in order)))
        return order

    def choose_index(self, n: int) -> int:
        """`random_index(n, rng)`, recorded."""
        index = random_index(n, self.rng)
        self.draws.append((Draw(n=n), index))
        return index


def arrange(cards: Sequence[int], values: Sequence[int]) -> list[int]:
    """The objects of `cards` in the order of `values` (the same multiset of card values)."""
    pool: dict[int, list[int]] = {}
    for card in cards:
        pool.setdefault(int(card), []).append(card)
    try:
        return [pool[int(v)].pop() for v in values]
    except (KeyError, IndexError):
        raise ValueError(f"{list(values)} is no order of the cards {sorted(int(c) for c in cards)}") from None


def remaining(cards: Sequence[int], placed: Sequence[int]) -> Counter:
    """Copies of each value of `cards` not yet among `placed`."""
    left = Counter(int(c) for c in cards)
    left.subtract(int(v) for v in placed)
    return +left  # drops the values with no copy left


def complete(cards: Sequence[int], placed: Sequence[int]) -> tuple[int, ...] | None:
    """The whole order once `placed` leaves cards of at most one value, else None."""
    left = remaining(cards, placed)
    if len(left) > 1:
        return None
    rest = [v for v, c in left.items() for _ in range(c)]
    return (*placed, *rest)


def chance_actions(draw: Draw, outcome) -> list[int]:
    """The chance actions OpenSpiel takes to reach `outcome` of `draw` (see the module docstring)."""
    if not draw.is_shuffle:
        return [] if draw.n == 1 else [int(outcome)]
    actions: list[int] = []
    while complete(draw.cards, actions) is None:
        actions.append(int(outcome[len(actions)]))
    return actions
