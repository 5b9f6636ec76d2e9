"""Rule options: dataclasses of constructor keyword arguments with documented defaults."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def build_options(options_cls: type[T], kwargs: dict[str, Any]) -> T:
    """Build and validate an options dataclass, naming the allowed keys on a mistake."""
    allowed = [f.name for f in dataclasses.fields(options_cls)]
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for {options_cls.__name__}; allowed: {allowed}")
    options = options_cls(**kwargs)
    validate = getattr(options, "validate", None)
    if validate is not None:
        validate()
    return options


def check_player_count(num_players: Any, allowed: range, game: str) -> None:
    """Raise a ValueError unless `num_players` is an int in `allowed`."""
    if not isinstance(num_players, int) or isinstance(num_players, bool) or num_players not in allowed:
        raise ValueError(
            f"{game} supports {allowed.start}-{allowed.stop - 1} players; got num_players={num_players!r}"
        )


#: The reward modes a game with score-based returns accepts.
REWARD_MODES = ("win", "score")


def check_reward_mode(reward_mode: Any) -> None:
    """Raise a ValueError unless `reward_mode` is one of `REWARD_MODES`."""
    if reward_mode not in REWARD_MODES:
        raise ValueError(f"reward_mode must be 'win' or 'score'; got {reward_mode!r}")


#: How a game cut off by its cap ends: by the standings it has ("standings", the default from the
#: `_v1` envs on: the leader wins, so stalling cannot turn a loss into a draw) or as a draw for
#: everyone, truncated ("draw", the `_v0` envs' rule).
CAP_ENDINGS = ("standings", "draw")


def check_cap_ending(cap_ending: Any) -> None:
    """Raise a ValueError unless `cap_ending` is one of `CAP_ENDINGS`."""
    if cap_ending not in CAP_ENDINGS:
        raise ValueError(f"cap_ending must be 'standings' or 'draw'; got {cap_ending!r}")


def check_int(name: str, value: Any, low: int, high: int | None = None) -> None:
    """Raise a ValueError unless `value` is an int in [low, high]."""
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= low
    if ok and high is not None:
        ok = value <= high
    if not ok:
        upper = "" if high is None else f" and <= {high}"
        raise ValueError(f"option {name} must be an int >= {low}{upper}; got {value!r}")
