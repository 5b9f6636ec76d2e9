"""`trainer: jax`: its network is everyone's network (the exported checkpoint plays the JAX policy's
probabilities), and a short Chicken run trains, is scored by fowlplay-eval, stops on SIGTERM with a
checkpoint, and resumes."""

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

jax = pytest.importorskip("jax")

from fowlplay import envs  # noqa: E402 - after the skip: these need jax
from fowlplay.training.config import ConfigError, load_config  # noqa: E402
from fowlplay.training.jitted import ppo as jax_ppo  # noqa: E402
from fowlplay.training.policy import batch_probabilities, build_policy, load_policy_state  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def recorded_observations(name: str, count: int, seed: int = 0):
    """`count` (observation, mask) pairs met in seeded masked-random games of the reference env."""
    env = envs.make(name)
    rng = np.random.default_rng(seed)
    observations, masks = [], []
    game = 0
    while len(observations) < count:
        env.reset(seed=seed + game)
        game += 1
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            observations.append(obs["observation"])
            masks.append(obs["action_mask"])
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return np.asarray(observations[:count]), np.asarray(masks[:count])


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_the_exported_network_plays_the_jax_policys_probabilities(name):
    env = envs.make(name)
    agent = env.possible_agents[0]
    obs, masks = recorded_observations(name, 1000)
    params = jax_ppo.init_params(jax.random.PRNGKey(1), obs.shape[1], env.num_actions, [64, 64])
    # Away from the initialisation's tiny action head, so that the probabilities differ per action.
    noise = jax.random.split(jax.random.PRNGKey(2), len(params))
    params = {k: v + 0.3 * jax.random.normal(n, v.shape) for (k, v), n in zip(params.items(), noise)}
    ours = np.asarray(jax_ppo.probabilities(params, obs, masks.astype(bool), 2, "tanh"))
    policy = build_policy(
        env.observation_space(agent)["observation"], env.action_space(agent), [64, 64], "tanh"
    )
    load_policy_state(policy, {k: np.array(v) for k, v in params.items()})
    theirs = batch_probabilities(policy, obs, masks)
    assert np.abs(ours - theirs).max() < 1e-5
    assert (ours[masks == 0] == 0).all() and np.allclose(ours.sum(axis=1), 1, atol=1e-5)
    assert np.abs(ours - masks / masks.sum(1, keepdims=True)).max() > 0.05  # not uniform: a real test


def test_a_cell_embedding_is_exported_as_the_dense_layer_it_equals():
    from fowlplay.training.jitted.trainer import embedding_of

    name = "murder_most_fowl_v0"
    env = envs.make(name)
    agent = env.possible_agents[0]
    config = load_config(ROOT / "configs" / f"{name}.yaml", {"jax.cell_embedding": 3})
    embedding = embedding_of(config, env)
    grids = env.unwrapped.observer.offsets["grids"]
    assert (embedding.start, embedding.stop, embedding.dim) == (grids.start, grids.stop, 3)
    obs, masks = recorded_observations(name, 1000)
    params = jax_ppo.init_params(jax.random.PRNGKey(1), obs.shape[1], env.num_actions, [64, 64], embedding)
    # the first layer reads each cell's 3 codes, not its 9 features
    assert params["mlp_extractor.policy_net.0.weight"].shape == (64, obs.shape[1] - embedding.items * 6)
    noise = jax.random.split(jax.random.PRNGKey(2), len(params))
    params = {k: v + 0.3 * jax.random.normal(n, v.shape) for (k, v), n in zip(params.items(), noise)}
    ours = np.asarray(jax_ppo.probabilities(params, obs, masks.astype(bool), 2, "tanh", embedding))
    dense = {k: np.array(v) for k, v in jax_ppo.dense_weights(params, embedding).items()}
    policy = build_policy(
        env.observation_space(agent)["observation"], env.action_space(agent), [64, 64], "tanh"
    )
    load_policy_state(policy, dense)  # SB3's names and shapes alone: a plain checkpoint
    theirs = batch_probabilities(policy, obs, masks)
    assert np.abs(ours - theirs).max() < 1e-5
    assert np.abs(ours - masks / masks.sum(1, keepdims=True)).max() > 0.05
    # A broken export (each network's first layer multiplied out with the other network's map)
    # fails the same comparison.
    swapped = dict(params)
    pi, vf = "mlp_extractor.policy_net.0.embedding", "mlp_extractor.value_net.0.embedding"
    swapped[pi], swapped[vf] = params[vf], params[pi]
    load_policy_state(policy, {k: np.array(v) for k, v in jax_ppo.dense_weights(swapped, embedding).items()})
    assert np.abs(ours - batch_probabilities(policy, obs, masks)).max() > 1e-3
    with pytest.raises(ConfigError, match="needs an observation with a grids piece"):
        embedding_of(
            load_config(ROOT / "configs" / "chicken_v1.yaml", {"jax.cell_embedding": 2}),
            envs.make("chicken_v1"),
        )
    with pytest.raises(ConfigError, match="smaller than a cell's 9 features"):
        embedding_of(load_config(ROOT / "configs" / f"{name}.yaml", {"jax.cell_embedding": 9}), env)


def test_bad_jax_keys_are_named():
    config = ROOT / "configs" / "chicken_v1.yaml"
    with pytest.raises(ConfigError, match=r"unknown key 'jax\.num_env'"):
        load_config(config, {"trainer": "jax", "jax.num_env": 4})
    with pytest.raises(ConfigError, match=r"jax\.baseline must be one of"):
        load_config(config, {"trainer": "jax", "jax.baseline": "python"})
    with pytest.raises(ConfigError, match="must divide into"):
        load_config(config, {"trainer": "jax", "jax.num_envs": 3, "jax.n_steps": 3, "jax.num_minibatches": 2})
    with pytest.raises(
        ConfigError, match=r"jax\.num_envs \(2\) must give each of the pool's 4 opponent kinds"
    ):
        load_config(config, {"trainer": "jax", "jax.num_envs": 2, "jax.num_minibatches": 1})
    load_config(
        config, {"trainer": "jax", "jax.num_envs": 3, "jax.num_minibatches": 1, "jax.baseline": "off"}
    )
    # YAML reads an unquoted off as false (`--set jax.baseline=off`, `baseline: off`): it means "off"
    assert load_config(config, {"trainer": "jax", "jax.baseline": False}).jax.baseline == "off"
    with pytest.raises(ConfigError, match=r"decision_cost 0\.1 is not supported with trainer: jax"):
        load_config(config, {"trainer": "jax", "decision_cost": 0.1})
    fowl = ROOT / "configs" / "murder_most_fowl_v0.yaml"
    assert load_config(fowl, {"trainer": "jax", "shaping": 0.5}).shaping == 0.5
    with pytest.raises(ConfigError, match=r"shaping 0\.5 is not supported with trainer: rllib"):
        load_config(fowl, {"trainer": "rllib", "shaping": 0.5})


#: A run of a few thousand decisions with a tiny network and batch (compiles in well under a minute).
TINY = [
    "--set", "trainer=jax",
    "--set", "jax.num_envs=8",
    "--set", "jax.n_steps=16",
    "--set", "jax.num_minibatches=2",
    "--set", "ppo.n_epochs=1",
    "--set", "ppo.net_arch=[16]",
    "--set", "opponents.snapshot_every=128",
    "--set", "checkpoint_every=256",
    "--set", "eval_every=256",
    "--set", "eval_games=4",
    "--set", "tensorboard=false",
    "--no-progress",
]  # fmt: skip


def fowlplay(module: str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.slow
def test_a_short_run_trains_is_scored_stops_on_sigterm_and_resumes(tmp_path):
    out = tmp_path / "run"
    config = str(ROOT / "configs" / "chicken_v1.yaml")
    result = fowlplay(
        "fowlplay.training.cli", "--config", config, "--out", str(out), "--total-timesteps", "512", *TINY
    )
    assert result.returncode == 0, result.stderr
    final = json.loads((out / "final.json").read_text())
    assert final["trainer"] == "jax" and final["timesteps"] >= 512
    assert final["policy"]["net_arch"] == [16] and (out / "final.jax.npz").is_file()
    assert list((out / "snapshots").glob("step_*.npz")) and list((out / "checkpoints").glob("step_*.json"))
    best = json.loads((out / "best.json").read_text())
    assert best["kind"] == "best" and best["evaluation"]["games"] == 4
    assert (out / "logs" / "progress.csv").read_text().startswith("timesteps,iteration,")
    evaluation = fowlplay(
        "fowlplay.evaluation.cli", "--game", "chicken_v1", "--agents", f"t=ckpt:{out}", "random",
        "--matches", "2", "--out", str(tmp_path / "eval"), "--no-progress", timeout=300,
    )  # fmt: skip
    assert evaluation.returncode == 0, evaluation.stderr
    assert "illegal actions: 0" in evaluation.stdout

    # A resume goes on from the final checkpoint's weights, optimizer and counters.
    resumed = fowlplay(
        "fowlplay.training.cli", "--resume", str(out), "--total-timesteps", "1024", "--no-progress"
    )
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((out / "final.json").read_text())["timesteps"] >= 1024
    assert (out / "logs" / "progress_resumed_512.csv").is_file()

    # SIGTERM saves a checkpoint and says so in one line; exit 143.
    long = tmp_path / "long"
    command = [sys.executable, "-m", "fowlplay.training.cli", "--config", config, "--out", str(long)]
    command += [
        "--total-timesteps",
        "100000000",
        *TINY,
        "--set",
        "checkpoint_every=0",
        "--set",
        "eval_every=0",
    ]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 400
    while (
        not (long / "logs" / "progress.csv").exists()
        or len((long / "logs" / "progress.csv").read_text().splitlines()) < 3
    ):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.5)
    os.kill(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert "stopped by SIGTERM" in err and "Traceback" not in err
    saved = [p for p in (long / "checkpoints").glob("step_*.json")]
    assert saved and json.loads(saved[0].read_text())["kind"] == "periodic"


def test_the_baseline_callback_decides_only_the_rows_it_is_asked_for(monkeypatch):
    from fowlplay.training.jitted.trainer import baseline_callback

    config = load_config(ROOT / "configs" / "chicken_v1.yaml", {"trainer": "jax"})
    aec = envs.make("chicken_v1")
    asked = []

    def act(self, observation, action_mask):
        asked.append(observation.copy())
        return int(np.flatnonzero(action_mask)[-1])

    monkeypatch.setattr(envs.env_module("chicken_v1").BaselineAgent, "act", act)
    obs, masks = recorded_observations("chicken_v1", 4)
    wanted = np.array([True, False, False, True])
    baseline = jax.jit(baseline_callback(config, aec))
    actions = np.asarray(baseline(obs, masks.astype(bool), np.zeros(4, np.int32), wanted))
    assert len(asked) == 2 and (np.asarray(asked) == obs[wanted]).all()
    assert (actions[wanted] == [np.flatnonzero(m)[-1] for m in masks[wanted]]).all()
    assert (actions[~wanted] == 0).all()


def test_the_baseline_is_asked_only_for_the_opponent_decisions_of_the_games_it_seats():
    """Every row of the batch runs the rollout's loop until the last row waits: the baseline's host
    callback must be asked only for an opponent's decision in a game that seats it."""
    twin = envs.make_jax("chicken_v1")
    num_envs = 4
    s = jax_ppo.Settings(
        num_envs=num_envs, num_steps=6, net_arch=(8,), activation="tanh", gamma=1.0, gae_lambda=1.0,
        clip_range=0.2, ent_coef=0.0, vf_coef=0.5, max_grad_norm=0.5, n_epochs=1, minibatch_size=4,
        snapshot_slots=1, truncation_reward=None, learner_seat=0, opponent_weights=(0.0, 0.0, 0.5, 0.5),
    )  # fmt: skip
    asked, skipped, widths = [], [], set()

    def decide(obs, mask, seat, wanted):
        seat, wanted = np.asarray(seat), np.asarray(wanted)
        widths.add(len(seat))
        asked.extend(seat[wanted].tolist())
        skipped.extend(seat[~wanted].tolist())
        return np.asarray(mask).argmax(-1).astype(np.int32)

    def baseline(obs, mask, seat, wanted):
        shape = jax.ShapeDtypeStruct(mask.shape[:-1], jax.numpy.int32)
        return jax.pure_callback(decide, shape, obs, mask, seat, wanted, vmap_method="expand_dims")

    games = jax_ppo.LearnerGames(twin, s, baseline)
    params = jax_ppo.init_params(jax.random.PRNGKey(0), twin.observation_shape[0], twin.num_actions, [8])
    opponents = jax_ppo.Opponents(jax_ppo.empty_snapshots(params, 1), jax.numpy.int32(0))
    keys = jax.random.split(jax.random.PRNGKey(3), num_envs)
    batch = jax.jit(jax.vmap(games.reset))(keys, jax.numpy.asarray(games.kinds))
    kinds = np.asarray(batch.opponent)
    assert (kinds == jax_ppo.RANDOM).any() and (kinds == jax_ppo.BASELINE).any()  # the seed's pool
    rollout = jax.jit(jax_ppo.make_rollout(games))
    batch, _, trajectory, _ = rollout(params, batch, jax.random.PRNGKey(4), opponents)
    assert np.asarray(trajectory.valid).all()
    assert asked and set(asked) == {1}  # the opponent's seat only, never the learner's decision
    assert 0 in skipped  # the learner's own decisions in the games the baseline seats: not asked
    # Only the baseline's rows reach it (the random opponent's games are never passed).
    assert widths == {int((kinds == jax_ppo.BASELINE).sum())} and 0 < min(widths) < num_envs
    # Every game waits at the learner's decision, so its value bootstraps the rollout's last slot.
    assert (np.asarray(batch.state.current_player) == 0).all()


def test_opponent_rows_follow_the_pool_weights_by_largest_remainder():
    """Each opponent kind gets its share of the rows (largest remainder), at least one if its
    weight is positive, none if zero, rows of one kind side by side."""
    rows = jax_ppo.opponent_rows((0.3, 0.2, 0.2, 0.3), 128)
    assert np.bincount(rows, minlength=4).tolist() == [38, 26, 26, 38]
    assert (np.diff(rows) >= 0).all()
    assert np.bincount(jax_ppo.opponent_rows((0.05, 0.05, 0.85, 0.05), 16), minlength=4).tolist() == [
        1,
        1,
        13,
        1,
    ]
    assert np.bincount(jax_ppo.opponent_rows((1.0, 0.0, 0.0, 0.0), 5), minlength=4).tolist() == [5, 0, 0, 0]
    assert np.bincount(jax_ppo.opponent_rows((0.5, 0.0, 0.5, 0.0), 7), minlength=4).tolist()[1::2] == [0, 0]


def rollout_against_random(num_envs: int, num_steps: int, name: str = "chicken_v1", **settings):
    """One rollout of the game (Chicken unless named) against the uniform random opponent, from a
    fixed deal and key: (the games after it, the trajectory as numpy arrays, the episodes)."""
    twin = envs.make_jax(name)
    s = jax_ppo.Settings(**{
        "num_envs": num_envs, "num_steps": num_steps, "net_arch": (8,), "activation": "tanh", "gamma": 1.0,
        "gae_lambda": 1.0, "clip_range": 0.2, "ent_coef": 0.0, "vf_coef": 0.5, "max_grad_norm": 0.5,
        "n_epochs": 1, "minibatch_size": 4, "snapshot_slots": 1, "learner_seat": None,
        "opponent_weights": (0.0, 0.0, 1.0, 0.0), **settings,
    })  # fmt: skip
    games = jax_ppo.LearnerGames(twin, s)
    params = jax_ppo.init_params(jax.random.PRNGKey(0), twin.observation_shape[0], twin.num_actions, [8])
    opponents = jax_ppo.Opponents(jax_ppo.empty_snapshots(params, 1), jax.numpy.int32(0))
    batch = jax.jit(jax.vmap(games.reset))(
        jax.random.split(jax.random.PRNGKey(5), num_envs), jax.numpy.asarray(games.kinds)
    )
    rollout = jax.jit(jax_ppo.make_rollout(games))
    after, _, trajectory, episodes = rollout(params, batch, jax.random.PRNGKey(6), opponents)
    return after, jax.tree_util.tree_map(np.asarray, trajectory), episodes


def test_a_rollout_keeps_each_learner_decision_and_the_rewards_until_its_next():
    """The rollout's slots against the twin replayed by hand: each slot holds the learner's
    observation, mask and action at its decision, the learner's rewards up to its next decision and
    whether the game ended in between; a game's opening moves before the learner's first decision
    reward no slot."""
    num_envs, num_steps = 3, 400
    after, t, episodes = rollout_against_random(num_envs, num_steps, truncation_reward=None)
    assert t.valid.all()
    for row in range(num_envs):
        assert (t.mask[:, row][np.arange(num_steps), t.action[:, row]]).all()  # every action legal
        finished = np.asarray(episodes["done"])[:, row]
        assert (finished == t.done[:, row]).all()
        # A slot's reward is the learner's share of the game's end (chicken scores at the end only).
        assert (t.reward[:, row][~t.done[:, row]] == 0).all()
        outcome = np.asarray(episodes["outcome"])[:, row]
        assert (np.sign(t.reward[:, row][t.done[:, row]]) == outcome[t.done[:, row]]).all()
        assert int(after.learner[row]) == int(after.state.current_player[row])
        # Each finished game counts the slots since the one before it (the first: from slot 0).
        ends = np.flatnonzero(finished)
        lengths = np.asarray(episodes["episode_length"])[ends, row]
        assert (lengths == np.diff(np.concatenate([[-1], ends]))).all()
    assert np.asarray(
        episodes["done"]
    ).any()  # 400 learner decisions in each of 3 games end some (a game: about 230)


def test_max_decisions_cuts_a_game_at_the_learners_turn_and_pays_the_truncation_reward():
    """`max_decisions` as the other trainers apply it: once the learner has made that many decisions
    in a game, its next turn ends the game (truncated), and the last slot's reward is the truncation
    reward in place of what it gathered; a cut game's outcome is neither a win nor a loss."""
    num_envs, num_steps, cap = 4, 40, 3
    after, t, episodes = rollout_against_random(
        num_envs, num_steps, truncation_reward=-0.75, max_decisions=cap
    )
    done, length = np.asarray(episodes["done"]), np.asarray(episodes["episode_length"])
    outcome = np.asarray(episodes["outcome"])
    assert t.valid.all() and (done == t.done).all()
    assert (length[done] <= cap).all()
    cut = done & (outcome == 0)
    assert cut.sum() >= num_steps * num_envs // (cap + 1) - num_envs  # random chicken lasts longer
    assert (length[cut] == cap).all() and (t.reward[cut] == np.float32(-0.75)).all()
    # Every game ends the rollout at a learner's turn it may take (a due cut is never left waiting).
    assert (np.asarray(after.episode_length) < cap).all()
    assert (np.asarray(after.state.current_player) == np.asarray(after.learner)).all()


def test_shaping_adds_the_discounted_change_of_the_learners_potential_to_its_slots():
    """`shaping` in the jax rollout as the other trainers apply it: each slot's reward is the game's
    plus `shaping * (gamma * phi(next decision) - phi(this decision))`, phi 0 once the game ended,
    where phi (the learner's lead among the players who can win, -1 once out) is read back here from
    the slots' own observations; the episodes' returns stay the game's."""
    name, shaping, gamma = "murder_most_fowl_v0", 0.5, 0.9
    after, t, episodes = rollout_against_random(
        4, 200, name, truncation_reward=None, shaping=shaping, gamma=gamma
    )
    twin = envs.make_jax(name)
    scores, playing, arrested = (twin.rules.piece(p) for p in ("scores", "playing", "arrested"))

    def phi(obs):
        can = (obs[..., playing] > 0) & ~(obs[..., arrested] > 0)
        rival = np.where(can[..., 1:], obs[..., scores][..., 1:], 0.0).max(-1)
        return np.where(can[..., 0], np.clip(obs[..., scores][..., 0] - rival, -1, 1), -1.0)

    following = np.concatenate([t.obs[1:], np.asarray(after.state.observation)[None]])
    now, later = phi(t.obs), np.where(t.done, 0.0, phi(following))
    game = np.where(t.done, np.asarray(episodes["episode_return"]), 0.0)
    assert t.valid.all() and t.done.sum() >= 4  # every game ends once at least (about 90 decisions)
    assert set(np.unique(game[t.done])) <= {-1.0, 0.0, 1.0}  # the game's own returns
    assert (now != 0).any() and (later != now).any()
    np.testing.assert_allclose(t.reward, game + shaping * (gamma * later - now), atol=1e-5)


def test_a_cut_game_pays_the_truncation_reward_alone_when_shaping():
    """With shaping, a game `max_decisions` cuts pays its last slot the truncation reward alone
    (as the other trainers' cut replaces the shaped reward); the other slots are shaped."""
    _, t, episodes = rollout_against_random(
        4, 120, "murder_most_fowl_v0", truncation_reward=-0.75, max_decisions=40, shaping=0.5
    )
    done, outcome = np.asarray(episodes["done"]), np.asarray(episodes["outcome"])
    cut = done & (outcome == 0) & (np.asarray(episodes["episode_length"]) == 40)
    assert cut.sum() >= 8  # a Fowl game lasts about 90 decisions: nearly every one is cut
    assert (t.reward[cut] == np.float32(-0.75)).all()
    assert (t.reward[~t.done] != 0).any()  # by 40 decisions routes score: the other slots are shaped


@pytest.mark.parametrize("kl", [0.0, 0.2])
def test_the_speed_split_times_the_rollout_within_the_whole_update(kl):
    from fowlplay.evaluation.benchmark.split import split

    small = {"jax.num_envs": 8, "jax.n_steps": 4, "jax.num_minibatches": 1, "ppo.net_arch": [8]}
    # The KL term to an imitated policy (Murder Most Fowl's config): the split times it unfitted.
    figures = split("chicken_v1", {**small, "jax.imitate": 64, "jax.imitate_kl": kl}, updates=2)
    assert figures["update"] > 0 and figures["rollout"] > 0 and figures["epochs"] > 0
    assert figures["ms_update"] > 0 and figures["ms_rollout"] > 0 and figures["compile_seconds"] > 0
    assert figures["game"] == "chicken_v1"


@pytest.mark.slow
def test_a_run_with_a_cell_embedding_resumes_from_its_trained_factors(tmp_path):
    out = tmp_path / "fowl"
    config = str(ROOT / "configs" / "murder_most_fowl_v0.yaml")
    tiny = [*TINY, "--set", "jax.cell_embedding=2", "--set", "jax.baseline=off"]
    tiny += ["--set", "jax.imitate=0", "--set", "jax.imitate_kl=0"]  # the config imitates 100,000 decisions
    result = fowlplay(
        "fowlplay.training.cli", "--config", config, "--out", str(out), "--total-timesteps", "256", *tiny
    )
    assert result.returncode == 0, result.stderr
    with np.load(out / "final.jax.npz") as state:
        factors = {k: state[k] for k in state.files if k.startswith("param_")}
    assert factors["param_mlp_extractor.policy_net.0.embedding"].shape == (2, 9)
    with np.load(out / "final.npz") as weights:  # the checkpoint: SB3's dense layer alone
        assert weights["mlp_extractor.policy_net.0.weight"].shape == (16, 2800)
        assert not any(name.endswith("embedding") for name in weights.files)
    resumed = fowlplay(
        "fowlplay.training.cli", "--resume", str(out), "--total-timesteps", "512", "--no-progress"
    )
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((out / "final.json").read_text())["timesteps"] >= 512
    with np.load(out / "final.jax.npz") as state:
        after = state["param_mlp_extractor.policy_net.0.embedding"]
    # trained on from the saved factors: moved, but by a few Adam steps, not a fresh draw
    before = factors["param_mlp_extractor.policy_net.0.embedding"]
    assert 0 < np.abs(after - before).max() < 0.1
