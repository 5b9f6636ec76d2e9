"""`fowlplay-train`: train a MaskablePPO agent for a game by self-play.

fowlplay-train --config configs/chicken_v1.yaml
fowlplay-train --config configs/chicken_v1.yaml --total-timesteps 50000 --out runs/quick
fowlplay-train --resume runs/chicken_v1 --total-timesteps 400000
fowlplay-train --convert runs/old_run        # add tensor-only weights to checkpoints of older versions
fowlplay-train --list-keys

Exit status: 0 done, 1 a checkpoint or file problem (a full disk, say), 2 a config mistake, 130
after Ctrl-C and 143 after SIGTERM (both save a checkpoint first).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import warnings
from pathlib import Path
from typing import Any

from fowlplay.envs.runtime.cli import disk_full, invoked_as, os_error_text, print_all, run_stoppable
from fowlplay.envs.runtime.stopping import exit_status, ignore_further_stops, stopped

PROG = "fowlplay-train"


def yaml_value(key: str, text: str) -> Any:
    """VALUE of a KEY=VALUE override read as plain YAML; python tags and broken YAML are refused."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        problem = str(getattr(exc, "problem", None) or exc).splitlines()[0]
        raise ValueError(
            f"{key}={text}: the value is not plain YAML ({problem}); give a number, true/false, a "
            "string or a [list] (tags such as !!python/... are never run)"
        ) from None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="fowlplay-train",
        description="Train a MaskablePPO agent for a fowlplay game by self-play against an opponent pool.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--config", help="YAML config of the run (configs/<game>.yaml)")
    source.add_argument(
        "--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR from its newest checkpoint"
    )
    source.add_argument(
        "--list-keys", action="store_true", help="print every config key with its default and exit"
    )
    source.add_argument(
        "--convert",
        metavar="PATH",
        help="write the tensor-only weights file that evaluation loads for a checkpoint (or every "
        "checkpoint of a run directory) made by an older fowlplay; it loads the SB3 zip, so only "
        "for files you made yourself",
    )
    parser.add_argument(
        "--total-timesteps", type=int, help="learner decisions in all (overrides total_timesteps)"
    )
    parser.add_argument("--seed", type=int, help="overrides seed")
    parser.add_argument("--out", help="run directory (overrides out)")
    parser.add_argument("--n-envs", type=int, help="parallel environments (overrides n_envs)")
    parser.add_argument(
        "--max-minutes", type=float, help="stop after this much wall time (overrides max_minutes)"
    )
    parser.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="override any config key, dotted for sections (e.g. --set ppo.n_steps=64); repeatable",
    )
    parser.add_argument(
        "--address",
        help="with trainer: rllib, join this Ray cluster ('auto', HOST:6379, ray://HOST:10001) instead of "
        "starting Ray here (overrides rllib.address)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (overrides progress_bar)")
    parser.add_argument("--overwrite", action="store_true", help="replace a run already in the run directory")
    parser.add_argument(
        "--trust-checkpoint",
        action="store_true",
        help="with --resume, also load files the run's record (files.json) does not vouch for: a run "
        "made elsewhere or by an older fowlplay, whose older checkpoints load from the pickled SB3 zip "
        "(which runs any code it holds): only for files you trust",
    )
    return parser.parse_args(argv)


def set_overrides(items: list[str]) -> dict[str, Any]:
    """The config overrides of `--set KEY=VALUE` items (values read as YAML)."""
    from fowlplay.training.config import ConfigError

    overrides: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set takes KEY=VALUE; got {item!r}")
        try:
            overrides[key.strip()] = yaml_value(f"--set {key.strip()}", value)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    return overrides


def overrides_from(args: argparse.Namespace) -> dict[str, Any]:
    """The config overrides the command line asks for."""
    overrides = set_overrides(args.set)
    named = {
        "total_timesteps": args.total_timesteps,
        "seed": args.seed,
        "out": args.out,
        "n_envs": args.n_envs,
        "max_minutes": args.max_minutes,
        "rllib.address": args.address,
    }
    overrides.update({key: value for key, value in named.items() if value is not None})
    if args.no_progress:
        overrides["progress_bar"] = False
    return overrides


def given_as(args: argparse.Namespace) -> dict[str, str]:
    """Each override's flag as it was given ('--set ppo.n_steps=abc', '--total-timesteps -5'), which
    its error names (a --set value is no mistake of the YAML file)."""
    given = {item.partition("=")[0].strip(): f"--set {item}" for item in args.set}
    flags = {
        "total_timesteps": ("--total-timesteps", args.total_timesteps),
        "seed": ("--seed", args.seed),
        "out": ("--out", args.out),
        "n_envs": ("--n-envs", args.n_envs),
        "max_minutes": ("--max-minutes", args.max_minutes),
        "rllib.address": ("--address", args.address),
    }
    given.update({key: f"{flag} {value}" for key, (flag, value) in flags.items() if value is not None})
    if args.no_progress:
        given["progress_bar"] = "--no-progress"
    return given


def main(argv: list[str] | None = None) -> int:
    """Run the command; returns the exit status."""
    from fowlplay.envs.runtime.threads import passive_threads

    passive_threads()  # before anything imports torch
    args = parse_args(argv)
    # `_run` handles a stop during training (it saves a checkpoint); one before training began (the
    # seconds of importing torch and SB3 included), or after it ended, saved nothing new.
    return run_stoppable(
        PROG, lambda: _start(args), lambda stop: f"{stopped(stop)} before any checkpoint was saved"
    )


def _start(args: argparse.Namespace) -> int:
    try:
        import sb3_contrib  # noqa: F401
        import stable_baselines3  # noqa: F401
        import yaml  # noqa: F401
    except ImportError as exc:
        print(f"{PROG} needs the training extra ({exc.name} is missing): pip install 'fowlplay[train]'")
        return 2
    if args.list_keys:
        from fowlplay.training.config import help_table

        return print_all(help_table())
    return _run(args)


def _error(message: str, status: int) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return status


def _summary(result) -> str:
    """The two figures of a run, each named so one is not read against the other: the share of its
    recent training games the learner won (exploring, a draw no win), and the evaluation score of
    its best checkpoint (win 1, draw 0.5, loss 0, on fixed deals)."""
    rates = ", ".join(f"{kind} {rate:.0%}" for kind, rate in result.win_rates.items()) or "none ended yet"
    lines = [
        "  games won while training (the learner's recent games against each kind of opponent, its moves "
        f"sampled; a draw is no win): {rates}"
    ]
    best = result.best
    if best is not None:
        from fowlplay.training.ladder import LADDER

        # In the ladder's order (a resumed run reads them from best.json, whose order may differ).
        ranks = {name: k for k, name in enumerate(LADDER)}
        names = sorted(best["scores"], key=lambda name: ranks.get(name, len(ranks)))
        scores = ", ".join(f"vs {name} {best['scores'][name]:.3f}" for name in names)
        games = f"{best['games']} games" if best.get("games") else "games"  # a run of older versions: none
        lines.append(
            f"  evaluation score of the best checkpoint (win 1, draw 0.5, loss 0; {games} on "
            f"fixed deals against each): {scores}, at {best['timesteps']} timesteps; ckpt:{result.run_dir} "
            f"plays it ({best['checkpoint']}; ckpt:{result.run_dir}/final the last)"
        )
    return "\n".join(lines)


def _resume_command(run_dir: Path | None) -> str:
    """The command that continues `run_dir`, by the name this command was run by."""
    return shlex.join([invoked_as(PROG), "--resume", str(run_dir)])


def _newest_checkpoint(run_dir: Path | None) -> Path | None:
    """The newest complete checkpoint of a run directory (what --resume continues from), if any."""
    from fowlplay.training.checkpoint import CheckpointError, resolve

    if run_dir is None or not run_dir.is_dir():
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return resolve(run_dir, prefer_best=False)
    except (CheckpointError, OSError):
        return None


def _run(args: argparse.Namespace) -> int:
    from fowlplay.envs.runtime.lock import FolderBusyError
    from fowlplay.training.checkpoint import CheckpointError, convert
    from fowlplay.training.config import ConfigError, load_config
    from fowlplay.training.loop import RunInterrupted
    from fowlplay.training.sb3.trainer import WorkerDiedError
    from fowlplay.training.train import RunFinished, resume, train

    run_dir = None
    try:
        if args.convert:
            for path in convert(args.convert):
                print(f"{PROG}: wrote {path}")
            return 0
        overrides = overrides_from(args)
        if args.resume:
            run_dir = Path(args.resume)
            for key in ("seed", "out", "game", "env_options", "trainer"):
                if key in overrides or any(k.startswith(key + ".") for k in overrides):
                    raise ConfigError(
                        f"--resume continues {args.resume} as it was started; {key} cannot change"
                    )
            if args.overwrite:
                raise ConfigError("--overwrite starts a new run; it cannot be combined with --resume")
            result = resume(
                args.resume, overrides, trust_checkpoint=args.trust_checkpoint, given=given_as(args)
            )
        else:
            if args.trust_checkpoint:
                raise ConfigError("--trust-checkpoint is for --resume (a new run loads no checkpoint)")
            config = load_config(args.config, overrides, given_as(args))
            run_dir = config.run_dir()
            result = train(config, overwrite=args.overwrite)
    except RunFinished as done:  # nothing to do is no error
        print(f"{PROG}: {done}")
        return 0
    except (CheckpointError, FolderBusyError) as exc:
        return _error(str(exc), 1)
    except ConfigError as exc:
        return _error(str(exc), 2)
    except WorkerDiedError as exc:  # its checkpoint is saved: the run goes on from it
        return _error(f"{exc}: continue with: {_resume_command(run_dir)}", 1)
    except OSError as exc:  # a full disk, a read-only folder: say which file, and what is safe
        message = os_error_text(exc, run_dir)
        newest = _newest_checkpoint(run_dir)
        fix = "free some space and continue" if disk_full(exc) else "once that is fixed, continue"
        if newest:
            message += f"; the newest complete checkpoint is {newest}: {fix} with: {_resume_command(run_dir)}"
        elif disk_full(exc):
            message += "; free some space and run the command again"
        return _error(message, 1)
    except RunInterrupted as stop:
        ignore_further_stops()  # a second signal changes nothing now
        print(
            f"\n{PROG}: {stopped(stop)}; saved {stop.checkpoint}. Continue with: {_resume_command(run_dir)}",
            file=sys.stderr,
        )
        return exit_status(stop)
    why = " (stopped by max_minutes)" if result.stopped_by_time else ""
    print(f"{PROG}: {result.timesteps} timesteps in {result.seconds:.0f} s{why}; saved {result.checkpoint}")
    print(_summary(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
