"""PettingZoo-style entry point: `from envs import murder_she_crows_v1; env = murder_she_crows_v1.env()`."""

from fowlplay.envs.crows import PLAYER_COUNTS, BaselineAgent, env, raw_env

__all__ = ["PLAYER_COUNTS", "BaselineAgent", "env", "raw_env"]
