"""Murder Most Fowl (`murder_most_fowl_v0`): grid route-building with wiles and murder, 2-4 players."""

from envs.fowl.baseline import BaselineAgent
from envs.fowl.env import env, raw_env
from envs.fowl.rules import PLAYER_COUNTS, FowlGame, FowlOptions

__all__ = ["PLAYER_COUNTS", "BaselineAgent", "FowlGame", "FowlOptions", "env", "raw_env"]
