"""Zero-sum terminal rewards shared by every game."""

from __future__ import annotations

from collections.abc import Iterable


def win_rewards(winners: Iterable[int], num_players: int) -> list[float]:
    """One winner +1, others -1/(n-1); k tied winners share (n-k)/(k(n-1)); nobody winning is a draw."""
    winners = sorted(set(winners))
    n, k = num_players, len(winners)
    if k == 0 or k == n:
        return [0.0] * n
    loss = -1.0 / (n - 1)
    share = (n - k) / (k * (n - 1))
    return [share if p in winners else loss for p in range(n)]


def best_players(scores: Iterable[float], eligible: Iterable[int] | None = None) -> list[int]:
    """Seats holding the highest score among `eligible` seats (all seats by default)."""
    scores = list(scores)
    seats = list(range(len(scores))) if eligible is None else list(eligible)
    if not seats:
        return []
    top = max(scores[p] for p in seats)
    return [p for p in seats if scores[p] == top]


def final_rewards(scores: Iterable[float], *, truncated: bool, reward_mode: str, scale: float) -> list[float]:
    """The documented terminal rewards: 0 for all when cut off by a cap, else the win reward of the
    highest scores, or in 'score' mode the zero-sum score differences / `scale`."""
    scores = list(scores)
    if truncated:
        return [0.0] * len(scores)
    if reward_mode == "score":
        return score_rewards(scores, scale)
    return win_rewards(best_players(scores), len(scores))


def score_rewards(scores: Iterable[float], scale: float) -> list[float]:
    """Zero-sum score returns: each player's score minus the mean of the others, divided by `scale`."""
    scores = [float(s) for s in scores]
    n = len(scores)
    total = sum(scores)
    return [(s - (total - s) / (n - 1)) / scale for s in scores]
