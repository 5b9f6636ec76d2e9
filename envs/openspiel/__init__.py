"""Every fowlplay game as an OpenSpiel game, `python_fowlplay_<env name>` (needs the `openspiel` extra).

    from fowlplay.envs import openspiel  # registers the four games with pyspiel
    import pyspiel
    game = pyspiel.load_game("python_fowlplay_chicken_v1", {"num_players": 3})

The parameters are the env's options (`num_players` included; see `parameter_defaults`). Chance is
explicit, information states have perfect recall, observation tensors are the AEC observations
with their action masks, and the returns are the AEC rewards: docs/openspiel.md. Importing
`fowlplay.envs` never imports this package or pyspiel.
"""

from __future__ import annotations

try:
    import pyspiel
except ImportError as err:  # pragma: no cover - depends on the installed extras
    raise ImportError("fowlplay.envs.openspiel needs OpenSpiel: pip install 'fowlplay[openspiel]'") from err

import dataclasses

from fowlplay import envs
from fowlplay.envs.openspiel.game import (
    PREFIX,
    FowlplayGame,
    FowlplayState,
    _parameter,
    options_from,
    parameter_defaults,
    register,
)

#: The OpenSpiel name of every current game.
GAME_NAMES: dict[str, str] = {name: register(name) for name in envs.ENV_NAMES}


def load(name: str, **options):
    """`pyspiel.load_game` of an env name (or its OpenSpiel name) with env options as keywords."""
    short = name if name.startswith(PREFIX) else PREFIX + name
    if short[len(PREFIX) :] not in GAME_NAMES:
        raise ValueError(f"unknown game {name!r}; games: {list(GAME_NAMES)}")
    kinds = {
        f.name: str(f.type)
        for f in dataclasses.fields(envs.env_module(short[len(PREFIX) :]).raw_env.options_cls)
    }
    params = {key: _parameter(value, kinds.get(key, "")) for key, value in options.items()}
    return pyspiel.load_game(short, params)


__all__ = [
    "GAME_NAMES",
    "PREFIX",
    "FowlplayGame",
    "FowlplayState",
    "load",
    "options_from",
    "parameter_defaults",
]
