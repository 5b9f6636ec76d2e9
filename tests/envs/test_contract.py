"""The environment contract, checked for every registered game at every supported player count.

The action-mask contract itself is `fowlplay.envs.checks.check_aec_env` (the toolkit users run on
their own envs): one report per game and player count, one test per check. The tests below it hold
what is particular to fowlplay (error messages, rendering, options, rules pages, baselines).
"""

from __future__ import annotations

import functools
import io
import os
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.checks import CHECK_NAMES, PASS, SKIPPED, check_aec_env
from fowlplay.envs.core.testing import play, random_legal

ROOT = Path(__file__).resolve().parents[2]
#: Masked random games walked per game and player count (the suite plays thousands in all).
RANDOM_GAMES = int(os.environ.get("FOWLPLAY_RANDOM_GAMES", "150"))

CASES = [(name, n) for name in envs.ENV_NAMES for n in envs.player_counts(name)]
IDS = [f"{name}-{n}p" for name, n in CASES]
CHECK_CASES = [(name, n, check) for name, n in CASES for check in CHECK_NAMES]
CHECK_IDS = [f"{name}-{n}p-{check}" for name, n, check in CHECK_CASES]


def make(name: str, n: int, **kwargs):
    return envs.make(name, num_players=n, **kwargs)


@functools.cache
def contract_report(name: str, n: int):
    """The toolkit's report for one game and player count, at the suite's budgets (computed once)."""
    largest = envs.player_counts(name)[-1]
    return check_aec_env(
        name,
        players=n,
        games=RANDOM_GAMES,
        api_cycles=300,
        exact_decisions=40,
        hidden_samples=100,
        waiting_every=10,
        # one fresh process per game is enough: the seed's meaning does not depend on the count
        skip=() if n == largest else ("reset_seed_across_processes",),
    )


@pytest.mark.parametrize(("name", "n", "check"), CHECK_CASES, ids=CHECK_IDS)
def test_action_mask_contract(name, n, check):
    result = contract_report(name, n)[check]
    if check == "reset_seed_across_processes" and n != envs.player_counts(name)[-1]:
        assert result.status == SKIPPED
        return
    assert result.status == PASS, f"{check}: {result.message}; evidence {result.evidence}"


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_walked_games_are_zero_sum_win_rewards_and_redeals_change_hidden_state(name, n):
    report = contract_report(name, n)
    rewards = report["rewards"].data
    assert rewards["zero_sum"] and rewards["games"] == RANDOM_GAMES
    assert rewards["min_return"] >= -1.0 - 1e-9 and rewards["max_return"] <= 1.0 + 1e-9
    redeal = report["redeal_changes_hidden"].data
    assert redeal["samples"] > 20
    assert redeal["changed"] > redeal["samples"] // 10, f"re-dealing changed the hidden state only {redeal}"


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
        make(name, n, render_mode="rgb_array_list")  # rgb_array is supported: tests/envs/test_pictures.py


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
