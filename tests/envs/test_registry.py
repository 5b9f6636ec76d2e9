"""PettingZoo's registry: `import fowlplay.envs` registers every game as `fowlplay/<env name>`."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pettingzoo
import pytest
from fowlplay import envs

GAMES = list(envs.ENV_NAMES)


def _trace(env, seed: int) -> list:
    """Every acting agent, observation and masked random action of one seeded game."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trace = []
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        action = None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        trace.append((agent, obs["observation"].tobytes(), reward, action))
        env.step(action)
    return trace


def _gym_spelling(name: str) -> str:
    """`chicken_v1` as PettingZoo's registry keys it: `fowlplay/chicken-v1`."""
    base, version = name.rsplit("_v", 1)
    return f"fowlplay/{base}-v{version}"


@pytest.mark.parametrize("name", GAMES)
def test_every_game_is_registered_and_made_by_pettingzoo(name):
    assert _gym_spelling(name) in pettingzoo.aec_registry
    n = max(envs.player_counts(name))
    made = pettingzoo.make("aec", f"fowlplay/{name}", num_players=n, illegal_action="lose")
    ours = envs.make(name, num_players=n, illegal_action="lose")
    assert type(made) is type(ours) and made.metadata["name"] == name
    assert made.options == ours.options and made.illegal_action == "lose"
    assert _trace(made, seed=7) == _trace(ours, seed=7)


def test_every_spelling_pettingzoo_accepts_gives_the_game():
    for spelling in ("fowlplay/chicken_v1", "fowlplay/chicken-v1", "fowlplay/chicken"):
        assert pettingzoo.make("aec", spelling).metadata["name"] == "chicken_v1"
    with pytest.warns(DeprecationWarning, match="chicken_v0 is deprecated"):
        old = pettingzoo.make("aec", "fowlplay/chicken-v0")
    assert old.metadata["name"] == "chicken_v0" and old.options.cap_ending == "draw"
    with pytest.raises(pettingzoo.env_registry.exceptions.NameNotFound):
        pettingzoo.make("aec", "fowlplay/no_such_game_v0")
    with pytest.raises(ValueError, match="max_cycles"):
        pettingzoo.make("aec", "fowlplay/chicken_v1", max_cycles=10)  # not an option of ours: refused


def test_importing_the_package_registers_without_importing_a_game():
    code = (
        "import sys, warnings\n"
        "warnings.simplefilter('error')\n"
        "import fowlplay.envs, pettingzoo\n"
        "ids = sorted(i for i in pettingzoo.aec_registry if i.startswith('fowlplay/'))\n"
        "games = sorted(m for m in sys.modules if m.startswith(('fowlplay.envs.chicken', 'fowlplay.envs.crows',"
        " 'fowlplay.envs.fowl', 'fowlplay.envs.murray', 'fowlplay.envs.murder')))\n"
        "print(ids, games)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    ids = sorted(_gym_spelling(n) for n in (*GAMES, *envs.DEPRECATED_NAMES))
    assert out.strip() == f"{ids} []"
