"""`fowlplay-league`'s command line: its arguments, and one line and an exit status for each way a
league can end."""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import sys
from pathlib import Path

from fowlplay import envs
from fowlplay.envs.runtime.cli import invoked_as
from fowlplay.envs.runtime.stopping import exit_status, ignore_further_stops, sigterm_stops, stopped
from fowlplay.evaluation.league.config import (
    PROG,
    LeagueConfig,
    LeagueConfigError,
    LeagueFailedError,
    load_config,
)
from fowlplay.evaluation.league.outputs import spread_text


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Train algorithms with several seeds and rate every checkpoint against the fixed ladder.",
    )
    parser.add_argument("--game", required=True, choices=envs.ENV_NAMES, help="registered game")
    parser.add_argument("--config", required=True, type=Path, help="league YAML (configs/league/<game>.yaml)")
    parser.add_argument(
        "--out", required=True, type=Path, help="output directory (resumed when it holds a league)"
    )
    parser.add_argument("--workers", type=int, default=1, help="worker processes per evaluation [1]")
    parser.add_argument(
        "--train-workers",
        type=int,
        default=1,
        metavar="N",
        help="training runs (and then exploitability estimates) side by side, each one process of one "
        "thread; the results do not depend on it [1]",
    )
    parser.add_argument(
        "--bootstrap", type=int, default=None, help="rating bootstrap resamples [the config's]"
    )
    parser.add_argument("--progress", action="store_true", help="progress bars during evaluations")
    parser.add_argument(
        "--rungs",
        nargs="+",
        metavar="SPEC",
        help="play only these rungs of the ladder (random among them): a quicker, partial league, "
        "marked as such in every output [every rung]",
    )
    parser.add_argument(
        "--algorithms",
        nargs="+",
        metavar="NAME",
        help="train and rate only these algorithms of the config [all]",
    )
    parser.add_argument(
        "--decisions",
        type=int,
        metavar="N",
        help="learner decisions per training run instead of the config's; recorded in every output, "
        "and a league directory resumed with another budget is refused [the config's]",
    )
    parser.add_argument(
        "--seeds",
        nargs="+",
        type=int,
        metavar="S",
        help="training seeds instead of the config's [the config's]",
    )
    parser.add_argument(
        "--matches",
        type=int,
        metavar="M",
        help="duplicate matches per pair instead of the config's [the config's]",
    )
    parser.add_argument(
        "--exploit",
        nargs="+",
        type=int,
        metavar="N",
        help="TIMESTEPS MATCHES [SEEDS]: estimate every checkpoint's exploitability with fowlplay-exploit "
        "at this budget (SEEDS best responses each, the strongest kept; 1 if omitted), instead of the "
        "config's `exploit:` [the config's; none]",
    )
    parser.add_argument(
        "--trust-checkpoint",
        action="store_true",
        help="resume trainings and best responses from files their run's record (files.json) does not "
        "vouch for (passed to fowlplay-train and fowlplay-exploit): only for a folder you trust",
    )
    return parser


def command_line(args: argparse.Namespace) -> str:
    """The command as the outputs show it: the folder's arguments and the budget's overrides."""
    command = shlex.join(
        [invoked_as(PROG), "--game", args.game, "--config", str(args.config), "--out", str(args.out)]
    )
    if args.algorithms:
        command += " --algorithms " + shlex.join(args.algorithms)
    if args.rungs:
        command += " --rungs " + shlex.join(args.rungs)
    if args.decisions is not None:
        command += f" --decisions {args.decisions}"
    if args.seeds:
        command += " --seeds " + " ".join(map(str, args.seeds))
    if args.matches is not None:
        command += f" --matches {args.matches}"
    if args.exploit is not None:
        command += " --exploit " + " ".join(map(str, args.exploit))
    return command


def run_command(argv: list[str] | None, run_league) -> int:
    """Run the league described on the command line with `run_league`; the exit status."""
    from fowlplay.envs.runtime.cli import disk_full, os_error_text
    from fowlplay.envs.runtime.lock import FolderBusyError, hold_folder

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error("--workers must be >= 1")
    if args.train_workers < 1:
        parser.error("--train-workers must be >= 1")
    if args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out} is a file; give a directory (it is created if missing)")
    try:
        config = load_config(args.config, args.game)
    except LeagueConfigError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    config = dataclasses.replace(config, trust_checkpoint=args.trust_checkpoint)
    command = command_line(args)
    with sigterm_stops():
        try:
            with hold_folder(args.out, command):
                summary = _run_league(run_league, config, args, command)
        except LeagueConfigError as exc:
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return 2
        except LeagueFailedError as exc:
            for e in exc.errors:
                print(f"{PROG}: {e['entry']} ({e['stage']}): {e['message']}", file=sys.stderr)
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return 1
        except FolderBusyError as exc:
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return 1
        except OSError as exc:  # a full disk, a folder that cannot be made: one line, naming it
            fix = "; free some space and run the same command again to resume" if disk_full(exc) else ""
            print(f"{PROG}: error: {os_error_text(exc, args.out)}{fix}", file=sys.stderr)
            return 1
        except KeyboardInterrupt as stop:
            ignore_further_stops()  # a second signal changes nothing now
            print(f"\n{PROG}: {stopped(stop)}; run the same command again to resume", file=sys.stderr)
            return exit_status(stop)
    for r in summary["algorithms"]:
        print(
            f"{r['algorithm']} ({r['seeds_rated']}/{r['seeds']} seeds): Elo {spread_text(r, 'elo', 0)}; "
            f"vs random {spread_text(r, 'vs_random')}; vs baseline {spread_text(r, 'vs_baseline')}"
        )
    for e in summary["errors"]:
        print(f"{PROG}: {e['entry']} ({e['stage']}): {e['message']}", file=sys.stderr)
    print(f"leaderboard: {args.out / 'leaderboard.md'}")
    return 1 if summary["errors"] else 0


def _run_league(run_league, config: LeagueConfig, args: argparse.Namespace, command: str) -> dict:
    """`run_league` with the command line's choices."""
    return run_league(
        config,
        args.out,
        args.workers,
        args.progress,
        args.bootstrap,
        command=command,
        rungs=args.rungs,
        algorithms=args.algorithms,
        decisions=args.decisions,
        seeds=args.seeds,
        matches=args.matches,
        exploit=None if args.exploit is None else tuple(args.exploit),
        train_workers=args.train_workers,
    )
