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
    "chicken_v1": "fowlplay.envs.chicken_v1",
    "murder_most_fowl_v0": "fowlplay.envs.murder_most_fowl_v0",
    "murder_she_crows_v1": "fowlplay.envs.murder_she_crows_v1",
    "murray_frog_v0": "fowlplay.envs.murray_frog_v0",
}

ENV_NAMES: tuple[str, ...] = tuple(_MODULES)

#: Older versions still made by name, with their old rules and a DeprecationWarning: the `_v0`
#: games whose cap was a draw (the `_v1` games end a capped game by the standings).
DEPRECATED_NAMES: dict[str, str] = {
    "chicken_v0": "fowlplay.envs.chicken_v0",
    "murder_she_crows_v0": "fowlplay.envs.murder_she_crows_v0",
}
_SUCCESSORS = {"chicken_v0": "chicken_v1", "murder_she_crows_v0": "murder_she_crows_v1"}


def env_module(name: str):
    """The PettingZoo-style module of a registered game (or of a deprecated older version)."""
    module = _MODULES.get(name) or DEPRECATED_NAMES.get(name)
    if module is None:
        raise ValueError(f"unknown game {name!r}; registered games: {list(ENV_NAMES)}")
    return importlib.import_module(module)


def make(name: str, **kwargs: Any):
    """Build a registered game's AEC environment with rule options as keyword arguments."""
    return env_module(name).env(**kwargs)


def _jax_module(module: str, caller: str):
    """Import a JAX twin's module; without JAX, an error that names the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        if getattr(err, "name", None) in ("jax", "jaxlib"):
            raise ImportError(
                f"fowlplay.envs.{caller} needs JAX: pip install 'fowlplay[jax]' (or jax and jaxlib)"
            ) from err
        raise


#: The batched twin of each current game: the module holding its `TwinRules` subclass `Twin`.
_TWINS: dict[str, str] = {
    "chicken_v1": "fowlplay.envs.chicken.twin",
    "murder_most_fowl_v0": "fowlplay.envs.fowl.twin",
    "murder_she_crows_v1": "fowlplay.envs.crows.twin",
    "murray_frog_v0": "fowlplay.envs.murray.twin",
}


def make_jax(name: str, **options: Any):
    """Build a game's batched JAX twin (Pgx's API: `init`, `step`, `observe`) with the same names and
    rule options as `make`; needs the `jax` extra. Shape-changing options are fixed here."""
    reference = make(name, **options)  # the same ValueErrors (and deprecation warning) as `make`
    module = _jax_module(_TWINS[_SUCCESSORS.get(name, name)], "make_jax")
    from fowlplay.envs.core.twin import TwinEnv

    game = reference.unwrapped
    rules = module.Twin(game.options, game.observer, game.game_cls.action_layout(game.options))
    return TwinEnv(rules, reference.metadata["name"])


#: The baseline twin of each current game: the module holding its `BaselineTwin`.
_BASELINE_TWINS: dict[str, str] = {
    "chicken_v1": "fowlplay.envs.chicken.baseline_twin",
    "murder_most_fowl_v0": "fowlplay.envs.fowl.baseline_twin",
    "murder_she_crows_v1": "fowlplay.envs.crows.baseline_twin",
    "murray_frog_v0": "fowlplay.envs.murray.baseline_twin",
}


def make_jax_baseline(name: str, **options: Any):
    """The game's rule-based baseline as a jit- and vmap-safe JAX function `decide(observation,
    legal_action_mask) -> int32 action`, equal to `BaselineAgent(options).act`; needs `jax`."""
    reference = make(name, **options)  # the same ValueErrors (and deprecation warning) as `make`
    current = _SUCCESSORS.get(name, name)
    if current not in _BASELINE_TWINS:
        raise ValueError(f"no JAX baseline for {name!r} yet; games with one: {list(_BASELINE_TWINS)}")
    module = _jax_module(_BASELINE_TWINS[current], "make_jax_baseline")
    game = reference.unwrapped
    return module.BaselineTwin(game.options, game.observer, game.game_cls.action_layout(game.options)).decide


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
    for name, module in {**_MODULES, **DEPRECATED_NAMES}.items():
        # A "module:callable" entry point: the game itself is imported only when it is made.
        register("aec", f"{PETTINGZOO_NAMESPACE}/{name}", entry_point=f"{module}:env")


_register_with_pettingzoo()


__all__ = [
    "DEPRECATED_NAMES",
    "ENV_NAMES",
    "PETTINGZOO_NAMESPACE",
    "EnvOrderError",
    "IllegalActionError",
    "UnknownAgentError",
    "env_module",
    "make",
    "make_jax",
    "make_jax_baseline",
    "player_counts",
]
