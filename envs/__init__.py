"""fowlplay environments: four published card games as PettingZoo AEC environments.

    from fowlplay import envs
    env = envs.make("chicken_v0", num_players=3, render_mode="ansi")

or, PettingZoo-style, `from fowlplay.envs import chicken_v0; env = chicken_v0.env()`. Importing
this package also registers every game with PettingZoo's registry (PettingZoo 1.27 or newer), so
that `pettingzoo.make("aec", "fowlplay/chicken_v0", num_players=3)` builds the same environment.
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


#: PettingZoo's registry namespace for the games: `fowlplay/chicken_v0` (PettingZoo also accepts
#: the Gymnasium spelling `fowlplay/chicken-v0`, and `fowlplay/chicken` for the newest version).
PETTINGZOO_NAMESPACE = "fowlplay"


def _register_with_pettingzoo() -> None:
    """Add every game to PettingZoo's AEC registry (it has one from 1.27 on; older ones are skipped)."""
    import pettingzoo  # already imported by the games' core; pettingzoo is a required dependency

    register = getattr(pettingzoo, "register", None)
    if register is None:
        return
    for name, module in _MODULES.items():
        # A "module:callable" entry point: the game itself is imported only when it is made.
        register("aec", f"{PETTINGZOO_NAMESPACE}/{name}", entry_point=f"{module}:env")


_register_with_pettingzoo()


__all__ = [
    "ENV_NAMES",
    "PETTINGZOO_NAMESPACE",
    "EnvOrderError",
    "IllegalActionError",
    "UnknownAgentError",
    "env_module",
    "make",
    "player_counts",
]
