"""Murder, She Crows (`murder_she_crows_v0`): a press-your-luck sets-and-runs game for 2-5 players."""

from fowlplay.envs.crows.baseline import BaselineAgent
from fowlplay.envs.crows.env import env, raw_env
from fowlplay.envs.crows.rules import PLAYER_COUNTS, CrowsGame, CrowsOptions

__all__ = ["PLAYER_COUNTS", "BaselineAgent", "CrowsGame", "CrowsOptions", "env", "raw_env"]
