"""The agent interface: act from one's own observation and action mask, nothing else."""

from __future__ import annotations

import numpy as np


class Agent:
    """Chooses an action from an observation vector and its action mask."""

    name = "agent"

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; agents that draw random numbers reseed here."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """A legal action (mask[action] == 1)."""
        raise NotImplementedError


class RandomAgent(Agent):
    """Uniformly random among the legal actions."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the agent's own generator."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """A uniformly random legal action."""
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("the action mask is empty: this agent has no decision to make")
        return int(legal[self.rng.integers(legal.size)])
