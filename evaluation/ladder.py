"""The fixed reference ladder every league result is rated against, and its Bradley–Terry Elo.

The ladder is four agents per game, the same for every algorithm and every machine:

    random         uniformly random legal play: the anchor, rated exactly 0
    baseline       the game's rule-based `BaselineAgent`
    ismcts:LOW     information-set MCTS (`evaluation.ismcts`) at the game's low budget
    ismcts:HIGH    the same search at the game's high budget

Budgets are simulations per decision, never seconds, so an agent's play does not depend on the
machine. They are chosen per game so that one 2-player game against the baseline takes a few
seconds (low) or some tens of seconds at most (high) on one CPU core: the league plays hundreds of
them. Changing any of them, or the agents, changes what a rating means: bump `LADDER_VERSION`.

Ratings: every game of an evaluation becomes pairwise comparisons (`ratings.comparison_matrices`);
one Bradley–Terry fit over all of them, on the Elo scale with random fixed at 0
(`ratings.bradley_terry`), and 95% intervals from resampling whole deals with replacement
(`ratings.bootstrap_bradley_terry`), exactly as `fowlplay-eval` rates its agents.
"""

from __future__ import annotations

import numpy as np
from fowlplay.evaluation.ratings import bootstrap_bradley_terry, comparison_matrices

#: Version of the ladder below; a leaderboard names it, and ratings of different versions differ.
#: Version 3: the Chicken and Murder Most Fowl baselines changed (issue 32: Chicken's no longer loses
#: to always passing, Fowl's discards a Murder that must fail), and with them their ISMCTS rungs,
#: which roll out with the baseline; the other games' rungs play as in version 2.
LADDER_VERSION = "3"
#: The agent rated exactly 0.
ANCHOR = "random"
#: ISMCTS simulations per decision (low, high) per game. Version 2: the search's rollouts stop
#: after 10 decisions at the end of the round or turn in progress and score a leaf
#: (`ismcts.LEAVES`), and its margin is per game (`ismcts.DEFAULT_MARGINS`), so an `ismcts:N` of
#: ladder 1 is a different agent; the budgets are unchanged. Below 10 simulations the search
#: cannot overrule the baseline's move (`ismcts.MIN_PAIRED_DEALS` visits of both are needed), so a
#: LOW of 5 plays exactly as the baseline (measured: docs/evaluation.md, "Figures (ladder v2)").
ISMCTS_BUDGETS: dict[str, tuple[int, int]] = {
    "chicken_v1": (5, 25),
    "murder_she_crows_v1": (10, 50),
    "murder_most_fowl_v0": (5, 20),
    "murray_frog_v0": (5, 20),
}


def ladder_specs(game: str) -> list[str]:
    """The ladder's agent specs for `game`, weakest intended first (the anchor first)."""
    if game not in ISMCTS_BUDGETS:
        raise ValueError(f"the ladder has no ISMCTS budgets for {game!r}; games: {sorted(ISMCTS_BUDGETS)}")
    low, high = ISMCTS_BUDGETS[game]
    return [ANCHOR, "baseline", f"ismcts:{low}", f"ismcts:{high}"]


def elo_ratings(
    rows: list[dict], labels: list[str], matches: int, samples: int = 1000, seed: int = 0
) -> list[dict]:
    """Bradley–Terry Elo of every label from games.jsonl rows, random = 0, with 95% bootstrap bounds.

    Rows may come from several evaluations with the same root seed and match count: match m is
    then the same deal in all of them, and the bootstrap resamples deals across all of them at once.
    """
    if ANCHOR not in labels:
        raise ValueError(f"the ratings are anchored at {ANCHOR!r}, which is not among {labels}")
    per_deal = comparison_matrices(rows, labels, matches)
    anchor = labels.index(ANCHOR)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2,)))
    elo, low, high = bootstrap_bradley_terry(per_deal, anchor, samples, rng)
    games = {label: 0 for label in labels}
    for row in rows:
        for label in set(row["seats"]):
            games[label] += 1
    return [
        {
            "agent": label,
            "elo": float(elo[i]),
            "elo_lo": float(low[i]),
            "elo_hi": float(high[i]),
            "games": games[label],
        }
        for i, label in enumerate(labels)
    ]
