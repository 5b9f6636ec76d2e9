"""Helpers the shared test suite (and any game's own tests) use to drive environments."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> int:
    """A uniformly random legal action of a mask."""
    legal = np.flatnonzero(mask)
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
