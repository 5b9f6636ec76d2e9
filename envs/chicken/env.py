"""The `chicken_v0` AEC environment: declarations only; the base class does the rest."""

from __future__ import annotations

from fowlplay.envs.chicken.observation import ChickenObserver
from fowlplay.envs.chicken.rules import ChickenGame, ChickenOptions
from fowlplay.envs.core import CardGameEnv


class raw_env(CardGameEnv, name="chicken_v0"):  # noqa: N801 - PettingZoo's naming convention
    """Chicken (Storie & Leistiko): bid for cards, draw them, and stop before a second foot.

    Options (keyword arguments, defaults in brackets): num_players [2] (2-4), max_value [5],
    copies_per_value [10], feet [10], bid_cap [15], target [50], foot_bonus [10],
    max_rounds [100], reward_mode ["win"]. Rules, action table and observation layout:
    docs/games/chicken_v0.md.
    """

    options_cls = ChickenOptions
    game_cls = ChickenGame
    observer_cls = ChickenObserver


def env(**kwargs) -> raw_env:
    """A `chicken_v0` environment (it enforces the AEC call order itself)."""
    return raw_env(**kwargs)
