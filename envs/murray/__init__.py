"""Murray the A**hole Frog (`murray_frog_v0`): a swarm-building card game for 3-6 players."""

from fowlplay.envs.murray.baseline import BaselineAgent
from fowlplay.envs.murray.cards import Card
from fowlplay.envs.murray.env import env, raw_env
from fowlplay.envs.murray.rules import PLAYER_COUNTS, Decision, MurrayGame, MurrayOptions

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
