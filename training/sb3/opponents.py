"""The opponent pool of self-play: who sits in the seats the learner does not.

Kinds: `random` (uniform over legal actions), `baseline` (the game's rule-based `BaselineAgent`),
`latest` (the learner as of the last rollout) and `snapshot` (one of the last `window` saved
learners). The trainer sends weights with `set_latest` / `add_snapshot` (numpy arrays, so they
pickle cheaply to subprocess workers); a kind with nothing to play yet is skipped and the weights
of the others are renormalised. A snapshot is drawn uniformly from the window, unless the trainer
sets a meta-strategy with `set_weights` (`trainer: psro`), which replaces the kind weights and
gives each snapshot its own.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
from fowlplay import envs
from fowlplay.envs.core.agents import Agent, RandomAgent
from fowlplay.training.config import OPPONENT_KINDS

#: Largest seed handed to an opponent's generator.
_SEED_LIMIT = 2**31 - 1


class OpponentPool:
    """Draws an opponent agent per seat, by kind weights."""

    def __init__(
        self,
        game: str,
        aec_env,
        weights: dict[str, float] | None = None,
        window: int = 5,
        network: dict[str, Any] | None = None,
    ) -> None:
        weights = dict(weights or {"random": 1.0})
        unknown = sorted(set(weights) - set(OPPONENT_KINDS))
        if unknown:
            raise ValueError(f"unknown opponent kind(s) {unknown}; kinds are {list(OPPONENT_KINDS)}")
        if any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
            raise ValueError(f"opponent weights must be >= 0 and not all 0; got {weights}")
        if (weights.get("latest", 0) or weights.get("snapshot", 0)) and network is None:
            raise ValueError(
                "latest/snapshot opponents need `network` (net_arch and activation of the learner)"
            )
        self.weights = {kind: float(weights.get(kind, 0.0)) for kind in OPPONENT_KINDS}
        self.window = window
        self.network = network
        self._observation_space = aec_env.observation_space(aec_env.possible_agents[0])["observation"]
        self._action_space = aec_env.action_space(aec_env.possible_agents[0])
        self._baseline_cls = envs.env_module(game).BaselineAgent
        self._options = aec_env.options
        self._latest = None  # the learner's policy network, once weights arrive
        self._snapshots: OrderedDict[str, Any] = OrderedDict()
        self._snapshot_weights: dict[str, float] | None = None  # None: uniform over the window

    # ----- what the trainer sends ----------------------------------------------------------------
    def _network(self, state: dict[str, np.ndarray]):
        from fowlplay.training.policy import build_policy, load_policy_state

        policy = build_policy(self._observation_space, self._action_space, **self.network)
        load_policy_state(policy, state)
        return policy

    def set_latest(self, state: dict[str, np.ndarray]) -> None:
        """Replace the `latest` opponent's weights with the learner's current ones."""
        if self.network is None:
            raise ValueError("this pool has no `network` settings, so it cannot hold learner weights")
        if self._latest is None:
            self._latest = self._network(state)
        else:
            from fowlplay.training.policy import load_policy_state

            load_policy_state(self._latest, state)

    def add_snapshot(self, name: str, state: dict[str, np.ndarray]) -> None:
        """Add an earlier learner; the oldest leaves once more than `window` are held."""
        if self.network is None:
            raise ValueError("this pool has no `network` settings, so it cannot hold snapshots")
        self._snapshots[name] = self._network(state)
        self._snapshots.move_to_end(name)
        while len(self._snapshots) > self.window:
            self._snapshots.popitem(last=False)

    def set_weights(
        self, weights: dict[str, float], snapshot_weights: dict[str, float] | None = None
    ) -> None:
        """Replace the kind weights and, if given, the relative weight of each snapshot by name (a
        snapshot not named gets 0; None: uniform again)."""
        unknown = sorted(set(weights) - set(OPPONENT_KINDS))
        if unknown or any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
            raise ValueError(
                f"opponent weights must be >= 0 over {list(OPPONENT_KINDS)}, not all 0; got {weights}"
            )
        self.weights = {kind: float(weights.get(kind, 0.0)) for kind in OPPONENT_KINDS}
        self._snapshot_weights = None if snapshot_weights is None else dict(snapshot_weights)

    def snapshot_names(self) -> list[str]:
        """Names of the snapshots held, oldest first."""
        return list(self._snapshots)

    # ----- drawing opponents ---------------------------------------------------------------------
    def available(self) -> dict[str, float]:
        """Kinds that can play now, with their normalised weights."""
        ready = {
            "random": True,
            "baseline": True,
            "latest": self._latest is not None,
            "snapshot": bool(self._snapshots),
        }
        weights = {kind: w for kind, w in self.weights.items() if w > 0 and ready[kind]}
        if not weights:  # only network kinds were asked for and none has arrived yet
            weights = {"random": 1.0}
        total = sum(weights.values())
        return {kind: w / total for kind, w in weights.items()}

    def draw(self, rng: np.random.Generator) -> tuple[str, Agent]:
        """A (label, agent) for one seat; the agent is seeded from `rng`."""
        weights = self.available()
        kinds = list(weights)
        kind = kinds[int(rng.choice(len(kinds), p=list(weights.values())))]
        seed = int(rng.integers(_SEED_LIMIT))
        if kind == "random":
            return kind, RandomAgent(seed)
        if kind == "baseline":
            return kind, self._baseline_cls(self._options, seed)
        from fowlplay.training.agent import PolicyAgent

        if kind == "latest":
            return kind, PolicyAgent(self._latest, seed=seed)
        names = list(self._snapshots)
        weights = [self._snapshot_weights.get(name, 0.0) for name in names] if self._snapshot_weights else []
        if sum(weights) > 0:
            name = names[int(rng.choice(len(names), p=np.array(weights) / sum(weights)))]
        else:
            name = names[int(rng.integers(len(names)))]
        return kind, PolicyAgent(self._snapshots[name], seed=seed)
