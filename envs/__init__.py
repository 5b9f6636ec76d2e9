"""fowlplay environments: four published card games as PettingZoo AEC environments.

    from fowlplay import envs
    env = envs.make("chicken_v0", num_players=3, render_mode="ansi")

or, PettingZoo-style, `from fowlplay.envs import chicken_v0; env = chicken_v0.env()`.
"""

from __future__ import annotations

import importlib
from typing import Any

from fowlplay.envs.core.errors import EnvOrderError, IllegalActionError, UnknownAgentError

if __name__ != "fowlplay.envs":  # imported as a bare top-level name from a checkout's root
    raise ImportError(
        "this folder is the package fowlplay.envs; import it by that name (from fowlplay import envs), "
        "not as `envs`: a bare `envs` would load a second, separate copy of every module"
    )

__version__ = "0.2.0"

#: Registered games: env name -> module exposing `env`, `raw_env`, `PLAYER_COUNTS`, `BaselineAgent`.
_MODULES: dict[str, str] = {
    "chicken_v0": "fowlplay.envs.chicken_v0",
    "murder_most_fowl_v0": "fowlplay.envs.murder_most_fowl_v0",
    "murder_she_crows_v0": "fowlplay.envs.murder_she_crows_v0",
    "murray_frog_v0": "fowlplay.envs.murray_frog_v0",
}

ENV_NAMES: tuple[str, ...] = tuple(_MODULES)


def env_module(name: str):
    """The PettingZoo-style module of a registered game."""
    if name not in _MODULES:
        raise ValueError(f"unknown game {name!r}; registered games: {list(ENV_NAMES)}")
    return importlib.import_module(_MODULES[name])


def make(name: str, **kwargs: Any):
    """Build a registered game's AEC environment with rule options as keyword arguments."""
    return env_module(name).env(**kwargs)


def player_counts(name: str) -> range:
    """The player counts a registered game supports."""
    return env_module(name).PLAYER_COUNTS


__all__ = [
    "ENV_NAMES",
    "EnvOrderError",
    "IllegalActionError",
    "UnknownAgentError",
    "env_module",
    "make",
    "player_counts",
]
