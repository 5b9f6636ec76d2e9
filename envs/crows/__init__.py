"""Murder, She Crows (`murder_she_crows_v1`): a press-your-luck sets-and-runs game for 2-5 players."""

from fowlplay.envs.crows.baseline import BaselineAgent
from fowlplay.envs.crows.env import env, env_v0, raw_env, raw_env_v0
from fowlplay.envs.crows.rules import PLAYER_COUNTS, CrowsGame, CrowsOptions

__all__ = [
    "PLAYER_COUNTS",
    "BaselineAgent",
    "CrowsGame",
    "CrowsOptions",
    "env",
    "env_v0",
    "raw_env",
    "raw_env_v0",
]
