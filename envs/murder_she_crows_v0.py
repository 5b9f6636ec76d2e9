"""Deprecated PettingZoo-style entry point of `murder_she_crows_v0`: `murder_she_crows_v1` with cap_ending="draw"."""

from fowlplay.envs.crows import PLAYER_COUNTS, BaselineAgent
from fowlplay.envs.crows import env_v0 as env
from fowlplay.envs.crows import raw_env_v0 as raw_env

__all__ = ["PLAYER_COUNTS", "BaselineAgent", "env", "raw_env"]
