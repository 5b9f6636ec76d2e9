"""PettingZoo-style entry point: `from envs import murray_frog_v0; env = murray_frog_v0.env()`."""

from fowlplay.envs.murray import PLAYER_COUNTS, BaselineAgent, env, raw_env

__all__ = ["PLAYER_COUNTS", "BaselineAgent", "env", "raw_env"]
