"""The environment contract, checked for every registered game at every supported player count."""

from __future__ import annotations

import io
import os
import random
import subprocess
import sys
import warnings
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.core.testing import play, random_legal, random_trajectory
from pettingzoo.test import api_test, seed_test

ROOT = Path(__file__).resolve().parents[2]
#: Masked random games played per game and player count (the suite plays thousands in all).
RANDOM_GAMES = int(os.environ.get("FOWLPLAY_RANDOM_GAMES", "150"))

CASES = [(name, n) for name in envs.ENV_NAMES for n in envs.player_counts(name)]
IDS = [f"{name}-{n}p" for name, n in CASES]


def make(name: str, n: int, **kwargs):
    return envs.make(name, num_players=n, **kwargs)


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_pettingzoo_api(name, n):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(make(name, n), num_cycles=300)


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_pettingzoo_seed(name, n):
    seed_test(lambda: make(name, n), num_cycles=300)


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_same_instance_reseeded_replays_exactly(name, n):
    env = make(name, n)
    first = random_trajectory(env, seed=7)
    random_trajectory(env, seed=8)
    assert random_trajectory(env, seed=7) == first


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_different_seeds_give_different_games(name, n):
    env = make(name, n)
    assert random_trajectory(env, seed=1) != random_trajectory(env, seed=2)


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_masked_random_games_keep_invariants(name, n):
    env = make(name, n)
    space = env.observation_space(env.possible_agents[0])
    rng = np.random.default_rng(123)
    ended = truncated = 0
    for game in range(RANDOM_GAMES):
        env.reset(seed=game)
        for agent, obs in play(env, lambda a, o: random_legal(o["action_mask"], rng)):
            assert obs["action_mask"].any(), f"empty mask for acting {agent}"
            assert space.contains(obs), f"observation of {agent} outside its space"
            waiting = [a for a in env.agents if a != agent]
            if game % 10 == 0:
                for other in waiting:
                    other_obs = env.observe(other)
                    assert not other_obs["action_mask"].any(), f"waiting {other} has legal actions"
                    assert space.contains(other_obs)
        assert env.agents == []
        ended += 1
        truncated += any(env.truncations.values()) if env.truncations else 0
        assert abs(sum(env._cumulative_rewards.values())) < 1e-9 if env._cumulative_rewards else True
    assert ended == RANDOM_GAMES


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_rewards_are_zero_sum_and_from_the_documented_set(name, n):
    env = make(name, n)
    rng = np.random.default_rng(5)
    for seed in range(30):
        env.reset(seed=seed)
        totals = dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            totals[agent] += reward
            env.step(None if term or trunc else random_legal(obs["action_mask"], rng))
        assert abs(sum(totals.values())) < 1e-9
        assert all(-1.0 - 1e-9 <= r <= 1.0 + 1e-9 for r in totals.values())


def _snapshot(env):
    return (
        env.game.state_dict(),
        env.agent_selection,
        dict(env._cumulative_rewards),
        {a: env.observe(a)["observation"].tobytes() for a in env.agents},
    )


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_illegal_actions_raise_and_change_nothing(name, n):
    env = make(name, n)
    rng = np.random.default_rng(9)
    checked = 0
    for seed in range(5):
        env.reset(seed=seed)
        for agent, obs in play(env, lambda a, o: random_legal(o["action_mask"], rng)):
            if checked > 60 * (seed + 1):
                continue
            before = _snapshot(env)
            illegal = np.flatnonzero(obs["action_mask"] == 0).tolist()
            bad = [-1, env.num_actions, 10**9, "1", 1.5, None]
            if illegal:
                bad.append(illegal[rng.integers(len(illegal))])
            for action in bad:
                with pytest.raises(envs.IllegalActionError) as info:
                    env.step(action)
                if isinstance(action, int) and action != None:  # noqa: E711
                    assert str(action) in str(info.value)
                assert env.game.decision() in str(info.value)
                assert _snapshot(env) == before
            checked += 1
    assert checked > 0


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_clone_is_independent_and_replays_the_same(name, n):
    env = make(name, n)
    rng = np.random.default_rng(3)
    env.reset(seed=11)
    for _ in range(int(rng.integers(3, 30))):
        if env.game.over:
            break
        env.step(random_legal(env.observe(env.agent_selection)["action_mask"], rng))
    before = _snapshot(env)
    copy = env.clone()
    assert _snapshot(copy) == before
    twin = env.clone()
    actions = np.random.default_rng(4)
    first = [
        obs["observation"].tobytes()
        for _, obs in play(copy, lambda a, o: random_legal(o["action_mask"], actions))
    ]
    assert _snapshot(env) == before, "playing a clone changed the original"
    actions = np.random.default_rng(4)
    second = [
        obs["observation"].tobytes()
        for _, obs in play(twin, lambda a, o: random_legal(o["action_mask"], actions))
    ]
    assert first == second, "two clones of one state played the same actions differently"


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_resample_hidden_changes_hidden_state_but_not_the_players_view(name, n):
    env = make(name, n)
    rng = np.random.default_rng(17)
    samples = changed = 0
    for seed in range(12):
        env.reset(seed=seed)
        for step, (agent, obs) in enumerate(play(env, lambda a, o: random_legal(o["action_mask"], rng))):
            if step % 7:
                continue
            for viewer in (agent, env.possible_agents[int(rng.integers(n))]):
                view = env.observe(viewer)
                copy = env.clone()
                copy.resample_hidden(viewer, seed=int(rng.integers(2**31)))
                after = copy.observe(viewer)
                assert np.array_equal(view["observation"], after["observation"]), (
                    f"{viewer}'s observation changed when only hidden information was re-dealt"
                )
                assert np.array_equal(view["action_mask"], after["action_mask"])
                assert copy.view(viewer) == env.view(viewer), (
                    f"{viewer}'s text view changed when only hidden information was re-dealt"
                )
                assert copy.agent_selection == env.agent_selection
                samples += 1
                changed += copy.game.state_dict() != env.game.state_dict()
    assert samples > 20
    assert changed > samples // 10, f"re-dealing changed the hidden state only {changed}/{samples} times"


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_resampled_games_play_on_to_a_legal_end(name, n):
    env = make(name, n)
    rng = np.random.default_rng(21)
    env.reset(seed=3)
    for _ in range(15):
        if env.game.over:
            return
        env.step(random_legal(env.observe(env.agent_selection)["action_mask"], rng))
    env.resample_hidden(env.agent_selection, seed=99)
    for agent, obs in play(env, lambda a, o: random_legal(o["action_mask"], rng)):
        assert obs["action_mask"].any()


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_global_random_generators_are_not_used(name, n):
    env = make(name, n)
    quiet = random_trajectory(env, seed=31)
    env.reset(seed=31)
    rng = np.random.default_rng(0)
    out = []
    for agent, obs in play(env, lambda a, o: random_legal(o["action_mask"], rng)):
        np.random.seed(int(rng.integers(1000)))
        np.random.random()
        random.seed(int(rng.integers(1000)))
        random.random()
        out.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes()))
    out.append(tuple(sorted(env.rewards.items())))
    # the noisy run used the same action generator draws plus extra ones: compare the first decisions
    assert out[0] == quiet[0]
    noisy_env = make(name, n)
    noisy_env.reset(seed=31)
    actions = np.random.default_rng(0)
    replay = []
    for agent, obs in play(noisy_env, lambda a, o: random_legal(o["action_mask"], actions)):
        np.random.random()
        random.random()
        replay.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes()))
    replay.append(tuple(sorted(noisy_env.rewards.items())))
    assert replay == quiet


_HASH_SCRIPT = """
import hashlib, sys
from fowlplay import envs
from fowlplay.envs.core.testing import random_trajectory
env = envs.make(sys.argv[1], num_players=int(sys.argv[2]))
print(hashlib.sha256(repr(random_trajectory(env, seed=5)).encode()).hexdigest())
"""


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_same_seed_same_game_across_processes_and_hash_seeds(name):
    n = envs.player_counts(name)[-1]
    digests = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run(
            [sys.executable, "-c", _HASH_SCRIPT, name, str(n)],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            check=True,
        )
        digests.add(out.stdout.strip())
    assert len(digests) == 1


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_render_ansi_and_human(name, n):
    env = make(name, n, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and text.strip()
    human = make(name, n, render_mode="human")
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        human.reset(seed=0)
        human.step(
            random_legal(human.observe(human.agent_selection)["action_mask"], np.random.default_rng(0))
        )
    assert buffer.getvalue().strip()
    with pytest.raises(ValueError, match="render_mode"):
        make(name, n, render_mode="rgb_array")


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_action_names_exist_for_every_legal_action(name, n):
    env = make(name, n)
    rng = np.random.default_rng(2)
    env.reset(seed=4)
    for step, (agent, obs) in enumerate(play(env, lambda a, o: random_legal(o["action_mask"], rng))):
        if step > 200:
            continue
        for action in np.flatnonzero(obs["action_mask"]):
            label = env.action_name(int(action))
            assert isinstance(label, str) and label
        assert isinstance(env.decision(), str) and env.decision()


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_bad_options_are_clear_errors(name):
    counts = envs.player_counts(name)
    for bad in (counts.start - 1, counts.stop, "3", 2.5):
        with pytest.raises(ValueError, match="num_players"):
            envs.make(name, num_players=bad)
    with pytest.raises(ValueError, match="allowed"):
        envs.make(name, num_playerz=counts.start)
    with pytest.raises(ValueError, match="unknown game"):
        envs.make(name + "_nope")


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_calls_before_reset_are_clear_errors(name):
    env = envs.make(name)
    with pytest.raises(envs.EnvOrderError, match="reset"):
        env.step(0)
    with pytest.raises(envs.EnvOrderError, match="reset"):
        env.observe(env.possible_agents[0])


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_pettingzoo_style_module(name):
    module = envs.env_module(name)
    assert module.raw_env.metadata["name"] == name
    env = module.env(num_players=envs.player_counts(name)[0])
    assert env.metadata["name"] == name
    import importlib

    assert importlib.import_module(f"fowlplay.envs.{name}") is module


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_rules_page_holds_the_action_and_observation_tables(name):
    env = envs.make(name)
    page = (ROOT / "docs" / "games" / f"{name}.md").read_text()
    assert env.game_cls.action_layout(env.options).table() in page, "action table in the docs drifted"
    assert env.observer.layout_table() in page, "observation layout in the docs drifted"
    assert "house" in page.lower(), "house rules must be marked on the rules page"


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_baseline_decides_from_its_observation_with_legal_actions(name, n):
    module = envs.env_module(name)
    env = make(name, n)
    agent = module.BaselineAgent(env.options, seed=0)
    env.reset(seed=8)
    for _, obs in play(env, lambda a, o: agent.act(o["observation"], o["action_mask"])):
        pass
    assert env.agents == []


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_docstring_and_rules_page_name_every_option(name):
    import dataclasses

    env = envs.make(name)
    page = (ROOT / "docs" / "games" / f"{name}.md").read_text()
    for field in dataclasses.fields(env.options_cls):
        assert field.name in type(env).__doc__, f"option {field.name} missing from the env docstring"
        assert f"`{field.name}`" in page, f"option {field.name} missing from the rules page"
