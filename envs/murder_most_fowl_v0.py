"""PettingZoo-style entry point: `from envs import murder_most_fowl_v0; env = murder_most_fowl_v0.env()`."""

from fowlplay.envs.fowl import PLAYER_COUNTS, BaselineAgent, env, raw_env

__all__ = ["PLAYER_COUNTS", "BaselineAgent", "env", "raw_env"]
