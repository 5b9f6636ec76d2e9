"""How much skill a game rewards at a player count: the headroom table (issue 54).

    python -m fowlplay.evaluation.headroom --game murder_she_crows_v1 --players 2 \
        --budgets 10 50 --matches 30 --out runs/headroom/murder_she_crows_v1-2

Every agent of the table plays alone in one seat against the game's baseline in every other seat,
in duplicate matches (seating one-vs-rest: every rotation of each deal, the same deals and the same
seeds for the baseline's seats for every agent), the way `fowlplay-exploit` scores its candidates:
uniform random play, the baseline itself, `ismcts:N` at each budget and `oracle:N` at the same
budgets (`evaluation.ismcts`: the same search with every hand face up, which no fair agent can
match). A score is the agent's share of games won against the baseline's seats (1 win, 1/2 a draw:
its return above theirs), with its 95% interval over deals; an equal agent's expectation is 1/n.

From the table: the *fair spread* (the best score of an agent that plays fair, less 1/n) says how
far above the baseline the search gets in this game at this count; the *oracle spread* (the best
oracle score, less 1/n) how far an agent that saw every hand gets. A game whose fair spread is near
zero at a count is decided by the deal there, or by what the baseline already does; one whose oracle
spread is large hides cards worth knowing. Each agent's games are kept in OUT/<agent>/, so a rerun
reuses them (more --matches extends them) and prints the table again.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from fowlplay import envs
from fowlplay.envs.runtime.cli import integer

PROG = "python -m fowlplay.evaluation.headroom"
#: The label of the baseline's seats (the agent under test may be the baseline itself).
TABLE = "table"


def headroom_specs(budgets: list[int]) -> list[str]:
    """The agents of the table, in its order: random, baseline, ismcts:N and oracle:N per budget."""
    return ["random", "baseline", *(f"ismcts:{n}" for n in budgets), *(f"oracle:{n}" for n in budgets)]


def score_agent(game: str, spec: str, players: int, matches: int, seed: int, out: Path, workers: int) -> dict:
    """One row of the table: `spec` alone against the baseline in every other seat."""
    from fowlplay.evaluation.agents import parse_spec
    from fowlplay.evaluation.matches import EvalConfig, run_games
    from fowlplay.evaluation.stats import pairwise

    config = EvalConfig(
        game,
        (parse_spec(spec), parse_spec(f"{TABLE}=baseline")),
        matches,
        players,
        seed,
        seating="one-vs-rest",
    )
    rows, _ = run_games(config, out / re.sub(r"[^A-Za-z0-9_.-]", "-", spec), workers, progress=False)
    (row,) = [r for r in pairwise(rows, [spec, TABLE], players) if r["agent"] == spec]
    return {"agent": spec, **row}


def table(rows: list[dict], players: int) -> str:
    """The Markdown table, then the two spreads."""
    fair = 1.0 / players
    lines = [
        "| agent | score vs baseline [95% CI] | duplicate matches won / drawn / lost | mean return |",
        "|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['agent']} | {r['score']:.3f} [{r['score_lo']:.3f}, {r['score_hi']:.3f}] | "
            f"{r['match_wins']} / {r['match_draws']} / {r['match_losses']} | {r['mean_return']:+.3f} |"
        )
    honest = max((r for r in rows if not r["agent"].startswith("oracle:")), key=lambda r: r["score"])
    oracles = [r for r in rows if r["agent"].startswith("oracle:")]
    lines += ["", f"Fair share 1/{players} = {fair:.3f}. Fair spread (best fair agent, {honest['agent']}): "]
    lines[-1] += f"{honest['score'] - fair:+.3f}"
    if oracles:
        best = max(oracles, key=lambda r: r["score"])
        lines[-1] += f"; oracle spread ({best['agent']}): {best['score'] - fair:+.3f}."
    return "\n".join(lines)


class _Parser(argparse.ArgumentParser):
    """argparse whose mistakes are one line and exit with status 2."""

    def error(self, message: str):
        """Print one line and exit with status 2."""
        self.exit(2, f"{PROG}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = _Parser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--game", required=True, choices=envs.ENV_NAMES, help="registered game")
    parser.add_argument("--players", type=integer(1), default=None, help="players [the game's default]")
    parser.add_argument(
        "--budgets",
        type=integer(1),
        nargs="+",
        default=[10, 50],
        metavar="N",
        help="ISMCTS and oracle simulations per decision, one row each [10 50]",
    )
    parser.add_argument("--matches", type=integer(1), default=30, help="duplicate matches per agent [30]")
    parser.add_argument("--seed", type=integer(0), default=0, help="root seed of the deals [0]")
    parser.add_argument("--workers", type=integer(1), default=1, help="worker processes [1]")
    parser.add_argument(
        "--out", required=True, type=Path, metavar="DIR", help="folder of every agent's games"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Play (or reuse) every row and print the table; the exit status."""
    args = build_parser().parse_args(argv)
    players = args.players or len(envs.make(args.game).possible_agents)
    try:
        envs.make(args.game, num_players=players)
    except ValueError as err:  # a player count the game refuses, in the game's own words
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    rows = []
    for spec in headroom_specs(sorted(set(args.budgets))):
        rows.append(score_agent(args.game, spec, players, args.matches, args.seed, args.out, args.workers))
        print(f"{PROG}: {spec}: {rows[-1]['score']:.3f}", file=sys.stderr, flush=True)
    print(
        f"Headroom of {args.game}, {players} players, {args.matches} duplicate matches against the baseline:\n"
    )
    print(table(rows, players))
    return 0


if __name__ == "__main__":
    sys.exit(main())
