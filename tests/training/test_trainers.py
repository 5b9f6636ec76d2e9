"""The `trainer:` key: every trainer trains, saves the same checkpoint and keeps the best one; the
masked DQN never picks, nor bootstraps from, an illegal action; the meta-solver finds Nash."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
import torch
from fowlplay import envs
from fowlplay.envs.core.testing import play
from fowlplay.evaluation.agents import make_agent
from fowlplay.training import ladder
from fowlplay.training.checkpoint import load_checkpoint, read_metadata, resolve
from fowlplay.training.config import TRAINERS, ConfigError, from_dict, help_table
from fowlplay.training.sb3.dqn import ILLEGAL_Q, MaskedDQN, MaskedDQNPolicy, MaskedObservations, masked_q
from fowlplay.training.sb3.psro import nash_mixture
from fowlplay.training.train import RunFinished, resume, train

#: A run of 256 decisions that snapshots, evaluates and (for dqn) learns.
TINY = {
    "game": "chicken_v1",
    "env_options": {"num_players": 2},
    "total_timesteps": 256,
    "n_envs": 2,
    "vec_env": "batched",
    "checkpoint_every": 0,
    "eval_every": 128,
    "eval_games": 4,
    "progress_bar": False,
    "tensorboard": False,
    "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1, "net_arch": [16]},
    "dqn": {
        "learning_starts": 64,
        "batch_size": 16,
        "buffer_size": 1000,
        "net_arch": [16],
        "latest_every": 64,
    },
    "psro": {"meta_games": 2},
    "opponents": {"snapshot_every": 128},
}


def tiny(tmp_path, trainer: str, **changes):
    return from_dict({**TINY, "trainer": trainer, "out": str(tmp_path / trainer), **changes})


@pytest.mark.parametrize("trainer", TRAINERS)
def test_each_trainer_writes_a_checkpoint_that_evaluation_loads_and_plays_legally(trainer, tmp_path):
    result = train(tiny(tmp_path, trainer), verbose=False)
    run = result.run_dir
    assert result.timesteps >= 256 and (run / "final.json").exists() and (run / "best.json").exists()
    assert read_metadata(run / "final")["config"]["trainer"] == trainer
    head = read_metadata(run)["policy"]["head"]
    assert head == ("q_values" if trainer == "dqn" else "actor_critic")
    env = envs.make("chicken_v1")
    for spec in (f"ckpt:{run}", f"ckpt:{run}/final", f"ckpt-det:{run}"):
        agent = make_agent(spec, env, seed=0)
        env.reset(seed=1)
        decisions = sum(
            1 for _ in play(env, lambda a, o, agent=agent: agent.act(o["observation"], o["action_mask"]))
        )
        assert decisions > 0 and env.agents == []  # play() fails on an illegal action
    if trainer == "psro":
        record = json.loads((run / "logs" / "meta_game.jsonl").read_text().splitlines()[-1])
        assert record["members"][:2] == ["random", "baseline"] and len(record["members"]) == 4
        assert sum(record["mixture"].values()) == pytest.approx(1, abs=1e-3)


def test_a_dqn_run_resumes_and_keeps_its_trainer(tmp_path):
    run = train(tiny(tmp_path, "dqn"), verbose=False).run_dir
    with pytest.raises(ConfigError, match=r"keeps the trainer.*'dqn'"):
        resume(run, {"trainer": "ppo"}, verbose=False)
    result = resume(run, {"total_timesteps": 320}, verbose=False)
    model, metadata = load_checkpoint(run)
    assert isinstance(model, MaskedDQN) and metadata["kind"] == "final" and result.timesteps >= 320


def test_a_resume_that_changes_the_budget_warns_when_a_schedule_spans_it(tmp_path):
    import warnings

    from fowlplay.training.checkpoint import CheckpointWarning

    def resume_warnings(run, overrides):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            resume(run, overrides, verbose=False)
        return [str(w.message) for w in caught if issubclass(w.category, CheckpointWarning)]

    dqn_run = train(tiny(tmp_path, "dqn"), verbose=False).run_dir
    (message,) = resume_warnings(dqn_run, {"total_timesteps": 320})
    assert "total_timesteps 320 (it was 256)" in message and "exploration" in message
    linear = tiny(tmp_path, "ppo", ppo={**TINY["ppo"], "lr_schedule": "linear"})
    linear_run = train(linear, verbose=False).run_dir
    (message,) = resume_warnings(linear_run, {"total_timesteps": 384})
    assert "linear learning-rate schedule" in message and "(it was 256)" in message
    # The same budget again, or a constant rate, spans nothing: no warning (the same budget again
    # finds the run finished, and says only that).
    with warnings.catch_warnings(record=True) as caught, pytest.raises(RunFinished):
        warnings.simplefilter("always")
        resume(linear_run, {"total_timesteps": 384}, verbose=False)
    assert not [w for w in caught if issubclass(w.category, CheckpointWarning)]
    constant_run = train(tiny(tmp_path / "c", "ppo"), verbose=False).run_dir
    assert resume_warnings(constant_run, {"total_timesteps": 384}) == []


def test_a_resumed_dqn_refills_its_replay_buffer_before_it_updates(tmp_path):
    # The buffer is not saved: for learning_starts (64) decisions after each resume, nothing is
    # learned from the few transitions it holds; after them, an update every 2 decisions as before.
    run = train(tiny(tmp_path, "dqn"), verbose=False).run_dir
    updates = [load_checkpoint(run)[0]._n_updates]
    for total in (320, 480):
        resume(run, {"total_timesteps": total}, verbose=False)
        updates.append(load_checkpoint(run)[0]._n_updates)
    assert updates[0] >= 90  # 256 decisions, warm-up 64, one update per 2
    assert updates[1] - updates[0] <= 1  # only the collect that reaches 320 may update
    # This resume refills again (320 to 384), then learns: one update per 2 of its last 96 decisions.
    assert 45 <= updates[2] - updates[1] <= 49


# ----- the masked DQN -------------------------------------------------------------------------
@pytest.fixture
def dqn():
    from fowlplay.training.sb3.selfplay import SelfPlayEnv
    from stable_baselines3.common.vec_env import DummyVecEnv

    vec = MaskedObservations(DummyVecEnv([lambda: SelfPlayEnv("chicken_v1")] * 2))
    model = MaskedDQN(
        MaskedDQNPolicy,
        vec,
        learning_starts=0,
        batch_size=2,
        gamma=1.0,
        policy_kwargs={"net_arch": [8]},
        seed=0,
    )
    yield model
    vec.close()


def test_masked_dqn_never_selects_an_illegal_action(dqn):
    rng = np.random.default_rng(0)
    size = dqn.observation_space["observation"].shape[0]
    for exploration in (0.0, 0.5, 1.0):
        dqn.exploration_rate = exploration
        for _ in range(50):
            masks = (rng.random((8, dqn.action_space.n)) < 0.2).astype(np.int8)
            masks[np.arange(8), rng.integers(dqn.action_space.n, size=8)] = 1
            obs = {"observation": rng.normal(size=(8, size)).astype(np.float32), "action_mask": masks}
            actions, _ = dqn.predict(obs)
            assert masks[np.arange(8), actions].all()
    dqn._last_obs = obs  # warm-up actions (before learning_starts) are legal too
    dqn.num_timesteps = 0
    actions, _ = dqn._sample_action(learning_starts=10, n_envs=8)
    assert masks[np.arange(8), actions].all()


def test_masked_q_puts_illegal_actions_last_and_a_finished_state_at_zero():
    q = torch.tensor([[5.0, 1.0, 2.0], [5.0, 1.0, 2.0]])
    mask = torch.tensor([[0, 1, 1], [0, 0, 0]])
    out = masked_q(q, mask)
    assert out[0].tolist() == [ILLEGAL_Q, 1.0, 2.0] and out[1].tolist() == [0.0, 0.0, 0.0]


def test_the_dqn_target_ignores_masked_out_actions(dqn):
    """One hand-made transition through SB3's own update: the loss is the one whose target is the
    best *legal* next Q-value, not the best of all (a deliberately unmasked twin differs)."""
    size = dqn.observation_space["observation"].shape[0]
    n = dqn.action_space.n
    obs = np.zeros(size, dtype=np.float32)
    next_obs = np.linspace(-1, 1, size).astype(np.float32)
    with torch.no_grad():
        raw_next = dqn.q_net_target.q_net(torch.as_tensor(next_obs)[None])[0].numpy()
        raw_now = dqn.q_net.q_net(torch.as_tensor(obs)[None])[0].numpy()
    top = int(np.argmax(raw_next))
    next_mask = np.ones(n, dtype=np.int8)
    next_mask[top] = 0  # the best next action by raw Q is illegal
    mask = np.ones(n, dtype=np.int8)
    two = lambda row: np.stack([row, row])  # noqa: E731 - one row per environment of the buffer
    dqn.replay_buffer.add(
        {"observation": two(obs), "action_mask": two(mask)},
        {"observation": two(next_obs), "action_mask": two(next_mask)},
        np.array([3, 3]),
        np.array([0.0, 0.0]),
        np.array([False, False]),
        [{}, {}],
    )
    from stable_baselines3.common.logger import Logger

    dqn.set_logger(Logger(folder=None, output_formats=[]))
    dqn.train(gradient_steps=1, batch_size=2)
    loss = dqn.logger.name_to_value["train/loss"]
    legal_target = raw_next[next_mask.astype(bool)].max()
    expected = torch.nn.functional.smooth_l1_loss(torch.tensor(raw_now[3]), torch.tensor(legal_target)).item()
    unmasked = torch.nn.functional.smooth_l1_loss(
        torch.tensor(raw_now[3]), torch.tensor(raw_next[top])
    ).item()
    assert loss == pytest.approx(expected, rel=1e-5) and abs(expected - unmasked) > 1e-6


# ----- the meta-solver ------------------------------------------------------------------------
def test_nash_of_rock_paper_scissors_is_uniform():
    rps = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]])
    assert nash_mixture(rps) == pytest.approx([1 / 3] * 3, abs=1e-9)


def test_a_dominated_strategy_gets_no_weight():
    # Rock-paper-scissors plus "rock that loses its draws": dominated by rock.
    game = np.array([[0, -1, 1, 0.5], [1, 0, -1, 1], [-1, 1, 0, -1], [-0.5, -1, 1, 0]])
    mixture = nash_mixture(game)
    assert mixture[3] == pytest.approx(0, abs=1e-9) and mixture[:3] == pytest.approx([1 / 3] * 3, abs=1e-9)


def test_the_pool_draws_snapshots_by_the_meta_strategy():
    from fowlplay.training.sb3.opponents import OpponentPool

    aec = envs.make("chicken_v1")
    pool = OpponentPool("chicken_v1", aec, {"random": 1.0}, network={"net_arch": [4], "activation": "tanh"})
    from fowlplay.training.policy import playing_state

    state = playing_state(_tiny_model(aec))
    for name in ("a", "b"):
        pool.add_snapshot(name, state)
    pool.set_weights({"snapshot": 1.0}, {"a": 0.0, "b": 1.0})
    rng = np.random.default_rng(0)
    drawn = {id(pool.draw(rng)[1].policy) for _ in range(20)}
    assert drawn == {id(pool._snapshots["b"])}
    with pytest.raises(ValueError, match="opponent weights"):
        pool.set_weights({"nobody": 1.0})


def _tiny_model(aec):
    from fowlplay.training.policy import build_policy

    class Holder:
        policy = build_policy(
            aec.observation_space("player_0")["observation"], aec.action_space("player_0"), [4], "tanh"
        )

    return Holder()


# ----- the best checkpoint --------------------------------------------------------------------
def test_best_checkpoint_keeps_the_better_of_two_evaluations(tmp_path):
    tracker = ladder.BestCheckpoint(tmp_path)
    assert tracker.record(100, {"random": 0.9, "baseline": 0.1}, 10)
    assert tracker.record(200, {"random": 0.8, "baseline": 0.6}, 10)
    assert not tracker.record(300, {"random": 1.0, "baseline": 0.3}, 10)  # 0.65 < 0.7
    assert tracker.best == {
        "timesteps": 200,
        "scores": {"random": 0.8, "baseline": 0.6},
        "score": 0.7,
        "games": 10,
    }
    with open(tmp_path / "evaluation.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == list(ladder.CSV_COLUMNS)
    assert [(r["timesteps"], r["score"], r["best"]) for r in rows] == [
        ("100", "0.5000", "1"),
        ("200", "0.7000", "1"),
        ("300", "0.6500", "0"),
    ]


def test_a_run_keeps_and_loads_its_best_checkpoint(tmp_path, monkeypatch):
    # Scripted evaluations at 128 and 256 decisions, and of the weights after the last update
    # (also 256 decisions): the first is the best.
    scripted = iter(
        [{"random": 0.9, "baseline": 0.5}, {"random": 0.6, "baseline": 0.2}, {"random": 0.7, "baseline": 0.1}]
    )
    monkeypatch.setattr(ladder, "ladder_scores", lambda aec, policy, games: next(scripted))
    result = train(tiny(tmp_path, "ppo"), verbose=False)
    run = result.run_dir
    assert resolve(run) == run / "best" and resolve(run, prefer_best=False) == run / "final"
    best = read_metadata(run)
    assert best["kind"] == "best" and best["evaluation"]["timesteps"] == best["timesteps"] == 128
    assert best["evaluation"]["scores"] == {"random": 0.9, "baseline": 0.5}
    final = read_metadata(run / "final")
    assert final["timesteps"] == 256 and final["best"]["timesteps"] == 128
    assert final["best"]["checkpoint"] == str(run / "best") and result.best["score"] == pytest.approx(0.7)
    env = envs.make("chicken_v1")
    assert make_agent(f"ckpt:{run}", env).policy is not make_agent(f"ckpt:{run}/final", env).policy
    rows = (run / "evaluation.csv").read_text().splitlines()
    assert [row.split(",")[0] for row in rows[1:]] == ["128", "256", "256"]


def test_ladder_scores_are_deterministic_and_a_stall_loses(monkeypatch):
    aec = envs.make("chicken_v1")
    factories = ladder.ladder_factories(aec)
    first = ladder.head_to_head(aec, factories["baseline"], factories["random"], 6, ladder.EVAL_SEED)
    assert first == ladder.head_to_head(aec, factories["baseline"], factories["random"], 6, ladder.EVAL_SEED)
    assert first > 0.5
    assert ladder.outcome([0.0, 0.0], 0) == 0.5 and ladder.outcome([1.0, -1.0], 1) == 0.0
    # Every game cut off by the cap (a learner that stalls): a draw for the meta-game, a loss for the ladder.
    monkeypatch.setattr(ladder, "play_game", lambda aec, agents, seed: ([0.0, 0.0], True))
    assert ladder.head_to_head(aec, factories["random"], factories["random"], 4, 0) == 0.5
    assert ladder.ladder_scores(aec, _tiny_model(aec).policy, 4) == {"random": 0.0, "baseline": 0.0}


# ----- config errors --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"trainer": "a2c"}, r"trainer must be one of \['ppo', 'psro', 'dqn', 'rllib', 'jax'\]; got 'a2c'"),
        ({"eval_games": 0}, "eval_games must be > 0"),
        ({"eval_every": -1}, "eval_every must be >= 0"),
        ({"dqn": {"exploration_final_eps": 1.5}}, r"dqn.exploration_final_eps must be in \[0, 1\]"),
        ({"dqn": {"activation": "gelu"}}, "dqn.activation must be one of"),
        ({"psro": {"meta_solver": "alpharank"}}, r"psro.meta_solver must be one of \['nash', 'uniform'\]"),
        (
            {"trainer": "psro", "opponents": {"random": 0, "baseline": 0, "snapshot": 0, "latest": 1}},
            "opponents.latest must leave a share",
        ),
    ],
)
def test_config_errors_name_what_is_allowed(changes, message):
    with pytest.raises(ConfigError, match=message):
        from_dict({"game": "chicken_v1", **changes})


def test_list_keys_documents_the_trainer_and_its_sections():
    table = help_table()
    for key in ("trainer ", "eval_every", "eval_games", "dqn.exploration_final_eps", "psro.meta_solver"):
        assert key in table


def test_learning_runs_without_distribution_checks_and_learns_the_same_weights(tmp_path, monkeypatch):
    """torch's distribution checks are off while the learner learns (they cost a quarter of a rollout
    forward pass) and back on afterwards; the weights learned are the same bit for bit as with them."""
    import contextlib

    from fowlplay.training.checkpoint import weights_sha256
    from fowlplay.training.policy import playing_state
    from fowlplay.training.sb3 import trainer as train_module
    from sb3_contrib import MaskablePPO

    seen = []
    collect = MaskablePPO.collect_rollouts

    def watched(self, *args, **kwargs):
        seen.append(torch.distributions.Distribution._validate_args)
        return collect(self, *args, **kwargs)

    monkeypatch.setattr(MaskablePPO, "collect_rollouts", watched)
    fast = train(tiny(tmp_path, "ppo", eval_every=0), verbose=False)
    assert seen and not any(seen)
    assert torch.distributions.Distribution._validate_args is True  # restored

    seen.clear()
    monkeypatch.setattr(train_module, "unchecked_distributions", lambda torch_: contextlib.nullcontext())
    checked = train(tiny(tmp_path / "checked", "ppo", eval_every=0), verbose=False)
    assert seen and all(seen)

    def weights(result):
        model, _ = load_checkpoint(result.checkpoint)
        return weights_sha256(playing_state(model))

    assert weights(fast) == weights(checked)
