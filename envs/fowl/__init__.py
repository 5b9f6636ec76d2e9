"""Murder Most Fowl (`murder_most_fowl_v0`): grid route-building with wiles and murder, 2-4 players."""

from fowlplay.envs.fowl.baseline import BaselineAgent
from fowlplay.envs.fowl.env import env, raw_env
from fowlplay.envs.fowl.rules import PLAYER_COUNTS, FowlGame, FowlOptions

__all__ = ["PLAYER_COUNTS", "BaselineAgent", "FowlGame", "FowlOptions", "env", "raw_env"]
