"""Per-pairing statistics over duplicate matches, with 95% confidence intervals.

A game is read as pairwise comparisons: for every two different agents at the table, the one
whose seats earned the higher mean return wins it, equal means are a draw (a truncated game,
where every return is 0, is a draw for everyone). The independent unit is the *deal*: games of
one match index share their deal (and, across tables, the same deal seed), so intervals are
taken over per-deal means, never over games.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as sps

LEVEL = 0.95
#: Returns closer than this count as equal (they are sums of a few exact fractions).
_TIE = 1e-9


def mean_ci(values, level: float = LEVEL) -> tuple[float, float, float]:
    """Mean and Student-t confidence interval of independent values (NaN bounds below 2 values)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return math.nan, math.nan, math.nan
    mean = float(x.mean())
    if x.size < 2:
        return mean, math.nan, math.nan
    half = float(sps.t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return mean, mean - half, mean + half


def wilson(p: float, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Wilson score interval of a proportion p observed over n trials."""
    z = float(sps.norm.ppf(0.5 + level / 2))
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def score_ci(values, level: float = LEVEL) -> tuple[float, float, float]:
    """Mean and interval of per-deal scores in [0, 1]: Student t, clipped to [0, 1].

    When every deal scored the same the t interval has zero width; the Wilson interval over the
    deals is used instead, which assumes the largest variance a [0, 1] score can have.
    """
    x = np.asarray(values, dtype=float)
    mean, lo, hi = mean_ci(x, level)
    if x.size >= 2 and np.ptp(x) == 0:
        lo, hi = wilson(mean, x.size, level)
    if math.isfinite(lo):
        lo, hi = max(lo, 0.0), min(hi, 1.0)
    return mean, lo, hi


def agent_returns(row: dict) -> dict[str, float]:
    """Each agent's mean return over the seats it held in one game."""
    totals: dict[str, list[float]] = defaultdict(list)
    for label, ret in zip(row["seats"], row["returns"]):
        totals[label].append(ret)
    return {label: sum(r) / len(r) for label, r in totals.items()}


def outcome(mine: float, theirs: float) -> float:
    """1 for a win, 0.5 for a draw, 0 for a loss."""
    if abs(mine - theirs) <= _TIE:
        return 0.5
    return 1.0 if mine > theirs else 0.0


@dataclass
class _Tally:
    wins: int = 0
    draws: int = 0
    losses: int = 0
    deal_lengths: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    # per deal: outcomes and returns, for intervals over deals
    deal_outcomes: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    deal_returns: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    # per seat held: outcomes and that seat's return
    seat_outcomes: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    seat_returns: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))

    def add(
        self, result: float, ret: float, length: int, deal: int, seats: list[int], seat_rets: list[float]
    ):
        if result == 1.0:
            self.wins += 1
        elif result == 0.5:
            self.draws += 1
        else:
            self.losses += 1
        self.deal_lengths[deal].append(length)
        self.deal_outcomes[deal].append(result)
        self.deal_returns[deal].append(ret)
        for seat, seat_ret in zip(seats, seat_rets):
            self.seat_outcomes[seat].append(result)
            self.seat_returns[seat].append(seat_ret)


def _deal_means(per_deal: dict[int, list[float]]) -> list[float]:
    return [float(np.mean(per_deal[d])) for d in sorted(per_deal)]


def pairwise(rows: list[dict], labels: list[str], players: int) -> list[dict]:
    """One record per ordered pair of agents that met: W/D/L, score, mean return, seats, intervals."""
    tallies: dict[tuple[str, str], _Tally] = defaultdict(_Tally)
    for row in rows:
        means = agent_returns(row)
        seats_of: dict[str, list[int]] = defaultdict(list)
        for seat, label in enumerate(row["seats"]):
            seats_of[label].append(seat)
        for a in means:
            for b in means:
                if a == b:
                    continue
                result = outcome(means[a], means[b])
                seat_rets = [row["returns"][s] for s in seats_of[a]]
                tallies[(a, b)].add(result, means[a], row["length"], row["match"], seats_of[a], seat_rets)
    records = []
    for a in labels:
        for b in labels:
            if (a, b) not in tallies:
                continue
            t = tallies[(a, b)]
            n = t.wins + t.draws + t.losses
            _, score_lo, score_hi = score_ci(_deal_means(t.deal_outcomes))
            ret, ret_lo, ret_hi = mean_ci(_deal_means(t.deal_returns))
            length, _, _ = mean_ci(_deal_means(t.deal_lengths))
            # A duplicate match is won when the agent scores above one half over its rotations.
            match_scores = _deal_means(t.deal_outcomes)
            record = {
                "agent": a,
                "opponent": b,
                "matches": len(t.deal_outcomes),
                "games": n,
                "wins": t.wins,
                "draws": t.draws,
                "losses": t.losses,
                "match_wins": sum(m > 0.5 for m in match_scores),
                "match_draws": sum(m == 0.5 for m in match_scores),
                "match_losses": sum(m < 0.5 for m in match_scores),
                "score": (t.wins + 0.5 * t.draws) / n,
                "score_lo": score_lo,
                "score_hi": score_hi,
                "mean_return": ret,
                "return_lo": ret_lo,
                "return_hi": ret_hi,
                "mean_length": length,
            }
            for seat in range(players):
                outcomes = t.seat_outcomes.get(seat, [])
                record[f"seat{seat}_games"] = len(outcomes)
                record[f"seat{seat}_score"] = float(np.mean(outcomes)) if outcomes else math.nan
                seat_rets = t.seat_returns.get(seat, [])
                record[f"seat{seat}_return"] = float(np.mean(seat_rets)) if seat_rets else math.nan
            records.append(record)
    return records


def game_summary(rows: list[dict]) -> dict:
    """Counts, length (interval over deals), truncations and illegal actions over all games."""
    lengths = [r["length"] for r in rows]
    per_deal: dict[int, list[int]] = defaultdict(list)
    for r in rows:
        per_deal[r["match"]].append(r["length"])
    length, lo, hi = mean_ci(_deal_means(per_deal))
    return {
        "games": len(rows),
        "terminated": sum(bool(r["terminated"]) for r in rows),
        "truncated": sum(bool(r["truncated"]) for r in rows),
        "forfeited": sum(r["error"] is not None for r in rows),
        "illegal_actions": sum(sum(r["illegal"]) for r in rows),
        "length_mean": length,
        "length_lo": lo,
        "length_hi": hi,
        "length_min": min(lengths) if lengths else None,
        "length_max": max(lengths) if lengths else None,
    }


def seat_redeal_failures(row: dict, seat: int) -> int:
    """Decisions of a seat in one game whose search found no re-deal of the hidden cards (an
    ISMCTS agent's `RedealError`; 0 for other agents, and for rows written before it was kept)."""
    counts = row.get("redeal_failures")
    return int(counts[seat]) if counts else 0


def redeal_failures(rows: list[dict]) -> dict[str, tuple[int, int]]:
    """Per agent that had any: (decisions whose re-deal failed, all its decisions)."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        for seat, label in enumerate(row["seats"]):
            out[label][0] += seat_redeal_failures(row, seat)
            out[label][1] += row["decisions"][seat]
    return {label: (f, d) for label, (f, d) in out.items() if f}


def redeal_note(agent: str, failures: int, decisions: int) -> str:
    """What a reader of an ISMCTS agent's figures needs to know when its re-deals failed."""
    return (
        f"{agent} found no re-deal of the hidden cards at {failures} of its {decisions} decisions: it "
        "chose those on the worlds it had searched before the failure (on none: the baseline's move, or "
        "the first legal one with random rollouts), so it played below its search budget there"
    )


def agent_summary(rows: list[dict], labels: list[str]) -> list[dict]:
    """Per agent: games, decisions, illegal actions, score against everyone (deterministic fields)."""
    out = []
    for label in labels:
        games = decisions = illegal = redeals = 0
        per_deal: dict[int, list[float]] = defaultdict(list)
        for row in rows:
            if label not in row["seats"]:
                continue
            games += 1
            means = agent_returns(row)
            for seat, held in enumerate(row["seats"]):
                if held == label:
                    decisions += row["decisions"][seat]
                    illegal += row["illegal"][seat]
                    redeals += seat_redeal_failures(row, seat)
            for other, ret in means.items():
                if other == label:
                    continue
                per_deal[row["match"]].append(outcome(means[label], ret))
        score, lo, hi = score_ci(_deal_means(per_deal))
        out.append(
            {
                "agent": label,
                "games": games,
                "decisions": decisions,
                "illegal_actions": illegal,
                "redeal_failures": redeals,
                "score_vs_all": score,
                "score_vs_all_lo": lo,
                "score_vs_all_hi": hi,
            }
        )
    return out


def latency(rows: list[dict], labels: list[str]) -> list[dict]:
    """Per agent: mean decision time in microseconds and decisions timed (varies run to run)."""
    out = []
    for label in labels:
        total_ns = decisions = 0
        for row in rows:
            for seat, held in enumerate(row["seats"]):
                if held == label:
                    total_ns += row["time_ns"][seat]
                    decisions += row["decisions"][seat]
        out.append(
            {
                "agent": label,
                "decisions": decisions,
                "mean_us": total_ns / decisions / 1e3 if decisions else math.nan,
            }
        )
    return out
