"""Trivial probe policies: one-line strategies a baseline (or any agent) must beat.

A probe is an agent spec, `probe:NAME`, usable wherever a spec is (`fowlplay-eval --agents`,
`fowlplay-exploit`, a league's ladder). Every game has

    first          the legal action with the lowest id
    last           the legal action with the highest id
    random         uniformly random among the legal actions
    BLOCK          for each block of the game's `ActionLayout` (`pass`, `stop`, `murder`, ...):
                   a uniformly random legal action of that block whenever one is legal, else a
                   uniformly random legal action ("always pass", "always stop", ...)

and a game may add its own (`GAME_PROBES`): Chicken's `raise-by-one` (outbid by one, pass only
when no bid is left: the staller that drew every capped game), `bid-max` (always the highest bid)
and Crows' `never-score` (random, but never scores a pile). `probe_names(game)` lists them.
Probes see only their own observation's action mask, and draw their random numbers from their
own generator, reseeded by `reset(seed)`: a seeded game is the same game every time.

How a baseline does against each probe (the probe table, and its command) is
`evaluation.probes`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from fowlplay import envs
from fowlplay.envs.core.actions import ActionLayout
from fowlplay.envs.core.agents import Agent

#: Probes every game has (besides one per action block).
COMMON_PROBES = ("first", "last", "random")


class ProbeError(ValueError):
    """A probe name the game does not have."""


def _legal(action_mask: np.ndarray) -> np.ndarray:
    legal = np.flatnonzero(action_mask)
    if legal.size == 0:
        raise ValueError("the action mask is empty: this probe has no decision to make")
    return legal


class ProbeAgent(Agent):
    """A trivial policy: `choose(legal action ids, rng)` picks one of the legal actions."""

    def __init__(
        self, name: str, choose: Callable[[np.ndarray, np.random.Generator], int], seed=None
    ) -> None:
        self.name = f"probe:{name}"
        self._choose = choose
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the probe's own generator."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The probe's legal action."""
        return int(self._choose(_legal(action_mask), self.rng))


def _first(legal: np.ndarray, rng: np.random.Generator) -> int:
    return legal[0]


def _last(legal: np.ndarray, rng: np.random.Generator) -> int:
    return legal[-1]


def _uniform(legal: np.ndarray, rng: np.random.Generator) -> int:
    return legal[rng.integers(legal.size)]


def _preferring(start: int, stop: int) -> Callable[[np.ndarray, np.random.Generator], int]:
    """Random among the legal ids in [start, stop) when there are any, else random among all."""

    def choose(legal: np.ndarray, rng: np.random.Generator) -> int:
        inside = legal[(legal >= start) & (legal < stop)]
        return _uniform(inside if inside.size else legal, rng)

    return choose


def _avoiding(ids: tuple[int, ...]) -> Callable[[np.ndarray, np.random.Generator], int]:
    """Random among the legal ids not in `ids` when there are any, else random among all."""

    def choose(legal: np.ndarray, rng: np.random.Generator) -> int:
        outside = legal[~np.isin(legal, ids)]
        return _uniform(outside if outside.size else legal, rng)

    return choose


def _raise_by_one(legal: np.ndarray, rng: np.random.Generator) -> int:
    # Chicken: id 0 passes, id k bids k, and the legal bids are current + 1 and up.
    bids = legal[legal > 0]
    return bids[0] if bids.size else 0


def _chicken_probes(layout: ActionLayout) -> dict[str, Callable]:
    return {"raise-by-one": _raise_by_one, "bid-max": _last}


def _crows_probes(layout: ActionLayout) -> dict[str, Callable]:
    return {"never-score": _avoiding((layout["score_run"].start, layout["score_set"].start))}


#: Probes a game adds to the common ones, from its action layout (keyed by the rules' family).
GAME_PROBES: dict[str, Callable[[ActionLayout], dict[str, Callable]]] = {
    "chicken": _chicken_probes,
    "crows": _crows_probes,
}


def _family(game: str) -> str:
    """`chicken` for chicken_v0 / chicken_v1, ...: the package holding the game's rules."""
    return envs.env_module(game).raw_env.__module__.split(".")[-2]


def _layout(game: str, options=None) -> ActionLayout:
    raw = envs.env_module(game).raw_env
    if options is None:
        options = raw.options_cls()
    return raw.game_cls.action_layout(options)


def _policies(game: str, options=None) -> dict[str, Callable]:
    layout = _layout(game, options)
    policies: dict[str, Callable] = {"first": _first, "last": _last, "random": _uniform}
    for block in layout.blocks:
        policies[block.name] = _preferring(block.start, block.stop)
    extra = GAME_PROBES.get(_family(game))
    if extra is not None:
        policies.update(extra(layout))
    return policies


def probe_names(game: str) -> list[str]:
    """Every probe of `game`: first, last, random, one per action block, then the game's own."""
    return list(_policies(game))


def make_probe(game: str, name: str, options=None, seed: int | None = None) -> ProbeAgent:
    """The probe `name` for `game` (with the env's rule options, which decide the action layout)."""
    policies = _policies(game, options)
    if name not in policies:
        raise ProbeError(f"{game} has no probe {name!r}; its probes: {', '.join(policies)}")
    return ProbeAgent(name, policies[name], seed)
