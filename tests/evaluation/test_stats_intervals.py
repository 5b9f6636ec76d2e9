"""Score and return intervals are taken over deals, not games: checked on enough deals that the
interval does not clip to [0, 1], against a t interval computed here by hand.

A deal's games (its seat rotations) share one deal seed, so they are not independent: an interval
over games counts each deal several times and comes out too narrow.
"""

from __future__ import annotations

import math
import statistics

import pytest
from fowlplay.evaluation.stats import agent_summary, pairwise
from scipy import stats as sps

#: Per deal, agent a's two games (a in seat 0, then seat 1): win/draw/loss as a's return. A deal
#: tends to go the same way twice, as duplicate deals do, so games are correlated within a deal.
DEALS = [(1, 1), (1, 1), (0, 0), (-1, -1), (1, 0), (1, 1), (0, 0), (-1, 0), (1, 1), (0, 1)] * 3


def _rows() -> list[dict]:
    rows = []
    for match, games in enumerate(DEALS):
        for seat0, ret in zip((True, False), games):
            seats = ["a", "b"] if seat0 else ["b", "a"]
            returns = [float(ret), float(-ret)] if seat0 else [float(-ret), float(ret)]
            rows.append(
                {
                    "match": match,
                    "seats": seats,
                    "returns": returns,
                    "length": 10,
                    "decisions": [3, 3],
                    "illegal": [0, 0],
                }
            )
    return rows


def _score(ret: int) -> float:
    return {1: 1.0, 0: 0.5, -1: 0.0}[ret]


def _t_interval(values: list[float]) -> tuple[float, float]:
    """The textbook 95% Student t interval of independent values."""
    n = len(values)
    half = sps.t.ppf(0.975, n - 1) * statistics.stdev(values) / math.sqrt(n)
    return statistics.fmean(values) - half, statistics.fmean(values) + half


def test_the_score_and_return_intervals_are_t_intervals_over_per_deal_means():
    deal_scores = [statistics.fmean(_score(r) for r in games) for games in DEALS]
    deal_returns = [statistics.fmean(games) for games in DEALS]
    game_scores = [_score(r) for games in DEALS for r in games]
    lo, hi = _t_interval(deal_scores)
    assert 0.0 < lo < hi < 1.0  # no clipping: the bounds are the interval's own
    # Over games the interval is visibly narrower: the test tells the two apart.
    assert _t_interval(game_scores)[1] - _t_interval(game_scores)[0] < 0.8 * (hi - lo)
    ab = {(r["agent"], r["opponent"]): r for r in pairwise(_rows(), ["a", "b"], players=2)}[("a", "b")]
    assert (ab["matches"], ab["games"]) == (len(DEALS), 2 * len(DEALS))
    assert ab["score"] == pytest.approx(statistics.fmean(game_scores))
    assert (ab["score_lo"], ab["score_hi"]) == pytest.approx((lo, hi), abs=1e-12)
    assert (ab["return_lo"], ab["return_hi"]) == pytest.approx(_t_interval(deal_returns), abs=1e-12)


def test_the_score_against_everyone_is_an_interval_over_deals_too():
    deal_scores = [statistics.fmean(_score(r) for r in games) for games in DEALS]
    summary = {s["agent"]: s for s in agent_summary(_rows(), ["a", "b"])}
    lo, hi = _t_interval(deal_scores)
    a = summary["a"]
    assert a["score_vs_all"] == pytest.approx(statistics.fmean(deal_scores))
    assert (a["score_vs_all_lo"], a["score_vs_all_hi"]) == pytest.approx((lo, hi), abs=1e-12)
    b = summary["b"]
    assert (b["score_vs_all_lo"], b["score_vs_all_hi"]) == pytest.approx((1 - hi, 1 - lo), abs=1e-12)
