"""Murray the A**hole Frog (`murray_frog_v0`): a swarm-building card game for 3-6 players."""

from envs.murray.baseline import BaselineAgent
from envs.murray.env import env, raw_env
from envs.murray.rules import PLAYER_COUNTS, Card, Decision, MurrayGame, MurrayOptions

__all__ = [
    "PLAYER_COUNTS",
    "BaselineAgent",
    "Card",
    "Decision",
    "MurrayGame",
    "MurrayOptions",
    "env",
    "raw_env",
]
