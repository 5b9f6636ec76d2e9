"""Checkpoints: writing, finding, loading, refusing; and the PolicyAgent that plays one."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import torch
from fowlplay import envs
from fowlplay.training.agent import PolicyAgent
from fowlplay.training.checkpoint import (
    CheckpointError,
    CheckpointWarning,
    check_compatible,
    load_checkpoint,
    load_policy,
    make_metadata,
    read_metadata,
    resolve,
    save_checkpoint,
    weights_sha256,
)
from fowlplay.training.policy import policy_state
from fowlplay.training.sb3.selfplay import SelfPlayEnv
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import DummyVecEnv


@pytest.fixture(scope="module")
def model():
    """An untrained small MaskablePPO learner for 2-player Chicken."""
    vec = DummyVecEnv([lambda: SelfPlayEnv("chicken_v1")])
    return MaskablePPO("MlpPolicy", vec, n_steps=32, batch_size=32, policy_kwargs={"net_arch": [16]}, seed=0)


def save(model, stem, timesteps=100, kind="final", **options):
    aec = envs.make("chicken_v1", **options)
    metadata = make_metadata(aec, {"note": "test"}, seed=3, timesteps=timesteps, kind=kind)
    return save_checkpoint(model, stem, metadata)


def test_round_trip_keeps_weights_and_metadata(model, tmp_path):
    zip_path = save(model, tmp_path / "final")
    assert zip_path == tmp_path / "final.zip"
    # no temp files left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["final.json", "final.npz", "final.zip"]
    for name in ("final", "final.zip", "final.json", "final.npz"):
        loaded, metadata = load_checkpoint(tmp_path / name)
        for key, value in model.policy.state_dict().items():
            assert torch.equal(loaded.policy.state_dict()[key], value)
    assert metadata["game"] == "chicken_v1"
    assert metadata["env_options"]["num_players"] == 2
    size = envs.make("chicken_v1").observer.size
    assert (metadata["observation_size"], metadata["action_count"]) == (size, 16)
    assert metadata["package_version"] == envs.__version__
    assert (metadata["seed"], metadata["timesteps"], metadata["kind"]) == (3, 100, "final")
    assert metadata["config"] == {"note": "test"}
    assert metadata["checkpoint"] == str(zip_path)
    assert metadata["policy"]["net_arch"] == [16] and metadata["policy"]["activation"] == "tanh"
    assert metadata["policy"]["weights_sha256"] == weights_sha256(policy_state(model.policy))
    # The tensor-only path rebuilds the same network from the metadata alone.
    policy, played = load_policy(tmp_path)
    for key, value in model.policy.state_dict().items():
        assert torch.equal(policy.state_dict()[key], value)
    assert played["weights_file"] == str(tmp_path / "final.npz")
    assert played["weights_sha256"] == metadata["policy"]["weights_sha256"]


def test_run_directory_resolves_to_final_unless_a_periodic_one_is_newer(model, tmp_path):
    with pytest.raises(CheckpointError, match="holds no complete checkpoint"):
        resolve(tmp_path)
    save(model, tmp_path / "checkpoints" / "step_100", 100, "periodic")
    save(model, tmp_path / "checkpoints" / "step_2000", 2000, "periodic")
    assert resolve(tmp_path) == tmp_path / "checkpoints" / "step_2000"  # numeric, not text, order
    save(model, tmp_path / "final", 3000)
    assert resolve(tmp_path) == tmp_path / "final"
    save(model, tmp_path / "checkpoints" / "step_4000", 4000, "periodic")  # a resumed run, interrupted
    assert read_metadata(tmp_path)["timesteps"] == 4000


def test_a_damaged_final_json_is_an_error_and_a_missing_one_falls_back_out_loud(model, tmp_path):
    save(model, tmp_path / "checkpoints" / "step_100", 100, "periodic")
    save(model, tmp_path / "final", 200)
    (tmp_path / "final.json").write_text("{ cut short")
    for call in (resolve, read_metadata, load_policy):
        with pytest.raises(CheckpointError, match=r"final\.json is corrupt"):
            call(tmp_path)
    (tmp_path / "final.json").unlink()  # a save cut short before its metadata: an incomplete pair
    with pytest.warns(CheckpointWarning, match=r"final has no final\.json.*using the older.*step_100"):
        assert resolve(tmp_path) == tmp_path / "checkpoints" / "step_100"
    # The same for a periodic checkpoint newer than every complete one.
    save(model, tmp_path / "final", 200)
    save(model, tmp_path / "checkpoints" / "step_300", 300, "periodic")
    (tmp_path / "checkpoints" / "step_300.json").unlink()
    with pytest.warns(CheckpointWarning, match=r"step_300 has no step_300\.json.*final \(200 timesteps\)"):
        assert resolve(tmp_path) == tmp_path / "final"
    (tmp_path / "checkpoints" / "step_300.zip").unlink()
    (tmp_path / "checkpoints" / "step_300.npz").unlink()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing incomplete left: nothing to say
        assert resolve(tmp_path) == tmp_path / "final"
    for name in ("final.json", "checkpoints/step_100.json"):
        (tmp_path / name).unlink()
    with pytest.raises(CheckpointError, match=r"no complete checkpoint .*incomplete, no \.json"):
        resolve(tmp_path)


def test_missing_and_corrupt_checkpoints_are_clear_errors(model, tmp_path):
    with pytest.raises(CheckpointError, match=r"nothing\.json does not exist"):
        load_checkpoint(tmp_path / "nothing")
    zip_path = save(model, tmp_path / "final")
    zip_path.write_bytes(b"not a zip file")
    with pytest.raises(CheckpointError, match=r"final\.zip is corrupt"):
        load_checkpoint(tmp_path)
    (tmp_path / "final.json").write_text("{ truncated")
    with pytest.raises(CheckpointError, match=r"final\.json is corrupt"):
        read_metadata(tmp_path)
    (tmp_path / "final.json").write_text(json.dumps({"game": "chicken_v1"}))
    with pytest.raises(CheckpointError, match="lacks"):
        read_metadata(tmp_path)
    save(model, tmp_path / "final")
    zip_path.unlink()
    with pytest.raises(CheckpointError, match=r"final\.zip does not exist"):
        load_checkpoint(tmp_path / "final")


def test_incompatible_game_is_refused_naming_both_sides(model, tmp_path):
    save(model, tmp_path / "final")
    metadata = read_metadata(tmp_path)
    check_compatible(metadata, envs.make("chicken_v1"))
    check_compatible(metadata, SelfPlayEnv("chicken_v1"))
    with pytest.raises(CheckpointError) as error:
        check_compatible(metadata, envs.make("chicken_v1", num_players=3))
    message = str(error.value)
    size2, size3 = (envs.make("chicken_v1", num_players=n).observer.size for n in (2, 3))
    assert str(tmp_path / "final.zip") in message
    assert f"is for chicken_v1 with 2 players, obs {size2}, actions 16" in message
    assert f"this game is chicken_v1 with 3 players, obs {size3}, actions 16" in message
    with pytest.raises(CheckpointError, match="target 50 vs 30"):
        check_compatible(metadata, envs.make("chicken_v1", target=30))
    other = dict(metadata, game="some_other_game_v0")
    with pytest.raises(CheckpointError, match="is for some_other_game_v0 with 2 players"):
        check_compatible(other, envs.make("chicken_v1"))


def test_save_refuses_incomplete_metadata(model, tmp_path):
    with pytest.raises(ValueError, match="lacks"):
        save_checkpoint(model, tmp_path / "x", {"game": "chicken_v1"})
    assert not list(tmp_path.iterdir())


def test_policy_agent_from_checkpoint(model, tmp_path):
    save(model, tmp_path / "final")
    with pytest.raises(CheckpointError, match="3 players"):
        PolicyAgent.from_checkpoint(tmp_path, env=envs.make("chicken_v1", num_players=3))
    env = envs.make("chicken_v1")
    agent = PolicyAgent.from_checkpoint(tmp_path, env=env, seed=0)
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    mask = obs["action_mask"]
    # The masked distribution is SB3's own, illegal actions at exactly 0.
    probs = agent.probabilities(obs["observation"], mask)
    with torch.no_grad():
        dist = agent.policy.get_distribution(
            torch.as_tensor(obs["observation"][None]), action_masks=mask[None]
        )
    assert np.allclose(probs, dist.distribution.probs[0].numpy(), atol=1e-6)
    assert probs[mask == 0].sum() == 0 and probs.sum() == pytest.approx(1.0)
    # Seeded sampling replays and only picks legal actions; deterministic play takes the mode.
    first = [agent.act(obs["observation"], mask) for _ in range(50)]
    agent.reset(seed=0)
    assert [agent.act(obs["observation"], mask) for _ in range(50)] == first
    assert all(mask[a] for a in first)
    greedy = PolicyAgent(agent.model, deterministic=True)
    assert greedy.act(obs["observation"], mask) == int(np.argmax(probs))
    predicted, _ = agent.model.predict(obs["observation"], action_masks=mask, deterministic=True)
    assert greedy.act(obs["observation"], mask) == int(predicted)
