"""Elo intervals of a perfect record (evaluation/ratings.py): add-one smoothing in the bootstrap."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from fowlplay.evaluation.ratings import bootstrap_bradley_terry, bradley_terry


def perfect(deals: int, games: int) -> np.ndarray:
    """Agent 1 wins every one of `games` games a deal against agent 0 (the anchor)."""
    per_deal = np.zeros((deals, 2, 2))
    per_deal[:, 1, 0] = games
    return per_deal


def clopper_pearson_elo(wins: int) -> float:
    """The Elo gap of the exact 95% lower bound on the win rate of `wins` wins in `wins` games."""
    low = 0.025 ** (1 / wins)  # the Beta(wins, 1) quantile: the bound for a perfect record
    return 400 * np.log10(low / (1 - low))


@pytest.mark.parametrize(("deals", "games", "point", "low"), [(100, 1, 921, 678), (100, 2, 1041, 701)])
def test_a_perfect_record_gets_an_interval_with_width_near_the_exact_bound(deals, games, point, low):
    """The numbers of the module's docstring; the lower end lies above the exact lower bound, and
    within 110 Elo of it, and the upper end is the prior-capped point rating."""
    elo, lo, hi = bootstrap_bradley_terry(perfect(deals, games), 0, 1000, np.random.default_rng(0))
    assert (round(elo[1]), round(lo[1]), round(hi[1])) == (point, low, point)
    exact = clopper_pearson_elo(deals * games)
    assert exact < lo[1] < exact + 110


def test_without_the_smoothing_the_interval_of_a_perfect_record_has_no_width(monkeypatch):
    """The check has teeth: resampling the real deals alone gives the old `921 [921, 921]`."""
    ratings = importlib.import_module("fowlplay.evaluation.ratings")
    real_concatenate = np.concatenate
    monkeypatch.setattr(ratings.np, "concatenate", lambda arrays: real_concatenate(arrays[:1]))
    try:
        elo, lo, hi = ratings.bootstrap_bradley_terry(perfect(100, 1), 0, 200, np.random.default_rng(0))
    finally:
        monkeypatch.undo()
    assert round(lo[1]) == round(elo[1]) == round(hi[1]) == 921


def test_a_record_with_wins_both_ways_is_resampled_as_before():
    """No one-sided pair: the same resamples as plain deal resampling (the same generator draws)."""
    rng = np.random.default_rng(3)
    per_deal = np.zeros((50, 2, 2))
    wins = rng.integers(0, 3, size=50)
    per_deal[:, 1, 0], per_deal[:, 0, 1] = wins, 2 - wins
    _, lo, hi = bootstrap_bradley_terry(per_deal, 0, 100, np.random.default_rng(5))
    plain = np.random.default_rng(5)
    met = np.ones((2, 2), bool)
    fits = [
        bradley_terry(
            np.tensordot(plain.multinomial(50, np.full(50, 1 / 50)), per_deal, axes=1), 0, 1.0, met
        )[1]
        for _ in range(100)
    ]
    assert lo[1] == pytest.approx(np.percentile(fits, 2.5)) and hi[1] == pytest.approx(
        np.percentile(fits, 97.5)
    )
