"""A checkpoint whose weights are not the ones its metadata's hash names is refused, by name.

The crafted files have exactly the shapes the metadata describes, so every other check (names,
shapes, sizes) passes: only the weights hash stands between them and a loaded policy.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch
from fowlplay import envs
from fowlplay.training.checkpoint import (
    CheckpointError,
    load_policy,
    make_metadata,
    save_checkpoint,
)
from fowlplay.training.sb3.selfplay import SelfPlayEnv
from fowlplay.training.sb3.trainer import restore_training_state
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import DummyVecEnv


def learner(seed: int) -> MaskablePPO:
    """An untrained small MaskablePPO learner for 2-player Chicken; the seed picks its weights."""
    vec = DummyVecEnv([lambda: SelfPlayEnv("chicken_v1")])
    return MaskablePPO(
        "MlpPolicy", vec, n_steps=32, batch_size=32, policy_kwargs={"net_arch": [16]}, seed=seed
    )


def save(model, stem):
    # 0 timesteps, as the learners hold: a swapped zip then differs from the metadata in its weights only
    metadata = make_metadata(envs.make("chicken_v1"), {"note": "test"}, seed=3, timesteps=0, kind="final")
    return save_checkpoint(model, stem, metadata)


@pytest.fixture(scope="module")
def learners() -> tuple[MaskablePPO, MaskablePPO]:
    first, second = learner(0), learner(1)
    assert not torch.equal(
        first.policy.state_dict()["action_net.weight"], second.policy.state_dict()["action_net.weight"]
    )
    return first, second


def test_weights_changed_in_place_are_refused_naming_both_files(learners, tmp_path):
    save(learners[0], tmp_path / "final")
    load_policy(tmp_path)  # as written, it loads
    with np.load(tmp_path / "final.npz", allow_pickle=False) as archive:
        arrays = {name: archive[name].copy() for name in archive.files}
    arrays["action_net.bias"][0] += 0.25  # the same names, shapes and dtypes; one value other
    with open(tmp_path / "final.npz", "wb") as handle:
        np.savez(handle, **arrays)
    with pytest.raises(CheckpointError) as refused:
        load_policy(tmp_path)
    message = str(refused.value)
    assert "final.npz do not match final.json (their sha256 differs)" in message
    assert "replaced or damaged" in message


def test_another_learners_weights_file_is_refused(learners, tmp_path):
    save(learners[0], tmp_path / "final")
    save(learners[1], tmp_path / "other")
    shutil.copy(tmp_path / "other.npz", tmp_path / "final.npz")
    with pytest.raises(
        CheckpointError, match=r"final\.npz do not match final\.json \(their sha256 differs\)"
    ):
        load_policy(tmp_path)


def test_a_resume_refuses_a_zip_holding_another_learners_weights(learners, tmp_path):
    save(learners[0], tmp_path / "final")
    save(learners[1], tmp_path / "other")
    restore_training_state(learner(2), tmp_path / "final")  # as written, it restores
    shutil.copy(tmp_path / "other.zip", tmp_path / "final.zip")
    fresh = learner(2)
    with pytest.raises(CheckpointError) as refused:
        restore_training_state(fresh, tmp_path / "final")
    message = str(refused.value)
    assert "final.zip holds other weights than final.json names (their sha256 differs)" in message
    assert "replaced or damaged" in message
