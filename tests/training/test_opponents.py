"""The opponent pool: kinds and weights, the snapshot window, and snapshots in subprocess workers."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.core.agents import RandomAgent
from fowlplay.training.agent import PolicyAgent
from fowlplay.training.policy import build_policy, policy_state
from fowlplay.training.sb3.opponents import OpponentPool
from fowlplay.training.sb3.selfplay import SelfPlayEnv
from stable_baselines3.common.vec_env import SubprocVecEnv

NETWORK = {"net_arch": [16], "activation": "tanh"}
PASS = 0


def always_pass_state(env) -> dict[str, np.ndarray]:
    """Weights of a policy that passes whenever passing is legal (and it always is in Chicken)."""
    policy = build_policy(env.observation_space, env.action_space, **NETWORK)
    state = policy_state(policy)
    state["action_net.weight"][:] = 0.0
    state["action_net.bias"][:] = 0.0
    state["action_net.bias"][PASS] = 50.0
    return state


def test_kinds_are_drawn_by_weight_and_unavailable_ones_skipped():
    aec = envs.make("chicken_v1")
    pool = OpponentPool("chicken_v1", aec, {"random": 1, "baseline": 1, "latest": 2}, network=NETWORK)
    rng = np.random.default_rng(0)
    # No learner weights yet: only random and baseline can play.
    assert pool.available() == {"random": 0.5, "baseline": 0.5}
    pool.set_latest(always_pass_state(SelfPlayEnv("chicken_v1")))
    counts = Counter(pool.draw(rng)[0] for _ in range(4000))
    assert set(counts) == {"random", "baseline", "latest"}
    assert counts["latest"] / 4000 == pytest.approx(0.5, abs=0.03)
    kind, agent = pool.draw(np.random.default_rng(1))
    expected = {
        "random": RandomAgent,
        "baseline": envs.env_module("chicken_v1").BaselineAgent,
        "latest": PolicyAgent,
    }
    assert isinstance(agent, expected[kind])


def test_snapshot_window_keeps_the_newest():
    env = SelfPlayEnv("chicken_v1", opponents={"snapshot": 1.0}, snapshot_window=2, network=NETWORK)
    state = always_pass_state(env)
    assert env.pool.available() == {"random": 1.0}  # nothing to play yet
    for step in (100, 200, 300):
        env.add_snapshot(f"step_{step}", state)
    assert env.snapshot_names() == ["step_200", "step_300"]
    assert env.pool.available() == {"snapshot": 1.0}


def test_snapshot_opponent_plays_its_weights():
    env = SelfPlayEnv("chicken_v1", opponents={"snapshot": 1.0}, learner_seat=1, network=NETWORK)
    env.add_snapshot("passer", always_pass_state(env))
    for seed in range(20):
        obs, _ = env.reset(seed=seed)
        parts = env.aec.observer.decode(obs)
        # The opponent opened the bidding and passed: it is out, and there is no bid.
        assert parts["still_bidding"][1] == 0 and parts["current_bid"][0] == 0


def _make():
    return SelfPlayEnv("chicken_v1", opponents={"snapshot": 1.0}, learner_seat=1, network=NETWORK)


def test_snapshots_reach_subprocess_workers():
    vec = SubprocVecEnv([_make, _make], start_method="forkserver")
    try:
        local = SelfPlayEnv("chicken_v1")
        assert vec.env_method("snapshot_names") == [[], []]
        vec.env_method("add_snapshot", "passer", always_pass_state(local))
        assert vec.env_method("snapshot_names") == [["passer"], ["passer"]]
        vec.seed(0)
        for _ in range(10):
            observations = vec.reset()
            assert [info["opponents"] for info in vec.reset_infos] == [["snapshot"], ["snapshot"]]
            for obs in observations:
                parts = local.aec.observer.decode(obs)
                assert parts["still_bidding"][1] == 0 and parts["current_bid"][0] == 0
    finally:
        vec.close()
