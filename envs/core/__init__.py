"""The shared core: AEC base, engine and observer interfaces, errors, card helpers."""

from fowlplay.envs.core.actions import ActionBlock, ActionLayout
from fowlplay.envs.core.env import CardGameEnv
from fowlplay.envs.core.errors import EnvOrderError, IllegalActionError, RedealError, UnknownAgentError
from fowlplay.envs.core.game import Game
from fowlplay.envs.core.observer import Observer, Piece
from fowlplay.envs.core.options import (
    build_options,
    check_cap_ending,
    check_int,
    check_player_count,
    check_reward_mode,
)
from fowlplay.envs.core.rewards import best_players, final_rewards, score_rewards, win_rewards

__all__ = [
    "ActionBlock",
    "ActionLayout",
    "CardGameEnv",
    "EnvOrderError",
    "Game",
    "IllegalActionError",
    "Observer",
    "Piece",
    "RedealError",
    "UnknownAgentError",
    "best_players",
    "build_options",
    "check_cap_ending",
    "check_int",
    "check_player_count",
    "check_reward_mode",
    "final_rewards",
    "score_rewards",
    "win_rewards",
]
