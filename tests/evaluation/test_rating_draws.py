"""The rating matrix counts a draw as half a win each way (rows read by hand, matrix by hand)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fowlplay.evaluation.ratings import ELO, comparison_matrices, rating_table


def _row(match, seats, returns):
    return {"match": match, "seats": seats, "returns": returns, "length": 10}


ROWS = [
    _row(0, ["a", "b"], [1.0, -1.0]),  # deal 0: a beats b
    _row(0, ["b", "a"], [0.0, 0.0]),  # deal 0: a draw (a truncated game)
    _row(1, ["a", "b", "c"], [0.5, 0.5, -1.0]),  # deal 1: a and b draw, both beat c
    _row(1, ["c", "a", "b"], [1.0, -0.5, -0.5]),  # deal 1: c beats a and b, who draw
]


def test_each_draw_counts_half_a_win_to_each_side_in_its_deal():
    wins = comparison_matrices(ROWS, ["a", "b", "c"], matches=2)
    assert wins.shape == (2, 3, 3)
    # deal 0: a over b one win and half a draw; b over a half a draw; c never played
    assert wins[0].tolist() == [[0, 1.5, 0], [0.5, 0, 0], [0, 0, 0]]
    # deal 1: a and b draw twice (half each way, each time); each beats c once, c beats each once
    assert wins[1].tolist() == [[0, 1.0, 1.0], [1.0, 0, 1.0], [1.0, 1.0, 0]]
    # every comparison is shared out whole: W + W^T counts the games each pair played
    games = wins.sum(axis=0) + wins.sum(axis=0).T
    assert games.tolist() == [[0, 4, 2], [4, 0, 2], [2, 2, 0]]


def test_a_win_and_a_draw_rate_as_three_halves_to_one_half_plus_the_prior():
    # a over b: 1 + 0.5 (the draw) + 0.5 (the prior's virtual draw); b over a: 0.5 + 0.5.
    table = rating_table(
        ROWS[:2], ["a", "b"], 1, anchor=1, samples=0, rng=np.random.default_rng(0), with_openskill=False
    )
    elo = {r["agent"]: r["elo"] for r in table}
    assert elo["b"] == 0.0
    assert elo["a"] == pytest.approx(ELO * math.log(2.0 / 1.0), abs=1e-6)
