"""`illegal_action="lose"`: an illegal action ends the game, zero-sum, and changes nothing else."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.core.errors import IllegalActionError


def _world(env) -> str:
    return json.dumps(env.unwrapped.game.state_dict(), sort_keys=True, default=int)


def _first_illegal(env) -> int:
    """A masked-out action id of the acting agent (every game here has one at its first decision)."""
    mask = env.observe(env.agent_selection)["action_mask"]
    return int(np.flatnonzero(mask == 0)[0]) if (mask == 0).any() else env.unwrapped.num_actions


@pytest.mark.parametrize("name", envs.ENV_NAMES)
@pytest.mark.parametrize("bad", ["masked", "out_of_range", "float"])
def test_lose_ends_the_game_zero_sum_and_keeps_the_table(name, bad):
    env = envs.make(name, illegal_action="lose")
    env.reset(seed=7)
    rng = np.random.default_rng(0)
    for _ in range(5):  # a few legal moves first, so the forfeit happens mid-game
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    offender = env.agent_selection
    action = {"masked": _first_illegal(env), "out_of_range": 10**6, "float": 1.5}[bad]
    before = _world(env)
    env.step(action)
    assert _world(env) == before, "the forfeit must not change the game"
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert env.rewards[offender] == -1.0
    assert sum(env.rewards.values()) == pytest.approx(0.0)
    assert all(env.rewards[a] > 0 for a in env.agents if a != offender)
    for agent in env.agents:
        record = env.infos[agent]["illegal_action"]
        assert record["agent"] == offender and record["action"] == action
        assert not env.observe(agent)["action_mask"].any(), "nobody may move in a forfeited game"
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        _, reward, terminated, _, _ = env.last()
        returns[agent] += reward
        assert terminated
        env.step(None)
    assert returns[offender] == -1.0 and env.agents == []


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_raise_stays_the_default(name):
    env = envs.make(name)
    env.reset(seed=1)
    with pytest.raises(IllegalActionError):
        env.step(10**6)
    assert not any(env.terminations.values())


def test_unknown_mode_is_refused_naming_the_modes():
    with pytest.raises(ValueError, match=r"illegal_action='forfeit'.*\['raise', 'lose'\]"):
        envs.make("chicken_v1", illegal_action="forfeit")


def test_each_game_class_owns_its_metadata():
    """Wrappers append to `render_modes`; that must not reach another game's class."""
    classes = [envs.env_module(name).raw_env for name in envs.ENV_NAMES]
    lists = [cls.metadata["render_modes"] for cls in classes]
    assert len({id(x) for x in lists}) == len(lists)
    lists[0].append("rgb_array_list")  # what Gymnasium's render-collection wrapper appends
    try:
        assert all("rgb_array_list" not in x for x in lists[1:])
    finally:
        lists[0].remove("rgb_array_list")
