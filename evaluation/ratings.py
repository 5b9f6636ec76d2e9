"""Ratings: a batch Bradley–Terry fit on the Elo scale with bootstrap intervals, and OpenSkill.

Bradley–Terry: P(i beats j) = 1 / (1 + 10 ** ((R_j - R_i) / 400)). Every pairwise comparison of
every game counts (a draw is half a win each way); the ratings maximise the likelihood of all of
them at once, so the result does not depend on the order games were played in. One agent (the
anchor, normally `random`) is fixed at 0. Each pair that met also gets `prior_draws` virtual
drawn games (as BayesElo does), which keeps a perfect record at a large but finite gap.

Intervals: resample whole deals with replacement (a deal is the independent unit: its games and
tables share a seed), refit, and take the 2.5 and 97.5 percentiles. Where a pair's record is
one-sided (one of them never won, nor drew, a game against the other) the deals are resampled
together with one virtual deal in which that pair drew all its games (as many as it plays in an
average deal): add-one smoothing. Without it a perfect record resamples only to itself and its
interval has no width (`921 [921, 921]`); with it some resamples hold a draw or two, and the lower
end lands near the exact binomial (Clopper–Pearson) lower bound of the win rate: 200 wins in 100
deals of 2 games give 1041 [701, 1041] against the exact 692, 100 single games 921 [678, 921]
against 570 (tests/evaluation/test_ratings.py). The upper end stays the point rating, which the
prior's virtual draw caps: no finite run of wins shows how much stronger an agent is. A pool with
no one-sided record is resampled exactly as without the smoothing.

OpenSkill (Plackett–Luce, Weng & Lin 2011) rates every game as a ranking of the agents at the
table, by mean return per seat; it is an online update, applied in canonical game order.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
from fowlplay.evaluation.stats import agent_returns, outcome

ELO = 400.0 / math.log(10.0)
#: Newton iterations are capped; a well-posed fit converges in under 30.
_MAX_ITER = 200
_TOL = 1e-10


def comparison_matrices(rows: list[dict], labels: list[str], matches: int) -> np.ndarray:
    """Per deal, W[m, i, j] = wins of agent i over agent j (draws count half to each)."""
    index = {label: i for i, label in enumerate(labels)}
    wins = np.zeros((matches, len(labels), len(labels)))
    for row in rows:
        means = agent_returns(row)
        for a in means:
            for b in means:
                if a != b:
                    wins[row["match"], index[a], index[b]] += outcome(means[a], means[b])
    return wins


def _log_likelihood(theta: np.ndarray, wins: np.ndarray) -> float:
    diff = theta[:, None] - theta[None, :]
    return float(-(wins * np.logaddexp(0.0, -diff)).sum())


def bradley_terry(
    wins: np.ndarray, anchor: int = 0, prior_draws: float = 1.0, met: np.ndarray | None = None
) -> np.ndarray:
    """Elo-scale ratings maximising the Bradley–Terry likelihood of a win matrix, anchor at 0.

    `met` marks the pairs that get the virtual draws (by default, those with a game in `wins`).
    """
    wins = np.asarray(wins, dtype=float)
    k = wins.shape[0]
    met = (wins + wins.T) > 0 if met is None else np.asarray(met, dtype=bool).copy()
    np.fill_diagonal(met, False)
    wins = wins + 0.5 * prior_draws * met
    games = wins + wins.T
    free = np.arange(k) != anchor
    theta = np.zeros(k)
    ll = _log_likelihood(theta, wins)
    for _ in range(_MAX_ITER):
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # p[i, j] = P(i beats j)
        grad = (wins - games * p).sum(axis=1)
        weight = games * p * (1.0 - p)
        hessian = np.diag(weight.sum(axis=1)) - weight  # minus the Hessian of the log-likelihood
        try:
            step = np.linalg.solve(hessian[np.ix_(free, free)], grad[free])
        except np.linalg.LinAlgError as err:
            raise ValueError(
                "Bradley–Terry ratings are undefined: some agents never met the anchor's group"
            ) from err
        # Newton with step halving: the log-likelihood is concave, so this always climbs.
        scale = 1.0
        while True:
            trial = theta.copy()
            trial[free] += scale * step
            trial_ll = _log_likelihood(trial, wins)
            if trial_ll >= ll - 1e-12 or scale < 1e-6:
                break
            scale /= 2
        theta, ll = trial, trial_ll
        if np.abs(scale * step).max() < _TOL:
            break
    return theta * ELO


def bootstrap_bradley_terry(
    per_deal: np.ndarray,
    anchor: int = 0,
    samples: int = 1000,
    rng: np.random.Generator | None = None,
    prior_draws: float = 1.0,
    level: float = 0.95,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Point ratings and percentile bootstrap bounds, resampling deals (and one virtual drawn deal,
    see the module's docstring) with replacement."""
    total = per_deal.sum(axis=0)
    point = bradley_terry(total, anchor, prior_draws)
    deals = per_deal.shape[0]
    if samples <= 0 or deals < 2:
        nan = np.full_like(point, math.nan)
        return point, nan, nan
    rng = rng or np.random.default_rng(0)
    met = (total + total.T) > 0
    # Add-one smoothing where a pair's record is one-sided: one virtual deal holding an average
    # deal's games of each such pair, all drawn (a pool without one is resampled as it was).
    one_sided = met & ((total == 0) | (total.T == 0))
    pool = per_deal
    if one_sided.any():
        virtual = np.where(one_sided, 0.5 * (total + total.T) / deals, 0.0)
        pool = np.concatenate([per_deal, virtual[None]])
    fits = np.empty((samples, point.size))
    for b in range(samples):
        counts = rng.multinomial(deals, np.full(len(pool), 1.0 / len(pool)))
        resampled = np.tensordot(counts, pool, axes=1)
        # The prior stays on every pair that met in the data, even if a resample misses it.
        fits[b] = bradley_terry(resampled, anchor, prior_draws, met)
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(fits, [tail, 100 - tail], axis=0)
    return point, low, high


def expected_score(elo_a: float, elo_b: float) -> float:
    """Bradley–Terry probability that a beats b (a draw counting half)."""
    return 1.0 / (1.0 + 10 ** ((elo_b - elo_a) / 400.0))


def openskill_ratings(rows: list[dict], labels: list[str]) -> dict[str, dict]:
    """Plackett–Luce mu, sigma and ordinal (mu - 3 sigma) per agent, rows taken in the given order."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = {label: model.rating(name=label) for label in labels}
    for row in rows:
        means = agent_returns(row)
        present = [label for label in labels if label in means]
        order = sorted({round(means[a], 9) for a in present}, reverse=True)
        ranks = [order.index(round(means[a], 9)) for a in present]
        updated = model.rate([[ratings[a]] for a in present], ranks=ranks)
        for a, team in zip(present, updated):
            ratings[a] = team[0]
    return {label: {"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal()} for label, r in ratings.items()}


def rating_table(
    rows: list[dict],
    labels: list[str],
    matches: int,
    anchor: int,
    samples: int,
    rng: np.random.Generator,
    with_openskill: bool,
    prior_draws: float = 1.0,
) -> list[dict]:
    """One record per agent: Elo with its bootstrap interval, and OpenSkill when asked."""
    per_deal = comparison_matrices(rows, labels, matches)
    elo, low, high = bootstrap_bradley_terry(per_deal, anchor, samples, rng, prior_draws)
    skill = openskill_ratings(rows, labels) if with_openskill else {}
    games = defaultdict(int)
    for row in rows:
        for label in set(row["seats"]):
            games[label] += 1
    table = []
    for i, label in enumerate(labels):
        record = {
            "agent": label,
            "games": games[label],
            "elo": float(elo[i]),
            "elo_lo": float(low[i]),
            "elo_hi": float(high[i]),
            "anchor": i == anchor,
        }
        if with_openskill:
            record.update({f"openskill_{k}": v for k, v in skill[label].items()})
        table.append(record)
    return table
