"""`fowlplay-train`: train a MaskablePPO agent for a game by self-play.

fowlplay-train --config configs/chicken_v0.yaml
fowlplay-train --config configs/chicken_v0.yaml --total-timesteps 50000 --out runs/quick
fowlplay-train --resume runs/chicken_v0 --total-timesteps 400000
fowlplay-train --list-keys
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from collections.abc import Iterator
from typing import Any

#: Exit status when Ctrl-C stopped training (after saving a checkpoint), as shells report SIGINT.
EXIT_INTERRUPTED = 130


@contextlib.contextmanager
def one_line_warnings(prog: str) -> Iterator[None]:
    """Print warnings as one line, `<prog>: warning: <message>`, on stderr (no file and line)."""

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        print(f"{prog}: warning: {message}", file=sys.stderr, flush=True)

    previous = warnings.showwarning
    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = previous


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
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (overrides progress_bar)")
    parser.add_argument("--overwrite", action="store_true", help="replace a run already in the run directory")
    return parser.parse_args(argv)


def overrides_from(args: argparse.Namespace) -> dict[str, Any]:
    """The config overrides the command line asks for."""
    import yaml

    from training.config import ConfigError

    overrides: dict[str, Any] = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set takes KEY=VALUE; got {item!r}")
        overrides[key.strip()] = yaml.safe_load(value)
    named = {
        "total_timesteps": args.total_timesteps,
        "seed": args.seed,
        "out": args.out,
        "n_envs": args.n_envs,
        "max_minutes": args.max_minutes,
    }
    overrides.update({key: value for key, value in named.items() if value is not None})
    if args.no_progress:
        overrides["progress_bar"] = False
    return overrides


def main(argv: list[str] | None = None) -> int:
    """Run the command; returns the exit status."""
    args = parse_args(argv)
    try:
        import sb3_contrib  # noqa: F401
        import stable_baselines3  # noqa: F401
        import yaml  # noqa: F401
    except ImportError as exc:
        print(
            f"fowlplay-train needs the training extra ({exc.name} is missing): pip install 'fowlplay[train]'"
        )
        return 2

    from training.checkpoint import CheckpointError
    from training.config import ConfigError, help_table, load_config
    from training.train import RunInterrupted, resume, train

    if args.list_keys:
        print(help_table())
        return 0
    try:
        overrides = overrides_from(args)
        if args.resume:
            for key in ("seed", "out", "game", "env_options"):
                if key in overrides or any(k.startswith(key + ".") for k in overrides):
                    raise ConfigError(
                        f"--resume continues {args.resume} as it was started; {key} cannot change"
                    )
            if args.overwrite:
                raise ConfigError("--overwrite starts a new run; it cannot be combined with --resume")
            result = resume(args.resume, overrides)
        else:
            result = train(load_config(args.config, overrides), overwrite=args.overwrite)
    except CheckpointError as exc:
        print(f"fowlplay-train: error: {exc}", file=sys.stderr)
        return 1
    except ConfigError as exc:
        print(f"fowlplay-train: error: {exc}", file=sys.stderr)
        return 2
    except RunInterrupted as stop:
        print(
            f"\nfowlplay-train: interrupted; saved {stop.checkpoint}. Continue with --resume.",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    rates = ", ".join(f"{kind} {rate:.0%}" for kind, rate in result.win_rates.items()) or "none yet"
    why = " (stopped by max_minutes)" if result.stopped_by_time else ""
    print(
        f"fowlplay-train: {result.timesteps} timesteps in {result.seconds:.0f} s{why}; "
        f"saved {result.checkpoint}\n  recent training win rate by opponent kind: {rates}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
