"""Interval and rating code against known values and against synthetic data with a known order."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fowlplay.evaluation.ratings import (
    ELO,
    bootstrap_bradley_terry,
    bradley_terry,
    expected_score,
    openskill_ratings,
)
from fowlplay.evaluation.stats import agent_returns, mean_ci, outcome, pairwise, score_ci, wilson


# ----- intervals ---------------------------------------------------------------------------------
def test_mean_ci_matches_the_textbook_t_interval():
    # mean 3, s = sqrt(2.5), t(0.975, 4) = 2.776445: half-width 2.776445 * 1.581139 / sqrt(5)
    mean, lo, hi = mean_ci([1, 2, 3, 4, 5])
    assert mean == 3.0
    assert lo == pytest.approx(1.036757, abs=1e-6)
    assert hi == pytest.approx(4.963243, abs=1e-6)


def test_mean_ci_of_one_value_has_no_interval():
    mean, lo, hi = mean_ci([0.5])
    assert mean == 0.5 and math.isnan(lo) and math.isnan(hi)


def test_wilson_interval_known_values():
    # 10 successes in 10: lower bound n / (n + z^2) = 10 / 13.8415
    lo, hi = wilson(1.0, 10)
    assert lo == pytest.approx(0.722467, abs=1e-6)
    assert hi == pytest.approx(1.0)
    lo, hi = wilson(0.5, 100)
    assert (lo, hi) == pytest.approx((0.403832, 0.596168), abs=1e-6)


def test_score_interval_stays_in_range_and_is_never_zero_width():
    assert score_ci([1.0] * 20)[1:] == pytest.approx(wilson(1.0, 20))
    mean, lo, hi = score_ci([1.0] * 19 + [0.5])
    assert 0.0 <= lo < mean < hi == 1.0


def test_t_interval_covers_the_true_mean_about_95_percent_of_the_time():
    rng = np.random.default_rng(5)
    covered = 0
    for _ in range(2000):
        _, lo, hi = mean_ci(rng.uniform(0, 1, size=12))
        covered += lo <= 0.5 <= hi
    assert 0.93 < covered / 2000 < 0.97


# ----- reading games -----------------------------------------------------------------------------
def _row(match, seats, returns, length=10):
    return {"match": match, "seats": seats, "returns": returns, "length": length}


def test_an_agent_holding_two_seats_is_judged_by_its_mean_return():
    row = _row(0, ["a", "b", "a"], [1.0, -0.5, -0.5])
    assert agent_returns(row) == {"a": 0.25, "b": -0.5}
    assert outcome(0.25, -0.5) == 1.0 and outcome(0.0, 0.0) == 0.5 and outcome(-1.0, 1.0) == 0.0


def test_pairwise_counts_and_seats_by_hand():
    rows = [
        _row(0, ["a", "b"], [1.0, -1.0]),  # a wins from seat 0
        _row(0, ["b", "a"], [1.0, -1.0]),  # a loses from seat 1
        _row(1, ["a", "b"], [0.0, 0.0]),  # truncated: a draw
        _row(1, ["b", "a"], [-1.0, 1.0]),  # a wins from seat 1
    ]
    records = {(r["agent"], r["opponent"]): r for r in pairwise(rows, ["a", "b"], players=2)}
    ab = records[("a", "b")]
    assert (ab["wins"], ab["draws"], ab["losses"], ab["games"], ab["matches"]) == (2, 1, 1, 4, 2)
    assert ab["score"] == 0.625
    assert ab["seat0_games"] == 2 and ab["seat0_score"] == 0.75  # a win and a draw
    assert ab["seat1_games"] == 2 and ab["seat1_score"] == 0.5
    assert ab["mean_return"] == 0.25
    # intervals are over deals (score means 0.5 and 0.75, return means 0 and 0.5); scores stay in [0, 1]
    assert (ab["score_lo"], ab["score_hi"]) == (0.0, 1.0)
    assert (ab["return_lo"], ab["return_hi"]) == pytest.approx(mean_ci([0.0, 0.5])[1:])
    ba = records[("b", "a")]
    assert ba["score"] == 1 - ab["score"] and ba["wins"] == ab["losses"]


# ----- Bradley–Terry -----------------------------------------------------------------------------
def test_bradley_terry_two_agents_known_value():
    # 3 wins to 1: the likelihood is maximal at a gap of 400 log10(3) Elo
    elo = bradley_terry(np.array([[0, 1], [3, 0]]), anchor=0, prior_draws=0)
    assert elo[0] == 0.0
    assert elo[1] == pytest.approx(400 * math.log10(3), abs=1e-6)


def test_bradley_terry_recovers_ratings_from_exact_expected_counts():
    true = np.array([0.0, 120.0, -75.0, 300.0])
    k = true.size
    wins = np.array(
        [[100 * expected_score(true[i], true[j]) if i != j else 0 for j in range(k)] for i in range(k)]
    )
    assert bradley_terry(wins, anchor=0, prior_draws=0) == pytest.approx(true, abs=1e-6)


def test_perfect_record_is_finite_through_the_virtual_draw():
    elo = bradley_terry(np.array([[0, 0], [20, 0]]), anchor=0, prior_draws=1.0)
    assert elo[1] == pytest.approx(ELO * math.log(20.5 / 0.5), abs=1e-6)


def test_anchor_is_zero_and_shifts_the_scale_only():
    wins = np.array([[0, 4, 6], [6, 0, 5], [4, 5, 0]], dtype=float)
    a0 = bradley_terry(wins, anchor=0)
    a2 = bradley_terry(wins, anchor=2)
    assert a0[0] == 0.0 and a2[2] == 0.0
    assert a0 - a0[2] == pytest.approx(a2, abs=1e-6)


def test_bootstrap_on_synthetic_games_recovers_a_known_order():
    true = np.array([0.0, 100.0, 200.0, 400.0])  # agent 0 plays the part of random
    rng = np.random.default_rng(11)
    deals, k = 300, true.size
    per_deal = np.zeros((deals, k, k))
    for m in range(deals):
        for i in range(k):
            for j in range(i + 1, k):
                i_wins = rng.random() < expected_score(true[i], true[j])
                per_deal[m, i, j] += i_wins
                per_deal[m, j, i] += not i_wins
    point, low, high = bootstrap_bradley_terry(per_deal, anchor=0, samples=300, rng=np.random.default_rng(1))
    assert list(np.argsort(point)) == [0, 1, 2, 3]
    assert np.all(low[1:] <= true[1:]) and np.all(true[1:] <= high[1:])
    assert low[0] == high[0] == point[0] == 0.0
    assert np.all(high[1:] - low[1:] < 150)


def test_bootstrap_is_reproducible_from_its_generator():
    per_deal = np.random.default_rng(0).integers(0, 2, size=(30, 3, 3)).astype(float)
    for m in range(30):
        np.fill_diagonal(per_deal[m], 0)
    first = bootstrap_bradley_terry(per_deal, samples=50, rng=np.random.default_rng(4))
    second = bootstrap_bradley_terry(per_deal, samples=50, rng=np.random.default_rng(4))
    for x, y in zip(first, second):
        assert np.array_equal(x, y)


# ----- OpenSkill -----------------------------------------------------------------------------------
def test_openskill_orders_agents_of_known_strength_in_multiplayer_games():
    strengths = {"weak": 1.0, "middle": 3.0, "strong": 9.0}
    rng = np.random.default_rng(2)
    rows = []
    labels = list(strengths)
    for m in range(150):
        seats = list(rng.permutation(labels))
        weights = np.array([strengths[s] for s in seats])
        winner = rng.choice(3, p=weights / weights.sum())  # Plackett–Luce first place
        returns = [1.0 if s == winner else -0.5 for s in range(3)]
        rows.append(_row(m, seats, returns))
    ratings = openskill_ratings(rows, labels)
    ordinal = [ratings[a]["ordinal"] for a in labels]
    assert ordinal[0] < ordinal[1] < ordinal[2]
    assert all(ratings[a]["sigma"] < 25 / 3 for a in labels)  # every agent was rated down from the prior


def test_openskill_gives_tied_agents_equal_updates():
    rows = [_row(0, ["a", "b", "c"], [0.0, 0.0, 0.0])]
    ratings = openskill_ratings(rows, ["a", "b", "c"])
    assert ratings["a"]["mu"] == pytest.approx(ratings["b"]["mu"]) == pytest.approx(ratings["c"]["mu"])


def test_duplicate_matches_are_counted_whole():
    from fowlplay.evaluation.stats import pairwise

    def game(match, seats, returns):
        return {"match": match, "seats": seats, "returns": returns, "length": 10}

    rows = [
        game(0, ["a", "b"], [1.0, -1.0]),  # deal 0: a wins both rotations
        game(0, ["b", "a"], [-1.0, 1.0]),
        game(1, ["a", "b"], [1.0, -1.0]),  # deal 1: one rotation each, a drawn match
        game(1, ["b", "a"], [1.0, -1.0]),
        game(2, ["a", "b"], [0.0, 0.0]),  # deal 2: a draw and a loss, a lost match
        game(2, ["b", "a"], [1.0, -1.0]),
    ]
    record = next(r for r in pairwise(rows, ["a", "b"], 2) if r["agent"] == "a")
    assert (record["match_wins"], record["match_draws"], record["match_losses"]) == (1, 1, 1)
    assert (record["wins"], record["draws"], record["losses"]) == (3, 1, 2)
