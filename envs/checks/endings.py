"""Checks of how games end: every walked game ends, and rewards are finite numbers."""

from __future__ import annotations

from fowlplay.envs.checks.report import CheckResult
from fowlplay.envs.checks.walk import Run


def check_games_end(run: Run) -> CheckResult:
    """Every walked game ended within `max_steps` decisions."""
    return run.tally("games_end").result(
        f"{len(run.games)} masked random games each ended within {run.settings.max_steps} decisions"
    )


def check_rewards(run: Run) -> CheckResult:
    """Rewards are finite numbers for every agent; whether returns sum to zero is reported, not judged."""
    returns = [sum(r.values()) for r in run.returns]
    zero_sum = bool(returns) and all(abs(total) < 1e-6 for total in returns)
    values = [v for r in run.returns for v in r.values()]
    data = {
        "zero_sum": zero_sum,
        "games": len(run.returns),
        "min_return": min(values, default=None),
        "max_return": max(values, default=None),
    }
    if not returns:
        note = "no walked game was played to its end, so zero-sum is unknown"
    elif zero_sum:
        note = "zero-sum in every game"
    else:
        note = "not zero-sum (the returns of some game do not sum to 0)"
    return run.tally("rewards").result(f"every reward was a finite number for every agent; {note}", data)
