"""PettingZoo-style entry point: `from envs import chicken_v1; env = chicken_v1.env()`."""

from fowlplay.envs.chicken import PLAYER_COUNTS, BaselineAgent, BaselineAgentV0, env, raw_env

__all__ = ["PLAYER_COUNTS", "BaselineAgent", "BaselineAgentV0", "env", "raw_env"]
