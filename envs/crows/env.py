"""The `murder_she_crows_v1` AEC environment: declarations only; the base class does the rest."""

from __future__ import annotations

from fowlplay.envs.core import CardGameEnv
from fowlplay.envs.core.env import deprecated_version
from fowlplay.envs.crows.observation import CrowsObserver
from fowlplay.envs.crows.rules import CrowsGame, CrowsOptions


class raw_env(CardGameEnv, name="murder_she_crows_v1"):  # noqa: N801 - PettingZoo's naming convention
    """Murder, She Crows: build a RUN and a SET, press your luck, score murders up the track.

    Options (keyword arguments, defaults in brackets): num_players [2] (2-5), max_value [6],
    copies_per_value [10], min_murder [3], points_step [5], track_length [30],
    coin_spaces [(5, 10, 15, 20, 25)], pile_discards_per_turn [1], max_turns [200], max_decisions [20000], cap_ending ["standings"],
    reward_mode ["win"]. After a bust the other players claim cards in reverse turn order, so
    the acting agent does not simply rotate. Rules, action table and observation layout:
    docs/games/murder_she_crows_v1.md.
    """

    options_cls = CrowsOptions
    game_cls = CrowsGame
    observer_cls = CrowsObserver


def env(**kwargs) -> raw_env:
    """A `murder_she_crows_v1` environment (it enforces the AEC call order itself)."""
    return raw_env(**kwargs)


#: `murder_she_crows_v0`: the same game, except that a cap ends it as a draw (every reward 0, truncated).
raw_env_v0 = deprecated_version(raw_env, "murder_she_crows_v0", {"cap_ending": "draw"})


def env_v0(**kwargs) -> raw_env:
    """A deprecated `murder_she_crows_v0` environment (`murder_she_crows_v1` with cap_ending="draw"); it warns once."""
    return raw_env_v0(**kwargs)
