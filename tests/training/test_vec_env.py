"""SelfPlayVecEnv: the same episodes as one SelfPlayEnv per game, opponents' forward passes batched."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.training.agent import PolicyAgent
from fowlplay.training.policy import (
    action_probabilities,
    batch_probabilities,
    build_policy,
    policy_state,
)
from fowlplay.training.sb3.selfplay import SelfPlayEnv
from fowlplay.training.sb3.vec_env import SelfPlayVecEnv, play_batched
from stable_baselines3.common.vec_env import DummyVecEnv

NETWORK = {"net_arch": [16], "activation": "tanh"}
EVERY_KIND = {"random": 1.0, "baseline": 1.0, "latest": 1.0, "snapshot": 1.0}


def random_state(env, seed: int) -> dict[str, np.ndarray]:
    """Weights of a freshly initialised policy (torch's default init, seeded) for `env`'s spaces."""
    import torch

    torch.manual_seed(seed)
    return policy_state(build_policy(env.observation_space, env.action_space, **NETWORK))


def trace(vec, steps: int, seed: int, seen: set | None = None) -> list:
    """Everything a learner sees from `vec` over `steps` vector steps of seeded random legal play.

    The opponent kinds met along the way are added to `seen`.
    """
    seen = set() if seen is None else seen
    chooser = np.random.default_rng(seed)
    vec.seed(seed)
    obs = vec.reset()
    out = [obs.tolist(), [info["opponents"] for info in vec.reset_infos]]
    for _ in range(steps):
        seen.update(label for labels in vec.get_attr("opponent_labels") for label in labels)
        masks = np.stack(vec.env_method("action_masks"))
        actions = np.array([chooser.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, dones, infos = vec.step(actions)
        out.append((obs.tolist(), rewards.tolist(), dones.tolist()))
        for info in infos:
            info = {k: v for k, v in info.items() if k != "terminal_observation"}
            out.append(sorted(info.items()))
        out.append([info["opponents"] for info in vec.reset_infos])
    return out


@pytest.mark.parametrize("game", envs.ENV_NAMES)
def test_same_episodes_as_one_selfplay_env_per_game(game):
    kwargs = {"game": game, "opponents": EVERY_KIND, "network": NETWORK, "snapshot_window": 2}
    batched = SelfPlayVecEnv(3, **kwargs)
    single = DummyVecEnv([lambda: SelfPlayEnv(**kwargs)] * 3)
    for vec in (batched, single):
        vec.env_method("set_latest", random_state(batched, 1))
        vec.env_method("add_snapshot", "a", random_state(batched, 2))
        vec.env_method("add_snapshot", "b", random_state(batched, 3))
    labels: set[str] = set()
    assert trace(batched, 60, seed=7, seen=labels) == trace(single, 60, seed=7)
    # Network opponents took part in the compared episodes, not only random and baseline ones.
    assert {"latest", "snapshot"} & labels, labels


def test_seeded_runs_replay_and_different_seeds_differ():
    kwargs = {"game": "murray_frog_v0", "opponents": EVERY_KIND, "network": NETWORK}
    vec = SelfPlayVecEnv(4, **kwargs)
    vec.env_method("set_latest", random_state(vec, 1))
    vec.env_method("add_snapshot", "a", random_state(vec, 2))
    first = trace(vec, 30, seed=3)
    assert trace(vec, 30, seed=3) == first
    assert trace(vec, 30, seed=4) != first


def test_finished_episodes_reset_and_keep_their_last_observation():
    vec = SelfPlayVecEnv(2, game="chicken_v1", env_options={"max_value": 3, "feet": 0, "target": 2})
    vec.seed(0)
    vec.reset()
    chooser = np.random.default_rng(0)
    finished = 0
    for _ in range(200):
        masks = np.stack(vec.env_method("action_masks"))
        obs, _rewards, dones, infos = vec.step(np.array([chooser.choice(np.flatnonzero(m)) for m in masks]))
        for i in np.flatnonzero(dones):
            finished += 1
            assert infos[i]["outcome"] in ("win", "loss", "draw")
            assert infos[i]["terminal_observation"].shape == obs[i].shape
            assert vec.envs[i].action_masks().any()  # a new episode is under way
            assert np.array_equal(obs[i], vec.envs[i].aec.observe(vec.envs[i].learner)["observation"])
    assert finished >= 10


def test_pool_is_shared_and_pool_methods_run_once():
    vec = SelfPlayVecEnv(3, game="chicken_v1", opponents={"latest": 1.0, "snapshot": 1.0}, network=NETWORK)
    assert all(env.pool is vec.pool for env in vec.envs)
    vec.env_method("set_latest", random_state(vec, 1))
    latest = vec.pool._latest
    vec.env_method("set_latest", random_state(vec, 2))
    assert vec.pool._latest is latest  # loaded in place, not rebuilt per environment
    assert vec.env_method("add_snapshot", "step_1", random_state(vec, 3)) == [None] * 3
    assert vec.env_method("snapshot_names") == [["step_1"]] * 3


def test_network_decisions_of_all_environments_share_one_forward_pass(monkeypatch):
    import fowlplay.training.sb3.vec_env as vec_env

    calls = []

    def counted(policy, observations, masks):
        calls.append(len(observations))
        return batch_probabilities(policy, observations, masks)

    monkeypatch.setattr(vec_env, "batch_probabilities", counted)
    vec = SelfPlayVecEnv(8, game="chicken_v1", opponents={"latest": 1.0}, network=NETWORK, learner_seat=1)
    vec.env_method("set_latest", random_state(vec, 1))
    vec.seed(0)
    vec.reset()
    # Seat 0 opens every game: eight opening moves of the one `latest` network in one pass.
    assert calls[0] == 8


def test_batched_probabilities_match_one_at_a_time():
    env = SelfPlayEnv("murder_most_fowl_v0")
    policy = build_policy(env.observation_space, env.action_space, **NETWORK)
    rows = []
    for seed in range(6):
        obs, _ = env.reset(seed=seed)
        rows.append((obs, env.action_masks()))
    batch = batch_probabilities(policy, np.stack([o for o, _ in rows]), np.stack([m for _, m in rows]))
    for (obs, mask), probs in zip(rows, batch):
        assert probs[~mask].sum() == 0 and probs.sum() == pytest.approx(1.0)
        np.testing.assert_allclose(probs, action_probabilities(policy, obs, mask), rtol=1e-5, atol=1e-9)
    with pytest.raises(ValueError, match="mask is empty"):
        batch_probabilities(policy, np.stack([rows[0][0]]), np.zeros((1, env.action_space.n), bool))


def test_a_network_opponent_draws_from_its_own_generator():
    env = SelfPlayEnv("chicken_v1")
    policy = build_policy(env.observation_space, env.action_space, **NETWORK)
    obs, _ = env.reset(seed=0)
    mask = env.action_masks()
    probs = action_probabilities(policy, obs, mask)
    one, two = PolicyAgent(policy, seed=5), PolicyAgent(policy, seed=5)
    assert [one.act(obs, mask) for _ in range(20)] == [two.choose(probs) for _ in range(20)]


def test_errors_surface_from_the_batched_env():
    with pytest.raises(ValueError, match="n_envs"):
        SelfPlayVecEnv(0, game="chicken_v1")
    vec = SelfPlayVecEnv(2, game="chicken_v1", illegal_action="raise")
    vec.reset()
    from fowlplay.envs.core.errors import IllegalActionError

    with pytest.raises(IllegalActionError):
        vec.step(np.array([99, 99]))
    assert play_batched([]) == []


def test_a_training_run_is_deterministic_for_its_seed(tmp_path):
    from fowlplay.training.checkpoint import load_checkpoint
    from fowlplay.training.config import load_config
    from fowlplay.training.train import train

    def run(seed: int, name: str) -> dict[str, np.ndarray]:
        config = load_config(
            Path(__file__).resolve().parents[2] / "configs" / "chicken_v1.yaml",
            {
                "seed": seed,
                "out": str(tmp_path / name),
                "total_timesteps": 512,
                "n_envs": 4,
                "vec_env": "batched",
                "ppo.n_steps": 64,
                "ppo.batch_size": 128,
                "ppo.n_epochs": 1,
                "ppo.net_arch": [16],
                "opponents.snapshot_every": 128,  # snapshots join the pool within the run
                "checkpoint_every": 0,
                "progress_bar": False,
                "tensorboard": False,
            },
        )
        model, _ = load_checkpoint(train(config, verbose=False).checkpoint)
        return policy_state(model.policy)

    first, again, other = run(0, "a"), run(0, "b"), run(1, "c")
    assert all(np.array_equal(first[key], again[key]) for key in first)
    assert not all(np.array_equal(first[key], other[key]) for key in first)
