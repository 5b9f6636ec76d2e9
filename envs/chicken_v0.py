"""Deprecated PettingZoo-style entry point of `chicken_v0`: `chicken_v1` with cap_ending="draw"."""

from fowlplay.envs.chicken import PLAYER_COUNTS, BaselineAgent, BaselineAgentV0
from fowlplay.envs.chicken import env_v0 as env
from fowlplay.envs.chicken import raw_env_v0 as raw_env

__all__ = ["PLAYER_COUNTS", "BaselineAgent", "BaselineAgentV0", "env", "raw_env"]
