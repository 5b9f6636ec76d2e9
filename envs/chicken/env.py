"""The `chicken_v1` AEC environment: declarations only; the base class does the rest."""

from __future__ import annotations

from fowlplay.envs.chicken.observation import ChickenObserver
from fowlplay.envs.chicken.rules import ChickenGame, ChickenOptions
from fowlplay.envs.core import CardGameEnv
from fowlplay.envs.core.env import deprecated_version


class raw_env(CardGameEnv, name="chicken_v1"):  # noqa: N801 - PettingZoo's naming convention
    """Chicken (Storie & Leistiko): bid for cards, draw them, and stop before a second foot.

    Options (keyword arguments, defaults in brackets): num_players [2] (2-4), max_value [5],
    copies_per_value [10], feet [10], bid_cap [15], target [50], foot_bonus [10],
    max_rounds [100], cap_ending ["standings"], reward_mode ["win"]. Rules, action table and observation layout:
    docs/games/chicken_v1.md.
    """

    options_cls = ChickenOptions
    game_cls = ChickenGame
    observer_cls = ChickenObserver


def env(**kwargs) -> raw_env:
    """A `chicken_v1` environment (it enforces the AEC call order itself)."""
    return raw_env(**kwargs)


#: `chicken_v0`: the same game, except that a cap ends it as a draw (every reward 0, truncated).
raw_env_v0 = deprecated_version(raw_env, "chicken_v0", {"cap_ending": "draw"})


def env_v0(**kwargs) -> raw_env:
    """A deprecated `chicken_v0` environment (`chicken_v1` with cap_ending="draw"); it warns once."""
    return raw_env_v0(**kwargs)
