"""The alignment harness: a twin and its reference engine, stepped side by side, equal at every step.

Both engines start from the same deal (the reference's, converted by the twin's `from_reference`)
and take the same actions. Before every decision and after the game ends the harness compares
every player's observation (float32, bit for bit), the acting player, the legal mask, the step's
rewards and the terminated / truncated flags. Where a step drew fresh chance (a reshuffle, a
random card taken from a hand, a new deal after a tally), the twin's outcome cannot equal the
reference's draw: there the harness compares the twin's `public` facts of both outcomes (what every
seat knows after the step, which chance must not change), then carries on from the reference's
outcome, converted again. One function serves every game; the broken twins of the tests must fail
it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from fowlplay import envs
from fowlplay.envs.core.twin import State, TwinEnv


class MisalignedError(AssertionError):
    """The twin and the reference differ; the message says where and how."""


@dataclass
class AlignmentCount:
    """What one or more aligned games compared."""

    games: int = 0
    steps: int = 0  # decisions stepped on both engines
    chance_steps: int = 0  # of those, steps that drew fresh chance (compared on public facts)
    comparisons: int = 0  # states compared (every seat's observation, mask, rewards, flags)

    def add(self, other: AlignmentCount) -> None:
        """Add another count into this one."""
        self.games += other.games
        self.steps += other.steps
        self.chance_steps += other.chance_steps
        self.comparisons += other.comparisons


#: A policy for the aligned games: (reference env, legal actions, numpy generator) -> action.
Policy = Callable[[object, np.ndarray, np.random.Generator], int]


def random_policy(env, legal: np.ndarray, rng: np.random.Generator) -> int:
    """Uniform over the legal actions."""
    return int(legal[rng.integers(len(legal))])


class Aligner:
    """Steps a batch of twin games beside their references; jitted functions compile once per twin."""

    def __init__(self, name: str, twin: TwinEnv | None = None, **options) -> None:
        self.name, self.options = name, options
        self.twin = twin if twin is not None else envs.make_jax(name, **options)
        twin = self.twin
        players = jnp.arange(twin.num_players)

        def observe_all(state):
            return jax.vmap(lambda p: twin.observe(state, p))(players)

        self._step = jax.jit(jax.vmap(twin.step))
        self._observe_all = jax.jit(jax.vmap(observe_all))
        self._public = jax.jit(lambda game: twin.rules.public(game))

    def game(
        self, seed: int, policy: Policy | None = None, actions: Iterable[int] | None = None
    ) -> AlignmentCount:
        """One game from `reset(seed=seed)`; see `games`."""
        return self.games([seed], policy, None if actions is None else [actions])

    def games(
        self,
        seeds: Iterable[int],
        policy: Policy | None = None,
        actions: Iterable[Iterable[int]] | None = None,
    ) -> AlignmentCount:
        """Play one game from each `reset(seed=s)` in lockstep, by `policy` (masked random by
        default, from `numpy.random.default_rng(s)`) or by recorded action lists; raise
        `MisalignedError` at the first difference."""
        seeds = list(seeds)
        refs = []
        for seed in seeds:
            ref = envs.make(self.name, **self.options)
            ref.reset(seed=seed)
            refs.append(ref)
        rngs = [np.random.default_rng(seed) for seed in seeds]
        scripts = None if actions is None else [iter(a) for a in actions]
        policy = policy or random_policy
        batch = _stack([self.twin.from_reference(ref.game) for ref in refs])
        count = AlignmentCount(games=len(seeds))
        live = [True] * len(seeds)
        self._compare_batch(refs, batch, live, [f"{self.name} seed {s}, deal" for s in seeds], count)
        keys = jax.random.split(jax.random.PRNGKey(seeds[0] if seeds else 0), len(seeds))
        decisions = [0] * len(seeds)
        while any(live):
            chosen = np.zeros(len(seeds), np.int32)
            for i, ref in enumerate(refs):
                if not live[i]:
                    continue
                if scripts is not None:
                    action = next(scripts[i], None)
                    if action is None:  # a recorded game that stops early
                        live[i] = False
                        continue
                else:
                    action = policy(ref, np.flatnonzero(ref.game.legal_mask()), rngs[i])
                chosen[i] = action
                ref.step(int(action))
                decisions[i] += 1
            stepping = list(live)
            keys, step_keys = _split_all(keys)
            batch = jax.device_get(self._step(batch, jnp.asarray(chosen), step_keys))
            wheres = [
                f"{self.name} seed {s}, after decision {decisions[i]} (action {int(chosen[i])})"
                for i, s in enumerate(seeds)
            ]
            for i, ref in enumerate(refs):
                if not stepping[i]:
                    continue
                count.steps += 1
                if bool(batch._chance[i]):
                    count.chance_steps += 1
                    self._compare_public(ref, _index(batch, i), wheres[i])
                    synced = self.twin.from_reference(ref.game, step_count=int(batch._step_count[i]))
                    batch = _set(batch, i, jax.device_get(synced))
            self._compare_batch(refs, batch, stepping, wheres, count)
            live = [stepping[i] and not refs[i].game.over for i in range(len(refs))]
        return count

    # ----- the comparisons --------------------------------------------------------------------
    def _compare_batch(self, refs, batch: State, which: list[bool], wheres: list[str], count) -> None:
        observations = np.asarray(self._observe_all(batch))
        for i, ref in enumerate(refs):
            if which[i]:
                self._compare(ref, _index(batch, i), observations[i], wheres[i])
                count.comparisons += 1

    def _compare(self, ref, state: State, observations: np.ndarray, where: str) -> None:
        game = ref.game
        over = game.over
        _check(bool(state.terminated), over and game.terminal, "terminated", where)
        _check(bool(state.truncated), over and game.truncated and not game.terminal, "truncated", where)
        rewards = np.asarray([ref.rewards[a] for a in ref.possible_agents], np.float32)
        _check_array(np.asarray(state.rewards), rewards, "rewards", where)
        for p, agent in enumerate(ref.possible_agents):
            expected = ref.observe(agent)["observation"]
            _check_array(observations[p], expected, f"observation of {agent}", where, ref.observer)
        if over:
            return
        _check(int(state.current_player), game.current_player, "current player", where)
        mask = np.asarray(state.legal_action_mask)
        _check_array(mask, game.legal_mask().astype(bool), "legal mask", where)
        _check_array(np.asarray(state.observation), observations[game.current_player], "observation", where)

    def _compare_public(self, ref, state: State, where: str) -> None:
        expected = self._public(self.twin.from_reference(ref.game)._game)
        got = self._public(state._game)
        leaves_e, tree_e = jax.tree_util.tree_flatten(expected)
        leaves_g, tree_g = jax.tree_util.tree_flatten(got)
        _check(tree_g, tree_e, "public facts' structure", where)
        for i, (g, e) in enumerate(zip(leaves_g, leaves_e)):
            _check_array(np.asarray(g), np.asarray(e), f"public fact {i} after fresh chance", where)


def _stack(states: list[State]) -> State:
    return jax.tree_util.tree_map(lambda *leaves: np.stack([np.asarray(x) for x in leaves]), *states)


def _index(batch: State, i: int) -> State:
    return jax.tree_util.tree_map(lambda leaf: leaf[i], batch)


def _set(batch: State, i: int, state: State) -> State:
    def put(leaf, value):
        leaf = np.array(leaf)
        leaf[i] = value
        return leaf

    return jax.tree_util.tree_map(put, batch, state)


def _split_all(keys: jax.Array) -> tuple[jax.Array, jax.Array]:
    pairs = jax.vmap(jax.random.split)(keys)
    return pairs[:, 0], pairs[:, 1]


def _check(got, expected, what: str, where: str) -> None:
    if got != expected:
        raise MisalignedError(f"{where}: {what} differs: twin {got!r}, reference {expected!r}")


def _check_array(got: np.ndarray, expected: np.ndarray, what: str, where: str, observer=None) -> None:
    expected = np.asarray(expected)
    if got.shape != expected.shape:
        raise MisalignedError(f"{where}: {what} has shape {got.shape}, reference {expected.shape}")
    if got.dtype.kind == "f":  # bit for bit: the same float32 patterns
        same = np.asarray(got, np.float32).view(np.uint32) == np.asarray(expected, np.float32).view(np.uint32)
    else:
        same = got == expected
    if same.all():
        return
    first = int(np.flatnonzero(~same.ravel())[0])
    piece = ""
    if observer is not None:
        for name, span in observer.offsets.items():
            if span.start <= first < span.stop:
                piece = f" (piece {name!r}, index {first - span.start})"
    raise MisalignedError(
        f"{where}: {what} differs at {int((~same).sum())} places; first at {first}{piece}: "
        f"twin {got.ravel()[first]!r}, reference {expected.ravel()[first]!r}"
    )
