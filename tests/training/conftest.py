"""Shared helpers of the training tests."""

from __future__ import annotations

import numpy as np
import pytest
from fowlplay.envs.core.agents import Agent


class ScriptedAgent(Agent):
    """Plays a fixed list of actions, in order (a transcript), and fails if asked for more."""

    name = "scripted"

    def __init__(self, actions: list[int]) -> None:
        self.actions = list(actions)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The next scripted action, which must be legal."""
        assert self.actions, "the scripted opponent was asked for more moves than scripted"
        action = self.actions.pop(0)
        assert action_mask[action], f"scripted action {action} is illegal here"
        return action


@pytest.fixture
def scripted():
    """Seat a scripted opponent in every other seat of a SelfPlayEnv (replacing its pool's draw)."""

    def install(env, actions: list[int]) -> ScriptedAgent:
        agent = ScriptedAgent(actions)
        env.pool.draw = lambda rng: ("scripted", agent)
        return agent

    return install
