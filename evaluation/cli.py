"""`fowlplay-eval`: a duplicate round-robin tournament between agents, with statistics and a report.

    fowlplay-eval --game chicken_v0 --agents random baseline --matches 200 --out runs/eval

Prints the pairwise scores and ratings; writes games.jsonl, pairwise.csv, ratings.csv,
summary.json, report.md and PNG plots to --out. Run the same command again to resume an
interrupted evaluation, or with a larger --matches to extend a finished one. The exit status is
1 when any agent chose an illegal action.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import envs
from evaluation.agents import ACCEPTED, AgentSpecError, parse_specs
from evaluation.matches import SEATINGS, EvalConfig, ResumeError
from evaluation.tournament import DEFAULT_BOOTSTRAP, evaluate


def _option(text: str) -> tuple[str, object]:
    """KEY=VALUE with VALUE read as YAML (numbers, booleans, strings)."""
    import yaml

    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, yaml.safe_load(value)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        prog="fowlplay-eval",
        description="Duplicate round-robin tournament between agents, with confidence intervals and ratings.",
    )
    parser.add_argument("--game", required=True, choices=envs.ENV_NAMES, help="registered game")
    parser.add_argument(
        "--agents", required=True, nargs="+", metavar="SPEC", help=f"two or more agents: {ACCEPTED}"
    )
    parser.add_argument(
        "--matches", type=_positive, default=100, help="duplicate matches (deals) per table [100]"
    )
    parser.add_argument(
        "--out", required=True, type=Path, help="output directory (resumed if it holds games.jsonl)"
    )
    parser.add_argument("--players", type=int, default=None, help="players per game [the game's default]")
    parser.add_argument(
        "--workers", type=_positive, default=os.cpu_count() or 1, help="worker processes [CPU count]"
    )
    parser.add_argument("--seed", type=int, default=0, help="root seed of every deal and agent [0]")
    parser.add_argument(
        "--seating",
        choices=SEATINGS,
        default="pairs",
        help="tables for more than 2 players: alternating pairs of agents, or sets of distinct agents [pairs]",
    )
    parser.add_argument(
        "--option", type=_option, action="append", default=[], metavar="KEY=VALUE", help="game rule option"
    )
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=DEFAULT_BOOTSTRAP,
        help=f"rating bootstrap resamples [{DEFAULT_BOOTSTRAP}]",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the evaluation described on the command line and print its headline figures."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if len(args.agents) < 2:
        parser.error("--agents needs at least two agents")
    options = dict(args.option)
    if "num_players" in options:
        parser.error("give the player count with --players, not --option num_players=...")
    try:
        players = args.players or len(envs.make(args.game, **options).possible_agents)
        specs = parse_specs(args.agents)
        config = EvalConfig(
            game=args.game,
            agents=tuple(specs),
            matches=args.matches,
            players=players,
            seed=args.seed,
            options=options,
            seating=args.seating,
        )
        config.make_env()  # validates the player count and options with the game's own message
    except ValueError as err:  # unknown option, player count, agent spec: the user's to fix
        parser.error(str(err))
    try:
        summary = evaluate(
            config, args.out, workers=args.workers, progress=not args.no_progress, bootstrap=args.bootstrap
        )
    except (AgentSpecError, ResumeError) as err:
        parser.error(str(err))
    for r in summary["pairwise"]:
        print(
            f"{r['agent']} vs {r['opponent']}: score {r['score']:.3f} "
            f"[{r['score_lo']:.3f}, {r['score_hi']:.3f}]; {r['matches']} matches: {r['match_wins']} won, "
            f"{r['match_draws']} drawn, {r['match_losses']} lost; {r['games']} games: "
            f"{r['wins']} W / {r['draws']} D / {r['losses']} L"
        )
    for r in summary["ratings"]:
        print(f"{r['agent']}: Elo {r['elo']:.0f} [{r['elo_lo']:.0f}, {r['elo_hi']:.0f}]")
    illegal = summary["games"]["illegal_actions"]
    print(f"report: {args.out / 'report.md'}; illegal actions: {illegal}")
    if illegal:
        print("error: some agents chose illegal actions (see games.jsonl 'error')", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
