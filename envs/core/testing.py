"""Helpers the shared test suite (and any game's own tests) use to drive environments."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> int:
    """A uniformly random legal action of a mask."""
    legal = mask.ravel().nonzero()[0]  # np.flatnonzero, without its wrapper's cost
    return int(legal[rng.integers(legal.size)])


def play(env, choose: Callable[[str, dict], int], max_steps: int = 1_000_000) -> Iterator[tuple[str, dict]]:
    """Drive an AEC env to the end, yielding (agent, observation) before each live decision."""
    steps = 0
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        yield agent, obs
        env.step(choose(agent, obs))
        steps += 1
        if steps >= max_steps:
            raise AssertionError(f"game did not end within {max_steps} decisions")


def random_trajectory(env, seed: int, action_seed: int = 0) -> list[tuple]:
    """Play a masked random game; return (agent, action, observation bytes, rewards) per decision."""
    env.reset(seed=seed)
    rng = np.random.default_rng(action_seed)
    out = []
    for agent, obs in play(env, lambda a, o: random_legal(o["action_mask"], rng)):
        out.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes()))
    out.append(tuple(sorted(env.rewards.items())))
    return out


def random_actions(env, seed: int, action_seed: int = 0) -> list[int]:
    """The action ids of a whole masked random game from `reset(seed)` (the env ends finished)."""
    env.reset(seed=seed)
    rng = np.random.default_rng(action_seed)
    actions: list[int] = []

    def choose(agent: str, obs: dict) -> int:
        actions.append(random_legal(obs["action_mask"], rng))
        return actions[-1]

    for _ in play(env, choose):
        pass
    return actions


def apply_script(env, actions: list[int]) -> None:
    """Step the acting agents through a list of actions (a transcript), checking each is legal."""
    for action in actions:
        obs = env.observe(env.agent_selection)
        if not obs["action_mask"][action]:
            legal = np.flatnonzero(obs["action_mask"]).tolist()
            raise AssertionError(
                f"scripted action {action} ({env.action_name(action)}) is not legal for "
                f"{env.agent_selection} deciding {env.decision()}; legal: {legal}"
            )
        env.step(action)


# ----- the exact posterior test: rejection sampling against resample_hidden ----------------------


def world_key(env) -> str:
    """The whole state of an env's game as one canonical string: equal keys, equal worlds."""
    return json.dumps(env.game.state_dict(), sort_keys=True, default=_plain)


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"state_dict holds a {type(value).__name__}, which has no canonical form")


def _seen_by(env, viewer: str) -> bytes:
    obs = env.observe(viewer)
    return obs["observation"].tobytes() + obs["action_mask"].tobytes()


@dataclass
class History:
    """A played prefix: the action ids taken, who took them, and one viewer's view after each."""

    viewer: str
    actions: list[int]
    actors: list[str]
    views: list[bytes]  # observation + mask of `viewer` after reset and after every action


def record_history(env, seed: int, actions: list[int], viewer: str) -> History:
    """Reset `env` with `seed`, play `actions` and record what `viewer` saw after each step."""
    env.reset(seed=seed)
    views, actors = [_seen_by(env, viewer)], []
    for action in actions:
        actors.append(env.agent_selection)
        env.step(action)
        views.append(_seen_by(env, viewer))
    return History(viewer, list(actions), actors, views)


def replay_matches(env, seed: int, history: History) -> bool:
    """Replay `history`'s actions from `seed`; True if the viewer saw exactly the same thing throughout.

    A replay stops at the first difference: another acting agent, an action that is not legal
    in this world, or a byte of the viewer's observation or mask that differs.
    """
    env.reset(seed=seed)
    if _seen_by(env, history.viewer) != history.views[0]:
        return False
    for action, actor, seen in zip(history.actions, history.actors, history.views[1:]):
        if env.agent_selection != actor or env.game.over:
            return False
        if not env.observe(actor)["action_mask"][action]:
            return False
        env.step(action)
        if _seen_by(env, history.viewer) != seen:
            return False
    return True


def posterior_worlds(make_env, history: History, seeds, want: int | None = None) -> Counter:
    """Rejection sample: the worlds (by `world_key`) of every seed whose replay matches `history`.

    This is the posterior over worlds given everything the viewer observed, with the chance
    process's own weights, computed without trusting any sampler of the game. Stops early once
    `want` worlds were accepted.
    """
    env = make_env()
    worlds: Counter = Counter()
    accepted = 0
    for seed in seeds:
        if replay_matches(env, int(seed), history):
            worlds[world_key(env)] += 1
            accepted += 1
            if want is not None and accepted >= want:
                break
    return worlds


def resampled_worlds(env, viewer: str, n: int, seed: int, sampler=None) -> Counter:
    """The worlds of `n` re-deals of `env` for `viewer` (clones; `env` itself is left as it is).

    `sampler(env, viewer, seed)` replaces `env.resample_hidden` (tests use it for broken twins).
    """
    worlds: Counter = Counter()
    for s in np.random.SeedSequence(seed).generate_state(n):
        copy = env.clone()
        if sampler is None:
            copy.resample_hidden(viewer, seed=int(s))
        else:
            sampler(copy, viewer, int(s))
        worlds[world_key(copy)] += 1
    return worlds


@dataclass
class WorldComparison:
    """How a sampler's worlds compare with the rejection sample's."""

    outside: list[str]  # resampled worlds no consistent replay produced
    p_value: float  # chi-square homogeneity test over the pooled worlds (lumping rare ones)
    total_variation: float
    worlds: int  # distinct consistent worlds seen by rejection sampling

    def __str__(self) -> str:
        return (
            f"{len(self.outside)} resampled worlds outside the support; chi-square p={self.p_value:.3g}; "
            f"total variation {self.total_variation:.3f}; {self.worlds} consistent worlds"
        )


def compare_worlds(posterior: Counter, resampled: Counter, min_pooled: int = 10) -> WorldComparison:
    """Support and distribution of `resampled` against the rejection sample `posterior`.

    Worlds whose pooled count is below `min_pooled` are lumped into one bin so the chi-square
    approximation holds. Needs scipy (a development dependency).
    """
    from scipy.stats import chi2_contingency

    outside = sorted(set(resampled) - set(posterior))
    keys = sorted(set(posterior) | set(resampled))
    m, n = sum(posterior.values()), sum(resampled.values())
    tv = 0.5 * sum(abs(posterior[k] / m - resampled[k] / n) for k in keys)
    rows: list[list[int]] = []
    rare = [0, 0]
    for k in keys:
        a, b = posterior[k], resampled[k]
        if a + b >= min_pooled:
            rows.append([a, b])
        else:
            rare[0] += a
            rare[1] += b
    if sum(rare) >= min_pooled or (sum(rare) and not rows):
        rows.append(rare)
    elif sum(rare) and rows:
        rows[-1] = [rows[-1][0] + rare[0], rows[-1][1] + rare[1]]
    p_value = 1.0
    if len(rows) >= 2:
        p_value = float(chi2_contingency(np.array(rows).T, correction=False).pvalue)
    return WorldComparison(outside, p_value, tv, len(posterior))
