"""`trainer: rllib`: the masked module, the seating of the pool, the export into our checkpoint
contract (every game, in-process), and Chicken runs end to end in subprocesses (train, evaluate,
SIGTERM, resume)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="trainer: rllib needs Ray RLlib: pip install 'fowlplay[rllib]'")

import torch
from fowlplay import envs
from fowlplay.evaluation.matches import play_game
from fowlplay.training.agent import PolicyAgent
from fowlplay.training.checkpoint import export_checkpoint
from fowlplay.training.config import ConfigError, TrainConfig, load_config
from fowlplay.training.policy import batch_probabilities
from fowlplay.training.rllib.env import LEARNER, FowlplayMultiAgentEnv, episode_seating
from fowlplay.training.rllib.modules import (
    BaselineModule,
    MaskedMLPModule,
    RandomModule,
    policy_weights,
)
from ray.rllib.core.columns import Columns

ROOT = Path(__file__).resolve().parents[2]
NETWORK = {"net_arch": [32, 16], "activation": "tanh"}
#: A run of a few hundred decisions: one snapshot, one periodic checkpoint, tiny updates.
TINY = [
    "--set", "trainer=rllib",
    "--n-envs", "2",
    "--set", "ppo.n_steps=32",
    "--set", "ppo.batch_size=64",
    "--set", "ppo.n_epochs=1",
    "--set", "ppo.net_arch=[16]",
    "--set", "rllib.envs_per_env_runner=4",
    "--set", "rllib.num_cpus=1",  # the trainer process alone: env runners and learners are in it
    "--set", "opponents.snapshot_every=64",
    "--set", "checkpoint_every=64",
    "--set", "eval_every=64",
    "--set", "eval_games=4",
    "--set", "tensorboard=false",
    "--no-progress",
]  # fmt: skip


def spaces(aec) -> dict:
    agent = aec.possible_agents[0]
    return {"observation_space": aec.observation_space(agent), "action_space": aec.action_space(agent)}


def masked_module(aec, seed: int = 0) -> MaskedMLPModule:
    torch.manual_seed(seed)
    return MaskedMLPModule(model_config=NETWORK, **spaces(aec))


def as_batch(observations: list[dict]) -> dict:
    return {
        Columns.OBS: {
            key: torch.as_tensor(np.stack([obs[key] for obs in observations]))
            for key in ("observation", "action_mask")
        }
    }


def rollout_observations(game: str, games: int = 2, seed: int = 0) -> list[dict]:
    """Every observation a seat is asked to act on, in a few games of uniformly random play through
    the RLlib env (so the env wrapper is exercised too)."""
    env = FowlplayMultiAgentEnv({"game": game, "env_options": {}})
    rng = np.random.default_rng(seed)
    seen = []
    for episode in range(games):
        obs, _ = env.reset(seed=seed + episode)
        done = False
        while not done:
            (agent, observation), *_ = obs.items()
            seen.append(observation)
            action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
            obs, rewards, terminated, truncated, infos = env.step({agent: action})
            done = terminated["__all__"] or truncated["__all__"]
            assert not any("illegal_action" in info for info in infos.values())
        assert sum(rewards.values()) == pytest.approx(0.0) or truncated["__all__"]
    return seen


@pytest.fixture(scope="module", params=envs.ENV_NAMES)
def game_observations(request):
    return request.param, rollout_observations(request.param)


def test_the_masked_module_never_picks_an_illegal_action(game_observations):
    game, observations = game_observations
    module = masked_module(envs.make(game))
    batch = as_batch(observations)
    masks = batch[Columns.OBS]["action_mask"].numpy().astype(bool)
    torch.manual_seed(1)
    for forward in (module.forward_exploration, module.forward_inference, module.forward_train):
        logits = forward(as_batch(observations))[Columns.ACTION_DIST_INPUTS]
        dist = torch.distributions.Categorical(logits=logits)
        for _ in range(5):
            actions = dist.sample().numpy()
            assert masks[np.arange(len(actions)), actions].all()
        probs = dist.probs.detach().numpy()
        assert probs[~masks].max() == 0.0  # not even a rounding error of probability on a masked action


def test_random_and_baseline_seats_play_legal_moves(game_observations):
    game, observations = game_observations
    aec = envs.make(game)
    batch = as_batch(observations)
    masks = batch[Columns.OBS]["action_mask"].numpy().astype(bool)
    baseline = BaselineModule(model_config={"game": game, "env_options": {}}, **spaces(aec))
    logits = baseline.forward_inference(as_batch(observations))[Columns.ACTION_DIST_INPUTS]
    chosen = torch.distributions.Categorical(logits=logits).sample().numpy()
    agent = envs.env_module(game).BaselineAgent(aec.unwrapped.options)
    expected = [agent.act(obs["observation"], obs["action_mask"]) for obs in observations]
    assert chosen.tolist() == expected
    logits = RandomModule(model_config={}, **spaces(aec)).forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
    probs = torch.distributions.Categorical(logits=logits).probs.numpy()
    legal_counts = masks.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(probs, np.where(masks, 1.0 / legal_counts, 0.0), atol=1e-6)


def test_export_round_trip_gives_identical_probabilities_and_evaluation_plays_it(game_observations, tmp_path):
    game, observations = game_observations
    aec = envs.make(game)
    module = masked_module(aec, seed=3)
    config = TrainConfig(game=game, trainer="rllib")
    config.ppo.net_arch, config.ppo.activation = NETWORK["net_arch"], NETWORK["activation"]
    stem = tmp_path / "final"
    export_checkpoint(aec, config, stem, policy_weights(module), 0, "final", {"state": None})

    agent = PolicyAgent.from_checkpoint(tmp_path, env=aec, seed=0)
    batch = as_batch(observations)
    theirs = batch_probabilities(
        agent.policy, batch[Columns.OBS]["observation"].numpy(), batch[Columns.OBS]["action_mask"].numpy()
    )
    logits = module.forward_inference(as_batch(observations))[Columns.ACTION_DIST_INPUTS].detach()
    ours = torch.softmax(logits.double(), dim=1).numpy()
    np.testing.assert_array_equal(theirs > 0, ours > 0)
    np.testing.assert_allclose(theirs, ours, rtol=1e-12, atol=0)  # softmax in numpy vs torch: 1 ulp
    with torch.no_grad():  # the logits themselves are bit for bit the same
        obs = batch[Columns.OBS]["observation"].float()
        sb3_logits = agent.policy.action_net(agent.policy.mlp_extractor.forward_actor(obs)).numpy()
    legal = batch[Columns.OBS]["action_mask"].numpy().astype(bool)
    np.testing.assert_array_equal(sb3_logits[legal], logits.numpy()[legal])

    seats = len(aec.possible_agents)
    players = [agent, *(PolicyAgent.from_checkpoint(stem, seed=seat) for seat in range(1, seats))]
    result = play_game(aec, players, 7, list(range(seats)))
    assert result["error"] is None and sum(result["illegal"]) == 0


def test_the_rllib_env_ends_a_game_on_an_illegal_action_as_a_loss():
    env = FowlplayMultiAgentEnv({"game": "chicken_v1", "env_options": {}})
    obs, _ = env.reset(seed=0)
    ((agent, observation),) = obs.items()
    while observation["action_mask"].all():  # a first bid may be anything; bid 1, and 1 is then too low
        obs, *_ = env.step({agent: 1})
        ((agent, observation),) = obs.items()
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    _, rewards, terminated, _, infos = env.step({agent: illegal})
    assert terminated["__all__"] and rewards[agent] == -1.0
    assert infos[agent]["illegal_action"]["action"] == illegal


def test_a_cut_off_game_pays_the_truncation_reward():
    env = FowlplayMultiAgentEnv(
        {
            "game": "chicken_v1",
            "env_options": {"max_rounds": 1, "cap_ending": "draw"},
            "truncation_reward": -1.0,
        }
    )
    rng = np.random.default_rng(0)
    for episode in range(20):
        obs, _ = env.reset(seed=episode)
        while True:
            ((agent, observation),) = obs.items()
            action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
            obs, rewards, terminated, truncated, _ = env.step({agent: action})
            if terminated["__all__"] or truncated["__all__"]:
                break
        if truncated["__all__"]:
            assert set(rewards.values()) == {-1.0}
            return
    pytest.fail("no game was cut off by a one-round cap")


def test_each_episode_seats_the_learner_once_and_only_ready_opponents():
    agents = ["player_0", "player_1", "player_2"]
    weights = {"random": 0.2, "baseline": 0.3, "latest": 0.3, "snapshot": 0.2}
    seen = set()
    for episode in range(300):
        seating = episode_seating(f"ep{episode}", agents, 0, "random", weights, snapshots_ready=0)
        assert list(seating.values()).count(LEARNER) == 1 and set(seating) == set(agents)
        assert seating == episode_seating(f"ep{episode}", agents, 0, "random", weights, 0)
        assert not any(module.startswith("snapshot") for module in seating.values())
        seen |= set(seating.values())
    assert seen == {LEARNER, "random", "baseline", "latest"}
    seats = [episode_seating(f"e{i}", agents, 0, 1, weights, 2) for i in range(200)]
    assert all(s["player_1"] == LEARNER for s in seats)
    snapshots = {m for s in seats for m in s.values() if m.startswith("snapshot")}
    assert snapshots == {"snapshot_0", "snapshot_1"}


def test_the_config_names_what_rllib_cannot_do():
    with pytest.raises(ConfigError, match=r"trainer must be one of \['ppo', 'psro', 'dqn', 'rllib', 'jax'\]"):
        load_config(ROOT / "configs" / "chicken_v1.yaml", {"trainer": "rlib"})
    with pytest.raises(ConfigError, match=r"decision_cost 0\.1 is not supported with trainer: rllib"):
        load_config(ROOT / "configs" / "chicken_v1.yaml", {"trainer": "rllib", "decision_cost": 0.1})


# ----- end to end, in subprocesses -------------------------------------------------------------
def fowlplay_train(*args: str, timeout: float = 480) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fowlplay.training.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.slow
def test_a_short_chicken_run_writes_a_checkpoint_evaluation_plays(tmp_path):
    out = tmp_path / "run"
    config = str(ROOT / "configs" / "chicken_v1.yaml")
    result = fowlplay_train("--config", config, "--out", str(out), "--total-timesteps", "128", *TINY)
    assert result.returncode == 0, result.stderr
    metadata = json.loads((out / "final.json").read_text())
    assert metadata["trainer"] == "rllib" and metadata["timesteps"] >= 128
    assert (out / metadata["rllib"]["state"]).is_dir() and list((out / "snapshots").glob("step_*.npz"))
    assert list((out / "checkpoints").glob("step_*.json"))
    # The best checkpoint by periodic evaluation, as the SB3 trainers keep it (`ckpt:RUN` plays it).
    best = json.loads((out / "best.json").read_text())
    assert best["kind"] == "best" and best["evaluation"]["games"] == 4
    assert metadata["best"]["checkpoint"] == str(out / "best")
    assert (out / "evaluation.csv").read_text().startswith("timesteps,")
    assert (out / "logs" / "progress.csv").read_text().startswith("timesteps,")
    evaluation = subprocess.run(
        [sys.executable, "-m", "fowlplay.evaluation.cli", "--game", "chicken_v1", "--agents",
         f"t=ckpt:{out}", "random", "--matches", "2", "--out", str(tmp_path / "eval"), "--no-progress"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert evaluation.returncode == 0, evaluation.stderr
    assert "illegal actions: 0" in evaluation.stdout


@pytest.mark.slow
def test_sigterm_saves_a_checkpoint_that_resumes(tmp_path):
    out = tmp_path / "run"
    config = str(ROOT / "configs" / "chicken_v1.yaml")
    command = [sys.executable, "-m", "fowlplay.training.cli", "--config", config, "--out", str(out)]
    command += ["--total-timesteps", "10000000", *TINY, "--set", "checkpoint_every=0"]
    proc = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        progress = out / "logs" / "progress.csv"
        deadline = time.monotonic() + 180
        while not (progress.exists() and len(progress.read_text().splitlines()) >= 2):
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "training did not log within 180 s"
            time.sleep(0.2)
        os.kill(proc.pid, signal.SIGTERM)  # what `timeout` and batch schedulers send
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, stderr
    assert "stopped by SIGTERM; saved" in stderr and "Traceback" not in stderr
    (saved,) = sorted((out / "checkpoints").glob("step_*.json"))
    metadata = json.loads(saved.read_text())
    assert metadata["kind"] == "periodic" and metadata["trainer"] == "rllib"
    target = metadata["timesteps"] + 64
    result = fowlplay_train("--resume", str(out), "--total-timesteps", str(target), "--no-progress")
    assert result.returncode == 0, result.stderr
    assert f"resuming from {out / 'checkpoints' / saved.stem}" in result.stdout
    assert json.loads((out / "final.json").read_text())["timesteps"] >= target
    assert (out / "logs" / f"progress_resumed_{metadata['timesteps']}.csv").exists()


@pytest.mark.parametrize("game", envs.ENV_NAMES)
def test_rllibs_env_check_passes_every_game_built_to_lose_on_illegal_actions(game):
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    for _ in range(5):  # each check steps a different unmasked random action
        check_multiagent_environments(PettingZooEnv(envs.make(game, illegal_action="lose")))


@pytest.mark.slow
def test_the_rllib_recipe_of_the_ecosystem_page_runs(tmp_path):
    text = (ROOT / "docs" / "ecosystem.md").read_text()
    recipe = text.split("<!-- recipe: rllib -->\n```python\n", 1)[1].split("```", 1)[0]
    script = tmp_path / "recipe.py"
    script.write_text(recipe)
    result = subprocess.run(
        [sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stderr
    assert "env steps sampled:" in result.stdout
