"""The `murray_frog_v0` AEC environment: declarations only; the base class does the rest."""

from __future__ import annotations

from fowlplay.envs.core import CardGameEnv
from fowlplay.envs.murray.observation import MurrayObserver
from fowlplay.envs.murray.rules import MurrayGame, MurrayOptions


class raw_env(CardGameEnv, name="murray_frog_v0"):  # noqa: N801 - PettingZoo's naming convention
    """Murray the A**hole Frog: build swarms of insects, wreck the others', dodge Murray, watch the Hawk.

    Options (keyword arguments, defaults in brackets): num_players [3] (3-6), insect_counts [None:
    the card table's column for the player count], murrays [None: 3 for 3-4 players, 4 for 5-6],
    hand_size [6], pond_size [3], draw_count [2], first_draw_count [3], hand_limit [9],
    max_swarms [8], big_swarm [4], big_swarm_points [5], perfect_swarm_points [5],
    max_turns [300], reward_mode ["win"]. Rules, card table, action table and observation layout:
    docs/games/murray_frog_v0.md.
    """

    options_cls = MurrayOptions
    game_cls = MurrayGame
    observer_cls = MurrayObserver


def env(**kwargs) -> raw_env:
    """A `murray_frog_v0` environment (it enforces the AEC call order itself)."""
    return raw_env(**kwargs)
