"""Chicken (`chicken_v0`): a press-your-luck bidding game for 2-4 players."""

from fowlplay.envs.chicken.baseline import BaselineAgent
from fowlplay.envs.chicken.env import env, raw_env
from fowlplay.envs.chicken.rules import PLAYER_COUNTS, ChickenGame, ChickenOptions

__all__ = ["PLAYER_COUNTS", "BaselineAgent", "ChickenGame", "ChickenOptions", "env", "raw_env"]
