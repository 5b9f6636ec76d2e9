"""A fowlplay game as an RLlib multi-agent env, and the policy-mapping function that seats the pool.

The game is RLlib's own `PettingZooEnv` around our AEC env built with `illegal_action="lose"`
(RLlib's env check steps unmasked actions; a masked module never does). Every seat is mapped, per
episode, to a module: the learner's seat to `learner`, each other seat to a frozen opponent drawn
from the same pool as `SelfPlayEnv`'s (`random`, `baseline`, `latest`, `snapshot_<i>`), by the
config's weights, renormalised over the kinds that can play.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
from fowlplay import envs
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

LEARNER = "learner"
FIXED_KINDS = ("random", "baseline")

#: Snapshot slots filled so far, per process: the trainer sets it on every env runner
#: (`set_snapshots_ready`), and the mapping function of that runner reads it.
_SNAPSHOTS_READY = 0


def snapshot_module(slot: int) -> str:
    """The module id of snapshot slot `slot`."""
    return f"snapshot_{slot}"


def set_snapshots_ready(count: int) -> None:
    """How many snapshot slots hold an earlier learner (called on each env runner by the trainer)."""
    global _SNAPSHOTS_READY
    _SNAPSHOTS_READY = int(count)


class FowlplayMultiAgentEnv(PettingZooEnv):
    """RLlib's `PettingZooEnv` over a fowlplay game (env_config: `game`, `env_options`,
    `truncation_reward`), illegal actions ending the game as a loss."""

    def __init__(self, env_config: dict[str, Any] | None = None) -> None:
        env_config = dict(env_config or {})
        self.truncation_reward = env_config.get("truncation_reward")
        aec = envs.make(
            env_config.get("game", "chicken_v1"), illegal_action="lose", **env_config.get("env_options", {})
        )
        super().__init__(aec)

    def step(self, action):
        """Apply the acting seat's action; on a cut-off game every seat is paid `truncation_reward`."""
        obs, rewards, terminated, truncated, infos = super().step(action)
        if self.truncation_reward is not None:
            for agent, cut in truncated.items():
                if agent != "__all__" and cut and not terminated.get(agent, False):
                    rewards[agent] = float(self.truncation_reward)
        return obs, rewards, terminated, truncated, infos


def episode_seating(
    episode_id: str,
    agents: list[str],
    seed: int,
    learner_seat: int | str,
    weights: dict[str, float],
    snapshots_ready: int,
) -> dict[str, str]:
    """agent -> module id for one episode, a pure function of the episode's id and the run's seed."""
    digest = hashlib.sha256(f"{seed}:{episode_id}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    seat = int(rng.integers(len(agents))) if learner_seat == "random" else int(learner_seat)
    ready = {"random": True, "baseline": True, "latest": True, "snapshot": snapshots_ready > 0}
    kinds = {kind: w for kind, w in weights.items() if w > 0 and ready[kind]} or {"random": 1.0}
    names, probs = list(kinds), np.array(list(kinds.values()), dtype=np.float64)
    seating = {}
    for index, agent in enumerate(agents):
        if index == seat:
            seating[agent] = LEARNER
            continue
        kind = names[int(rng.choice(len(names), p=probs / probs.sum()))]
        seating[agent] = snapshot_module(int(rng.integers(snapshots_ready))) if kind == "snapshot" else kind
    return seating


class PolicyMapping:
    """RLlib's `policy_mapping_fn`: the seat of `agent_id` in this episode (`episode_seating`)."""

    def __init__(
        self, agents: list[str], seed: int, learner_seat: int | str, weights: dict[str, float]
    ) -> None:
        self.agents = list(agents)
        self.seed = seed
        self.learner_seat = learner_seat
        self.weights = dict(weights)

    def __call__(self, agent_id: str, episode: Any, **kwargs: Any) -> str:
        """The module that plays `agent_id` in `episode`."""
        seating = episode_seating(
            episode.id_, self.agents, self.seed, self.learner_seat, self.weights, _SNAPSHOTS_READY
        )
        return seating[agent_id]
