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

    def __init__(self, name: str, twin: TwinEnv | None = None, *, pad_to: int = 1, **options) -> None:
        self.name, self.options = name, options
        #: Every batch is padded with idle rows to a multiple of this, so that calls with different
        #: numbers of games share one compiled step.
        self.pad_to = pad_to
        self.twin = twin if twin is not None else envs.make_jax(name, **options)
        twin = self.twin
        players = jnp.arange(twin.num_players)

        def observe_all(state):
            return jax.vmap(lambda p: twin.observe(state, p))(players)

        self._step = jax.jit(jax.vmap(twin.step))
        self._observe_all = jax.jit(jax.vmap(observe_all))
        self._public = jax.jit(jax.vmap(twin.rules.public))
        # A batch of converted GameStates into States (the rows re-synced after fresh chance).
        self._restate = jax.jit(jax.vmap(twin._state))

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
        `MisalignedError` at the first difference.

        The twin steps the whole batch in one jitted call per decision; a batch of the same size
        compiles once, so keep batch sizes equal across calls."""
        seeds = list(seeds)
        size = len(seeds)
        rows = -(-size // self.pad_to) * self.pad_to  # the padded batch; rows past `size` stay idle
        refs = []
        for seed in seeds:
            ref = envs.make(self.name, **self.options)
            ref.reset(seed=seed)
            refs.append(ref)
        rngs = [np.random.default_rng(seed) for seed in seeds]
        scripts = None if actions is None else [iter(a) for a in actions]
        policy = policy or random_policy
        states = [self.twin.from_reference(ref.game) for ref in refs]
        batch = _numpy(_stack(states + states[:1] * (rows - size)))
        count = AlignmentCount(games=size)
        live = np.arange(rows) < size
        self._compare_batch(refs, batch, live, lambda i: f"{self.name} seed {seeds[i]}, deal", count)
        keys = jax.random.split(jax.random.PRNGKey(seeds[0] if seeds else 0), rows)
        decisions = np.zeros(rows, np.int64)
        while live.any():
            chosen = np.zeros(rows, np.int32)
            stepping = live.copy()
            for i in np.flatnonzero(live):
                ref = refs[i]
                if scripts is not None:
                    action = next(scripts[i], None)
                    if action is None:  # a recorded game that stops early
                        stepping[i] = False
                        continue
                else:
                    action = policy(ref, np.flatnonzero(ref.game.legal_mask()), rngs[i])
                chosen[i] = action
                ref.step(int(action))
                decisions[i] += 1
            keys, step_keys = _split_all(keys)
            batch = _numpy(self._step(batch, jnp.asarray(chosen), step_keys))

            def where(i: int, chosen: np.ndarray = chosen) -> str:
                return f"{self.name} seed {seeds[i]}, after decision {decisions[i]} (action {chosen[i]})"

            count.steps += int(stepping.sum())
            fresh = np.flatnonzero(stepping & batch._chance)
            if fresh.size:
                count.chance_steps += int(fresh.size)
                batch = self._resync(refs, batch, fresh, where)
            self._compare_batch(refs, batch, stepping, where, count)
            live[:size] = stepping[:size] & np.array([not ref.game.over for ref in refs])
        return count

    def _resync(self, refs, batch: State, fresh: np.ndarray, where) -> State:
        """Compare the public facts of the twin's and the reference's outcomes of fresh chance, then
        carry on from the reference's (converted again), in the rows `fresh`."""
        games = jax.tree_util.tree_map(np.copy, batch._game)
        for i in fresh:
            _put(games, i, self.twin.rules.from_reference(refs[i].game))
        got = _numpy(self._public(batch._game))
        expected = _numpy(self._public(games))
        leaves_g, tree_g = jax.tree_util.tree_flatten(got)
        leaves_e, tree_e = jax.tree_util.tree_flatten(expected)
        _check(tree_g, tree_e, "public facts' structure", where(fresh[0]))
        for k, (g, e) in enumerate(zip(leaves_g, leaves_e)):
            differs = ~_same_rows(g[fresh], e[fresh])
            for i in fresh[differs][:1]:
                _check_array(g[i], e[i], f"public fact {k} after fresh chance", where(i))
        synced = _numpy(self._restate(games, batch._step_count, np.zeros_like(batch._chance)))
        rows = np.zeros(batch._chance.shape, bool)
        rows[fresh] = True
        return jax.tree_util.tree_map(
            lambda s, b: np.where(rows.reshape((-1,) + (1,) * (b.ndim - 1)), s, b), synced, batch
        )

    # ----- the comparisons --------------------------------------------------------------------
    def _compare_batch(self, refs, batch: State, which: np.ndarray, where, count) -> None:
        """Compare the rows `which` at once; the first row that differs is reported in detail."""
        observations = np.asarray(self._observe_all(batch))
        rows = np.flatnonzero(which)
        if not rows.size:
            return
        twin, n = self.twin, self.twin.num_players
        expected = np.empty((rows.size, n, observations.shape[-1]), np.float32)
        rewards = np.empty((rows.size, n), np.float32)
        masks = np.zeros((rows.size, twin.num_actions), bool)
        flags = np.zeros((rows.size, 3), bool)  # terminated, truncated, over
        players = np.zeros(rows.size, np.int32)
        for j, i in enumerate(rows):
            ref = refs[i]
            game = ref.game
            over = game.over
            acting = -1 if over else game.current_player
            for p, agent in enumerate(ref.possible_agents):
                seen = ref.observe(agent)
                expected[j, p] = seen["observation"]
                rewards[j, p] = ref.rewards[agent]
                if p == acting:
                    masks[j] = seen["action_mask"]  # the acting agent's legal mask
            flags[j] = (over and game.terminal, over and game.truncated and not game.terminal, over)
            players[j] = max(acting, 0)
        got = observations[rows]
        same = (got.view(np.uint32) == expected.view(np.uint32)).all(axis=(1, 2))
        same &= (batch.terminated[rows] == flags[:, 0]) & (batch.truncated[rows] == flags[:, 1])
        same &= (batch.rewards[rows].view(np.uint32) == rewards.view(np.uint32)).all(axis=1)
        live = ~flags[:, 2]
        acting = got[np.arange(rows.size), np.clip(batch.current_player[rows], 0, n - 1)]
        same &= ~live | (batch.current_player[rows] == players)
        same &= ~live | (batch.legal_action_mask[rows] == masks).all(axis=1)
        same &= ~live | (batch.observation[rows].view(np.uint32) == acting.view(np.uint32)).all(axis=1)
        count.comparisons += int(rows.size)
        for j in np.flatnonzero(~same)[:1]:
            i = rows[j]
            self._compare(refs[i], _index(batch, i), observations[i], where(i))
            raise MisalignedError(f"{where(i)}: differs (the detailed comparison found nothing)")

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


def _stack(states: list[State]) -> State:
    return jax.tree_util.tree_map(lambda *leaves: np.stack([np.asarray(x) for x in leaves]), *states)


def _index(batch: State, i: int) -> State:
    return jax.tree_util.tree_map(lambda leaf: leaf[i], batch)


def _same_rows(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Per row, whether two batches of arrays are equal (floats bit for bit)."""
    got, expected = got.reshape(len(got), -1), expected.reshape(len(expected), -1)
    if got.dtype.kind == "f":
        got, expected = got.astype(np.float32).view(np.uint32), expected.astype(np.float32).view(np.uint32)
    return (got == expected).all(axis=1)


def _numpy(tree):
    """Every leaf as a writable numpy array."""
    return jax.tree_util.tree_map(np.array, jax.device_get(tree))


def _put(batch, i: int, one) -> None:
    """Write one unbatched pytree into row `i` of a batch of numpy leaves, in place."""
    for leaf, value in zip(jax.tree_util.tree_leaves(batch), jax.tree_util.tree_leaves(one)):
        leaf[i] = value


@jax.jit  # run op by op, one batch's split costs more than the batched step itself
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
