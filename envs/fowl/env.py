"""The `murder_most_fowl_v0` AEC environment: declarations only; the base class does the rest."""

from __future__ import annotations

from fowlplay.envs.core import CardGameEnv
from fowlplay.envs.fowl.observation import FowlObserver
from fowlplay.envs.fowl.rules import FowlGame, FowlOptions


class raw_env(CardGameEnv, name="murder_most_fowl_v0"):  # noqa: N801 - PettingZoo's naming convention
    """Murder Most Fowl v1.1 (Talen Lee): build bird routes in a grid, spoil others' with wiles, or murder.

    Options (keyword arguments, defaults in brackets): num_players [2] (2-4), num_types [None:
    4/5/6 bird types for 2/3/4 players], max_value [10], blocking_wiles [4], discard_wiles [3],
    swap_wiles [2], murder_wiles [1], grid_size [11], min_route [4], murder_margin [4]. Rules,
    action table and observation layout: docs/games/murder_most_fowl_v0.md.
    """

    options_cls = FowlOptions
    game_cls = FowlGame
    observer_cls = FowlObserver


def env(**kwargs) -> raw_env:
    """A `murder_most_fowl_v0` environment (it enforces the AEC call order itself)."""
    return raw_env(**kwargs)
