"""The figures the recipes of docs/ecosystem.md end on: each learner's mean reward against random
play beside random play's own in the same seat, so that a reader can tell whether it learned."""

from __future__ import annotations

import pytest

from tests.test_ecosystem import SHORT, actions, recipe  # noqa: F401  (actions is a fixture)


def test_sb3_recipe_scores_its_model_and_random_play_in_the_same_seat(actions):  # noqa: F811
    pytest.importorskip("sb3_contrib")
    sb3 = recipe("sb3")
    model = sb3["train"]("fowlplay/chicken_v1", steps=128, n_steps=64, **SHORT)
    learned = sb3["play_against_random"](model, games=6, **SHORT)
    random_play = sb3["play_against_random"](None, games=6, **SHORT)
    assert -1.0 <= learned <= 1.0 and -1.0 <= random_play <= 1.0
    assert random_play == sb3["play_against_random"](None, games=6, **SHORT)  # seeded: the same deals
    assert all(actions.legal)


@pytest.mark.slow  # importing Tianshou takes most of it
def test_tianshou_recipe_scores_its_learner_and_random_play_in_the_same_seat(actions, monkeypatch):  # noqa: F811
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "1")
    numba = pytest.importorskip("numba")
    monkeypatch.setattr(numba.config, "DISABLE_JIT", True)
    pytest.importorskip("tianshou")
    tianshou = recipe("tianshou")
    algorithm, _ = tianshou["train"]("fowlplay/chicken_v1", steps=100, n_envs=1, **SHORT)
    before = len(actions.legal)
    learned = tianshou["score_against_random"](algorithm, games=6, **SHORT)
    random_play = tianshou["score_against_random"](None, games=6, **SHORT)
    assert -1.0 <= learned <= 1.0 and -1.0 <= random_play <= 1.0
    assert len(actions.legal) > before and all(actions.legal)
