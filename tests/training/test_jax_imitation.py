"""`jax.imitate`: a fresh jax run first fits its networks to the rule-based baseline's decisions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from fowlplay import envs  # noqa: E402 - after the skip: these need jax
from fowlplay.evaluation.agents import make_agent  # noqa: E402
from fowlplay.training.config import ConfigError, load_config  # noqa: E402
from fowlplay.training.jitted import imitation  # noqa: E402
from fowlplay.training.jitted import ppo as jax_ppo  # noqa: E402
from fowlplay.training.jitted.trainer import learner_games  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CHICKEN = ROOT / "configs" / "chicken_v1.yaml"
SMALL = {"trainer": "jax", "ppo.net_arch": [32], "jax.num_envs": 8, "jax.num_minibatches": 1}


@pytest.fixture(scope="module")
def recorded():
    return imitation.baseline_decisions(load_config(CHICKEN, SMALL), 3000)


def test_the_recorded_decisions_are_the_baselines_with_discounted_final_rewards(recorded):
    config = load_config(CHICKEN, SMALL)
    data = recorded
    assert len(data["action"]) == 3000 and data["obs"].shape == (3000, 31)
    assert data["mask"][np.arange(3000), data["action"]].all()  # every action was legal
    again = imitation.baseline_decisions(config, 3000)  # seeded from the run's seed
    assert all(np.array_equal(data[k], again[k]) for k in data)
    # The same decisions, replayed by an independent copy of the baseline on the recorded views.
    agent = envs.env_module("chicken_v1").BaselineAgent(envs.make("chicken_v1").unwrapped.options)
    same = [
        agent.act(o, m.astype(np.int8)) == a for o, m, a in zip(data["obs"], data["mask"], data["action"])
    ]
    assert np.mean(same) > 0.99
    # Each player's targets in a game are its final reward, discounted once per later decision of its own.
    gamma = config.gamma()
    complete = data["game"] < data["game"].max()  # the last game is cut
    finals = []
    for g, p in set(zip(data["game"][complete].tolist(), data["player"][complete].tolist())):
        values = data["value"][(data["game"] == g) & (data["player"] == p)]
        assert np.allclose(values, values[-1] * gamma ** np.arange(len(values))[::-1], rtol=1e-5)
        finals.append(values[-1])
    assert len(finals) > 20 and min(finals) < 0 < max(finals)  # wins and losses


def test_the_fit_makes_the_policy_choose_as_the_baseline(recorded):
    config = load_config(CHICKEN, SMALL)
    _, games = learner_games(config)
    s = games.s
    params = jax_ppo.init_params(jax.random.PRNGKey(0), 31, games.env.num_actions, list(s.net_arch))
    data = recorded
    fitted, report = imitation.imitate(params, data, s, 1e-3, 8, jax.random.PRNGKey(1))
    assert report["decisions"] == 3000 and report["held_out"] == 300
    assert report["after"]["cross_entropy"] < report["before"]["cross_entropy"] / 4
    assert report["after"]["agreement"] > 0.97 > report["before"]["agreement"]
    assert report["after"]["value_loss"] < report["before"]["value_loss"]
    logits = jax_ppo.policy_logits(fitted, data["obs"][:300], data["mask"][:300], s.depth, s.activation)
    assert np.mean(np.asarray(logits.argmax(-1)) == data["action"][:300]) > 0.97


def test_a_fresh_run_imitates_and_a_resumed_one_does_not(tmp_path):
    from fowlplay.training.train import resume, train

    overrides = {**SMALL, "jax.n_steps": 8, "jax.imitate": 1000, "jax.imitate_epochs": 3}
    overrides |= {"eval_every": 0, "checkpoint_every": 0, "tensorboard": False, "total_timesteps": 64}
    overrides |= {"out": str(tmp_path / "run")}
    train(load_config(CHICKEN, overrides), verbose=False)
    log = tmp_path / "run" / "logs" / "imitation.json"
    report = json.loads(log.read_text())
    assert report["decisions"] == 1000 and report["epochs"] == 3
    assert report["after"]["agreement"] > report["before"]["agreement"]
    # The imitated policy is a checkpoint of its own, which every command loads.
    imitated = json.loads((tmp_path / "run" / "imitated.json").read_text())
    assert imitated["kind"] == "imitated" and imitated["timesteps"] == 0
    env = envs.make("chicken_v1")
    env.reset(seed=0)
    agent = make_agent(f"ckpt-det:{tmp_path / 'run' / 'imitated'}", env)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][agent.act(obs["observation"], obs["action_mask"])]
    log.unlink()
    resumed = resume(tmp_path / "run", {"total_timesteps": 128}, verbose=False)
    assert resumed.timesteps >= 128 and not log.exists()


def _kl_after_updates(imitate_kl: float, updates: int = 3) -> float:
    """Mean KL(learner || its initial policy) over the games' current decisions after a few updates."""
    overrides = {**SMALL, "jax.n_steps": 16, "ppo.learning_rate": 3e-3, "ppo.ent_coef": 0.05}
    overrides |= {"jax.imitate": 2 if imitate_kl else 0, "jax.imitate_kl": imitate_kl}
    config = load_config(CHICKEN, overrides)
    _, games = learner_games(config)
    s = games.s
    params = jax_ppo.init_params(jax.random.PRNGKey(0), 31, games.env.num_actions, list(s.net_arch))
    optimizer = jax_ppo.make_optimizer(config.ppo.learning_rate, s.max_grad_norm)
    runner = jax_ppo.start(games, jax.random.PRNGKey(1), params, optimizer)
    opponents = jax_ppo.Opponents(
        jax_ppo.empty_snapshots(params, s.snapshot_slots), jax.numpy.int32(0), reference=params
    )
    update = jax_ppo.make_update(games, optimizer)
    for _ in range(updates):
        runner, _ = update(runner, opponents)
    obs, mask = runner.games.state.observation, runner.games.state.legal_action_mask
    new = jax.nn.log_softmax(jax_ppo.policy_logits(runner.params, obs, mask, s.depth, s.activation))
    old = jax.nn.log_softmax(jax_ppo.policy_logits(params, obs, mask, s.depth, s.activation))
    return float(np.mean(np.where(mask, np.exp(new) * (new - old), 0.0).sum(-1)))


def test_imitate_kl_holds_the_learner_near_the_imitated_policy():
    free, held = _kl_after_updates(0.0), _kl_after_updates(20.0)
    assert free > 0.01  # the learner moved ...
    assert held < free / 3  # ... much less with the KL term


def test_bad_imitation_keys_are_named():
    with pytest.raises(ConfigError, match=r"jax\.imitate must be >= 0"):
        load_config(CHICKEN, {"trainer": "jax", "jax.imitate": -5})
    with pytest.raises(ConfigError, match=r"jax\.imitate must be 0 \(off\) or at least 2"):
        load_config(CHICKEN, {"trainer": "jax", "jax.imitate": 1})
    with pytest.raises(ConfigError, match=r"jax\.imitate_epochs must be > 0"):
        load_config(CHICKEN, {"trainer": "jax", "jax.imitate_epochs": 0})
    with pytest.raises(ConfigError, match=r"jax\.imitate_kl 0\.5 needs a policy to stay near"):
        load_config(CHICKEN, {"trainer": "jax", "jax.imitate_kl": 0.5})
    with pytest.raises(ConfigError, match=r"jax\.imitate_kl must be >= 0"):
        load_config(CHICKEN, {"trainer": "jax", "jax.imitate": 100, "jax.imitate_kl": -1})


@pytest.mark.slow
def test_a_resumed_run_holds_the_learner_near_the_imitated_policy_it_reads_back(tmp_path, monkeypatch):
    from fowlplay.training.checkpoint import CheckpointError
    from fowlplay.training.jitted import trainer as jax_train
    from fowlplay.training.train import resume, train

    overrides = {**SMALL, "jax.n_steps": 8, "jax.imitate": 1000, "jax.imitate_epochs": 3}
    overrides |= {
        "jax.imitate_kl": 1.0,
        "eval_every": 0,
        "checkpoint_every": 0,
        "tensorboard": False,
        "total_timesteps": 64,
    }
    run = tmp_path / "run"
    train(load_config(CHICKEN, overrides | {"out": str(run)}), verbose=False)
    with np.load(run / "imitated.npz") as imitated:
        fitted = {name: imitated[name] for name in imitated.files}
    read_back = []

    def spy(*args):
        read_back.append(jax_train._imitated_weights.__wrapped__(*args))
        return read_back[-1]

    spy.__wrapped__ = jax_train._imitated_weights
    monkeypatch.setattr(jax_train, "_imitated_weights", spy)
    (run / "logs" / "imitation.json").unlink()
    resumed = resume(run, {"total_timesteps": 128}, verbose=False)
    assert resumed.timesteps >= 128 and not (run / "logs" / "imitation.json").exists()  # not fitted again
    # The KL term's reference is the fitted policy read back from its file, not the resumed weights.
    (reference,) = read_back
    assert reference.keys() == fitted.keys()
    assert all(np.array_equal(np.asarray(reference[name]), fitted[name]) for name in fitted)
    with np.load(run / "final.npz") as final:
        assert any(not np.array_equal(final[name], fitted[name]) for name in fitted)  # the learner moved on
    monkeypatch.undo()

    # A changed imitated policy is refused by the run's record; a missing one is named with its causes.
    altered = {name: value + 1.0 for name, value in fitted.items()}
    np.savez(run / "imitated.npz", **altered)
    with pytest.raises(CheckpointError, match=r"refusing to resume from .*imitated\.npz"):
        resume(run, {"total_timesteps": 192}, verbose=False)
    (run / "imitated.npz").unlink()
    with pytest.raises(CheckpointError, match=r"missing .*set jax\.imitate_kl to 0"):
        resume(run, {"total_timesteps": 192}, verbose=False)
