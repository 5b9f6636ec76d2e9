"""The twins' shared base: exact ratios (XLA's float32 division is not correctly rounded) and the
jnp reward helpers, each equal bit for bit to the reference's float64 result cast to float32."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from fowlplay.envs.core import rewards as reference  # noqa: E402
from fowlplay.envs.core.twin import (  # noqa: E402
    best_players,
    exact_ratio,
    final_rewards,
    score_rewards,
    win_rewards,
)


def bits(values) -> np.ndarray:
    """float32 values as their bit patterns (so that equality is bit for bit)."""
    return np.asarray(values, np.float32).view(np.uint32)


def test_xla_division_is_what_exact_ratio_is_for():
    """The reason the helper exists: jnp's float32 13 / 15 is one ulp off numpy's."""
    quotients = np.asarray(jnp.arange(16, dtype=jnp.float32) / jnp.float32(15))
    expected = (np.arange(16) / 15).astype(np.float32)
    assert (bits(quotients) != bits(expected)).any()  # if XLA ever rounds right, this documents it
    assert (bits(exact_ratio(jnp.arange(16), 15, 0, 15)) == bits(expected)).all()


@pytest.mark.parametrize("denominator", [1, 2, 3, 7, 15, 50, 128, 1000, 65535, 99991, (1 << 24) - 1])
def test_long_division_equals_numpy_bit_for_bit(denominator):
    rng = np.random.default_rng(denominator)
    numerators = np.concatenate(
        [rng.integers(-(1 << 24) + 1, 1 << 24, 5000), np.arange(-600, 600), [(1 << 24) - 1, -(1 << 24) + 1]]
    )
    got = jax.jit(lambda a: exact_ratio(a, denominator))(jnp.asarray(numerators, jnp.int32))
    assert (bits(got) == bits(numerators / denominator)).all()


def test_a_table_covers_its_bounds_and_a_wide_range_divides():
    numerators = np.arange(-300, 301)
    table = exact_ratio(jnp.asarray(numerators), 60, -300, 300)
    wide = exact_ratio(jnp.asarray(numerators), 60, -(1 << 20), 1 << 20)  # too wide for a table
    assert (bits(table) == bits(numerators / 60)).all()
    assert (bits(wide) == bits(numerators / 60)).all()


@pytest.mark.parametrize("bad", [0, -3, 1 << 24, 2.5, True])
def test_exact_ratio_refuses_a_bad_denominator(bad):
    with pytest.raises(ValueError, match="denominator"):
        exact_ratio(jnp.arange(3), bad)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_win_rewards_equal_the_reference_for_every_set_of_winners(n):
    for mask in itertools.product([False, True], repeat=n):
        expected = np.asarray(reference.win_rewards([p for p in range(n) if mask[p]], n), np.float32)
        assert (bits(win_rewards(jnp.asarray(mask))) == bits(expected)).all(), mask


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_score_and_final_rewards_equal_the_reference(n):
    rng = np.random.default_rng(n)
    for _ in range(200):
        scores = rng.integers(-2000, 2000, n)
        scores[rng.integers(n)] = scores.max()  # ties for the lead now and then
        for mode in ("win", "score"):
            expected = reference.final_rewards(scores.tolist(), truncated=False, reward_mode=mode, scale=50)
            got = final_rewards(jnp.asarray(scores, jnp.int32), mode, 50)
            assert (bits(got) == bits(expected)).all(), (scores, mode)
        assert (
            bits(score_rewards(jnp.asarray(scores), 50)) == bits(reference.score_rewards(scores, 50))
        ).all()


def test_best_players_honours_eligibility():
    scores = jnp.asarray([5, 9, 9, 2])
    assert best_players(scores).tolist() == [False, True, True, False]
    eligible = jnp.asarray([True, False, True, True])
    assert best_players(scores, eligible).tolist() == [False, False, True, False]
