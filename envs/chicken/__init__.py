"""Chicken (`chicken_v1`): a press-your-luck bidding game for 2-4 players."""

from fowlplay.envs.chicken.baseline import BaselineAgent, BaselineAgentV0
from fowlplay.envs.chicken.env import env, env_v0, raw_env, raw_env_v0
from fowlplay.envs.chicken.rules import PLAYER_COUNTS, ChickenGame, ChickenOptions

__all__ = [
    "PLAYER_COUNTS",
    "BaselineAgent",
    "BaselineAgentV0",
    "ChickenGame",
    "ChickenOptions",
    "env",
    "env_v0",
    "raw_env",
    "raw_env_v0",
]
