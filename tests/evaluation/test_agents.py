"""Agent specs: built-ins, checkpoints (sampling and deterministic), and the errors users see."""

from __future__ import annotations

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.core.agents import RandomAgent
from fowlplay.evaluation.agents import AgentSpecError, make_agent, parse_spec, parse_specs
from fowlplay.evaluation.matches import EvalConfig
from fowlplay.evaluation.tournament import evaluate


def test_builtin_specs_and_labels():
    assert parse_spec("random").kind == "random"
    spec = parse_spec("greedy=baseline")
    assert (spec.label, spec.kind) == ("greedy", "baseline")
    assert [s.label for s in parse_specs(["random", "random", "baseline"])] == [
        "random",
        "random#2",
        "baseline",
    ]


def test_builtin_agents_play_legal_actions():
    env = envs.make("chicken_v1")
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    for text in ("random", "baseline"):
        agent = make_agent(text, env, seed=1)
        assert obs["action_mask"][agent.act(obs["observation"], obs["action_mask"])]
    assert isinstance(make_agent("random", env), RandomAgent)


@pytest.mark.parametrize("text", ["randmo", "ckpt:", "ckpt:no/such/run", "ckpt-det:nothing.zip"])
def test_unknown_spec_or_missing_checkpoint_lists_what_is_accepted(text):
    with pytest.raises(AgentSpecError, match="accepted: random, baseline, ckpt:PATH"):
        parse_spec(text)


# ----- checkpoints ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """An untrained small MaskablePPO checkpoint for 2-player Chicken, in a run directory."""
    pytest.importorskip("sb3_contrib")
    from fowlplay.training.checkpoint import make_metadata, save_checkpoint
    from fowlplay.training.sb3.selfplay import SelfPlayEnv
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    run = tmp_path_factory.mktemp("runs") / "tiny"
    vec = DummyVecEnv([lambda: SelfPlayEnv("chicken_v1")])
    model = MaskablePPO("MlpPolicy", vec, n_steps=32, batch_size=32, policy_kwargs={"net_arch": [8]}, seed=0)
    metadata = make_metadata(envs.make("chicken_v1"), {"note": "test"}, seed=0, timesteps=0, kind="final")
    save_checkpoint(model, run / "final", metadata)
    return run


def test_checkpoint_specs_resolve_and_label(checkpoint):
    assert parse_spec(str(checkpoint)).label == "tiny"
    spec = parse_spec(f"ckpt-det:{checkpoint / 'final.zip'}")
    assert (spec.kind, spec.deterministic, spec.label) == ("checkpoint", True, "tiny/final-det")
    assert parse_spec(str(checkpoint / "final")).path == str(checkpoint / "final")


def test_checkpoint_agent_plays_legal_actions_and_deterministic_is_greedy(checkpoint):
    env = envs.make("chicken_v1")
    env.reset(seed=2)
    obs = env.observe(env.agent_selection)
    greedy = make_agent(f"ckpt-det:{checkpoint}", env, seed=0)
    sampled = make_agent(f"ckpt:{checkpoint}", env, seed=0)
    probs = greedy.probabilities(obs["observation"], obs["action_mask"])
    assert greedy.act(obs["observation"], obs["action_mask"]) == int(np.argmax(probs))
    draws = {sampled.act(obs["observation"], obs["action_mask"]) for _ in range(200)}
    assert all(obs["action_mask"][a] for a in draws) and len(draws) > 1


@pytest.mark.parametrize(
    ("game", "players", "expected"),
    [
        ("chicken_v1", 3, "chicken_v1 with 3 players"),
        ("murder_she_crows_v1", 2, "this game is murder_she_crows_v1"),
    ],
)
def test_checkpoint_for_another_game_or_player_count_is_refused(checkpoint, game, players, expected):
    env = envs.make(game, num_players=players)
    with pytest.raises(AgentSpecError, match="is for chicken_v1 with 2 players") as err:
        make_agent(str(checkpoint), env)
    assert expected in str(err.value)


def test_checkpoint_against_baseline_is_reproducible_across_workers(checkpoint, tmp_path):
    cfg = EvalConfig("chicken_v1", tuple(parse_specs([f"ppo={checkpoint}", "baseline"])), 2, 2, seed=1)
    one = evaluate(cfg, tmp_path / "one", workers=1, progress=False, bootstrap=20)
    two = evaluate(cfg, tmp_path / "two", workers=2, progress=False, bootstrap=20)
    assert one["pairwise"] == two["pairwise"]
    assert one["games"]["illegal_actions"] == 0
    assert one["config"]["agents"][0]["kind"] == "checkpoint"
    assert "torch" in one["versions"]
