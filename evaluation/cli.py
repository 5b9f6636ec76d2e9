"""`fowlplay-eval`: a duplicate round-robin tournament between agents, with statistics and a report.

    fowlplay-eval --game chicken_v1 --agents random baseline --matches 200 --out runs/eval

Prints the pairwise scores and ratings; writes games.jsonl, pairwise.csv, ratings.csv,
summary.json, report.md and PNG plots to --out. Run the same command again to resume an
interrupted evaluation, or with a larger --matches to extend a finished one. The exit status is
1 when any agent chose an illegal action or an output file could not be written, 2 for a mistake
on the command line, 130 after Ctrl-C and 143 after SIGTERM (the games played so far are kept).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from fowlplay import envs
from fowlplay.envs.runtime.cli import disk_full, integer, run_stoppable
from fowlplay.envs.runtime.lock import FolderBusyError
from fowlplay.envs.runtime.stopping import stopped
from fowlplay.evaluation.agents import ACCEPTED, AgentSpecError, parse_specs
from fowlplay.evaluation.matches import (
    GAMES_FILE,
    MAX_GAMES_BYTES,
    SEATINGS,
    EvalConfig,
    EvalInterrupted,
    ResumeError,
    tables,
)
from fowlplay.evaluation.report import OutputError
from fowlplay.evaluation.tournament import DEFAULT_BOOTSTRAP, evaluate
from fowlplay.training.cli import yaml_value

PROG = "fowlplay-eval"


def _option(text: str) -> tuple[str, object]:
    """KEY=VALUE with VALUE read as YAML (numbers, booleans, strings)."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, yaml_value(key, value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


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
        "--matches", type=integer(1), default=100, help="duplicate matches (deals) per table [100]"
    )
    parser.add_argument(
        "--out", required=True, type=Path, help="output directory (resumed if it holds games.jsonl)"
    )
    parser.add_argument(
        "--players", type=integer(1), default=None, help="players per game [the game's default]"
    )
    parser.add_argument(
        "--workers", type=integer(1), default=os.cpu_count() or 1, help="worker processes [CPU count]"
    )
    parser.add_argument(
        "--seed", type=integer(0), default=0, help="root seed (>= 0) of every deal and agent [0]"
    )
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
        type=integer(1),
        default=DEFAULT_BOOTSTRAP,
        help=f"rating bootstrap resamples, at least 1 [{DEFAULT_BOOTSTRAP}]",
    )
    parser.add_argument(
        "--trust-checkpoint",
        action="store_true",
        help="also load checkpoints that have no tensor-only weights file from their SB3 zip, "
        "which unpickles it and so runs any code it holds: only for files you made yourself",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return parser


def _fail(message: str, status: int) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return status


def main(argv: list[str] | None = None) -> int:
    """Run the evaluation described on the command line and print its headline figures."""
    where: dict[str, Path] = {}  # the output folder, once the arguments are read
    return run_stoppable(PROG, lambda: _main(argv, where), lambda stop: _said(stop, where.get("out")))


def _said(stop: KeyboardInterrupt, out: Path | None = None) -> str:
    if isinstance(stop, EvalInterrupted):
        if stop.saved == stop.planned:
            return (
                f"{stopped(stop)} after the last game: all {stop.planned} games are saved in {stop.path}, "
                "but not every figure was written. Run the same command again to write them."
            )
        return (
            f"{stopped(stop)}; {stop.saved} of {stop.planned} games are saved in {stop.path}. "
            "Run the same command again to resume."
        )
    earlier = _saved_games(out / GAMES_FILE) if out is not None else 0
    if earlier:
        return (
            f"{stopped(stop)} before any game was played; the {earlier} games saved earlier in "
            f"{out / GAMES_FILE} are kept. Run the same command again to resume."
        )
    return f"{stopped(stop)} before any game was saved"


def _saved_games(path: Path) -> int:
    """Lines of a games.jsonl (0 when it is missing or is not a regular file)."""
    from fowlplay.envs.runtime.untrusted import UntrustedFileError, open_regular

    try:
        with open_regular(path, MAX_GAMES_BYTES) as handle:
            return sum(1 for line in handle if line.strip())
    except (OSError, UntrustedFileError):
        return 0


def _main(argv: list[str] | None, where: dict[str, Path] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if where is not None:
        where["out"] = args.out
    if len(args.agents) < 2:
        parser.error("--agents needs at least two agents")
    options = dict(args.option)
    if "num_players" in options:
        parser.error("give the player count with --players, not --option num_players=...")
    if args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out} is a file; give a directory (it is created if missing)")
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
            trust_checkpoint=args.trust_checkpoint,
        )
        config.make_env()  # validates the player count and options with the game's own message
        tables(len(specs), players, args.seating)  # enough agents for the seating
    except ValueError as err:  # unknown option, player count, agent spec, seating: the user's to fix
        parser.error(str(err))
    try:
        summary = evaluate(
            config, args.out, workers=args.workers, progress=not args.no_progress, bootstrap=args.bootstrap
        )
    except (AgentSpecError, ResumeError) as err:
        return _fail(str(err), 2)
    except FolderBusyError as err:
        return _fail(str(err), 1)
    except OutputError as err:
        games = args.out / GAMES_FILE
        fix = "free some space and" if disk_full(err) else "once that is fixed,"
        if _saved_games(games):
            return _fail(
                f"{err}; the games played so far are kept in {games}: {fix} run the same command again to resume",
                1,
            )
        return _fail(f"{err}" + ("; free some space and run the command again" if disk_full(err) else ""), 1)
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
