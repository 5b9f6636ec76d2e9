"""A checkpoint as an `Agent`: `PolicyAgent` plays a trained policy from its own observation and
mask, drawing from its own generator (never torch's global one), so a seed fixes its play."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from fowlplay.envs.core.agents import Agent
from fowlplay.training.checkpoint import check_compatible, load_policy, read_metadata
from fowlplay.training.policy import action_probabilities


class PolicyAgent(Agent):
    """Plays a MaskablePPO model (or its policy), or a Q-network, from its own observation and mask."""

    name = "policy"

    def __init__(self, model, deterministic: bool = False, seed: int | None = None) -> None:
        self.model = model
        self.policy = getattr(model, "policy", model)
        self.policy.set_training_mode(False)
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)
        #: The checkpoint's metadata when loaded with `from_checkpoint`, else None.
        self.metadata: dict[str, Any] | None = None

    @classmethod
    def from_checkpoint(
        cls,
        path: str | Path,
        env=None,
        deterministic: bool = False,
        seed: int | None = None,
        trust_checkpoint: bool = False,
    ) -> PolicyAgent:
        """Load a checkpoint's weights without unpickling anything (`training.checkpoint.load_policy`);
        if `env` is given, refuse one made for a different game or options first."""
        if env is not None:
            check_compatible(read_metadata(path), env)
        policy, metadata = load_policy(path, trust_checkpoint=trust_checkpoint)
        agent = cls(policy, deterministic=deterministic, seed=seed)
        agent.metadata = metadata
        return agent

    def reset(self, seed: int | None = None) -> None:
        """Reseed the sampling generator."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The masked action distribution the agent draws from."""
        return action_probabilities(self.policy, observation, action_mask)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The most likely legal action if deterministic, else one drawn from the masked distribution."""
        return self.choose(self.probabilities(observation, action_mask))

    def choose(self, probs: np.ndarray) -> int:
        """The action `act` takes given its masked distribution `probs` (computed here or batched)."""
        if self.deterministic:
            return int(np.argmax(probs))
        # The first index whose cumulative probability exceeds u always has probability > 0.
        cumulative = np.cumsum(probs)
        return int(np.searchsorted(cumulative, self.rng.random() * cumulative[-1], side="right"))
