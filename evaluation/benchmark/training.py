"""Training throughput: learner decisions per second of a real self-play run, with or without a
competing load.

`training_decisions_per_second(game)` trains with the game's config for a fixed number of learner
decisions (a budget in decisions, never in minutes) in a temporary run directory and returns the
rate of `model.learn`. `load=k` first starts k busy Python processes (killed afterwards, whatever
happens), so the figure shows how training fares on a machine that is doing something else, as a
user's machine usually is. The wall-clock cap `max_minutes` is only a safety net; a run it cuts is
reported (`cut: True`, and a warning on stderr).

    python -m fowlplay.evaluation.benchmark.training --games chicken_v1 murder_most_fowl_v0 --loads 0 2

Compare two settings in the same command (`--set`, repeated rounds interleave them), not across
commands: another program's load changes every figure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fowlplay import envs
from fowlplay.envs.runtime.threads import passive_threads

#: The configs folder of a source checkout (the package's folders sit beside it). An installed
#: package has no such folder: its users pass `config_dir` or run from a checkout's root.
CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs"
#: Default budget: ten rollouts of the default configs (2048 decisions each).
DEFAULT_DECISIONS = 20_480


def uptime() -> str:
    """How busy the machine is (load averages over 1, 5 and 15 minutes): every figure depends on it."""
    try:
        one, five, fifteen = os.getloadavg()
    except (AttributeError, OSError):
        return "load average: unknown"
    return f"load average: {one:.2f}, {five:.2f}, {fifteen:.2f} ({os.cpu_count()} cores)"


def default_config(game: str, config_dir: str | Path | None = None) -> Path:
    """`<config_dir>/<game>.yaml`; without `config_dir`, the checkout's `configs/`, else `./configs/`."""
    places = [Path(config_dir)] if config_dir is not None else [CONFIG_DIR, Path.cwd() / "configs"]
    for folder in places:
        path = folder / f"{game}.yaml"
        if path.is_file():
            return path
    looked = " and ".join(str(folder) for folder in dict.fromkeys(places))
    raise FileNotFoundError(
        f"no training config {game}.yaml in {looked}; pass --config-dir (a folder holding <game>.yaml, "
        "such as the configs/ folder of a fowlplay checkout) or config_path (one training YAML)"
    )


#: A busy Python loop that ends when its parent (pid in argv[1]) has gone: an orphan is re-parented.
BUSY_LOOP = """
import os, sys
parent = int(sys.argv[1])
while os.getppid() == parent:
    for _ in range(100_000):
        pass
"""


@contextlib.contextmanager
def competing_load(processes: int) -> Iterator[list[subprocess.Popen]]:
    """Run `processes` busy Python loops for the duration of the block (always stopped after).

    Each runs in a session of its own, like a program the user started elsewhere: with the
    kernel's autogroup scheduling, loops in the bench's own session would instead split the bench's
    share of the machine with the training, however many other programs are running. A session of
    its own also means that a signal to the bench's process group does not reach it, and a killed
    bench (SIGKILL, or SIGTERM, which skips the `finally` below) cannot stop it: so each loop
    stops by itself once the process that started it is gone.
    """
    busy = [
        subprocess.Popen([sys.executable, "-c", BUSY_LOOP, str(os.getpid())], start_new_session=True)
        for _ in range(processes)
    ]
    try:
        yield busy
    finally:
        for process in busy:
            process.kill()
        for process in busy:
            process.wait()


#: The most baseline decisions a benchmark run imitates (`jax.imitate`). The warm start comes before
#: the first update, outside `seconds`, and changes no rate; a config's 100,000 would add minutes
#: (Fowl's Python baseline records about 400 a second), while `jax.imitate_kl`, which needs an
#: imitated policy, still costs the epochs what it costs.
BENCH_IMITATE = 512


def training_decisions_per_second(
    game: str,
    config_path: str | Path | None = None,
    decisions: int = DEFAULT_DECISIONS,
    load: int = 0,
    overrides: dict[str, Any] | None = None,
    max_minutes: float = 10.0,
    config_dir: str | Path | None = None,
) -> dict[str, Any]:
    """Train `game` (its config, or `config_path`) for `decisions` learner decisions; the rate and run facts.

    The config is `config_path`, else `<game>.yaml` found by `default_config(game, config_dir)`.

    Returns `game`, `config`, `load`, `decisions` (done: whole rollouts, so at least those asked
    for unless cut), `seconds` (of learning, without start-up), `decisions_per_s`,
    `compile_seconds` (trainer: jax's compile before the first decision, outside `seconds`; else
    None), `cpu_seconds`
    (this process's CPU time for the whole call, start-up included; worker processes not counted),
    `cut` (the wall-clock cap stopped it), and the
    settings that decide the rate: `vec_env`, `n_envs`, `torch_threads`, `net_arch`, `n_epochs`.
    """
    from fowlplay.training.config import load_config
    from fowlplay.training.train import train

    settings = _run_settings(game, decisions, load, max_minutes, overrides)
    path = Path(config_path) if config_path is not None else default_config(game, config_dir)
    with tempfile.TemporaryDirectory(prefix="fowlplay-bench-") as out:
        config = load_config(path, {**settings, "out": out})
        if config.game != game:
            raise ValueError(f"{path} trains {config.game}, not {game}")
        if config.jax.imitate > BENCH_IMITATE and "jax.imitate" not in settings:
            config = load_config(path, {**settings, "jax.imitate": BENCH_IMITATE, "out": out})
        with competing_load(load):
            cpu = time.process_time()
            result = train(config, overwrite=True, verbose=False)
            cpu = time.process_time() - cpu
    if result.stopped_by_time:
        _report_cut(game, max_minutes, result.timesteps, decisions)
    return {
        "game": game,
        "config": str(path),
        "load": load,
        "decisions": result.timesteps,
        "seconds": result.seconds,
        "decisions_per_s": result.timesteps / result.seconds,
        "compile_seconds": result.compile_seconds,
        "cpu_seconds": cpu,
        "cut": result.stopped_by_time,
        "vec_env": config.vec_env,
        "n_envs": config.n_envs,
        "torch_threads": config.torch_threads,
        "net_arch": list(config.ppo.net_arch),
        "n_epochs": config.ppo.n_epochs,
        "num_envs": config.jax.num_envs,
        "n_steps": config.jax.n_steps,
    }


def _run_settings(
    game: str, decisions: int, load: int, max_minutes: float, overrides: dict[str, Any] | None
) -> dict[str, Any]:
    """The config overrides of a benchmark run (its budget in decisions, and no checkpoints,
    progress bar or TensorBoard), after checking the request; the run directory is the caller's."""
    if game not in envs.ENV_NAMES:
        raise ValueError(f"unknown game {game!r}; registered games: {list(envs.ENV_NAMES)}")
    if decisions < 1 or load < 0:
        raise ValueError(f"decisions must be >= 1 and load >= 0; got {decisions}, {load}")
    return {
        **(overrides or {}),
        "total_timesteps": decisions,
        "max_minutes": max_minutes,
        "checkpoint_every": 0,
        "progress_bar": False,
        "tensorboard": False,
    }


def _report_cut(what: str, max_minutes: float, done: int, decisions: int) -> None:
    """Say on stderr that the wall-clock safety net stopped a run before its budget."""
    print(
        f"fowlplay bench: the {max_minutes}-minute cap cut {what} off after {done} of {decisions} "
        "decisions; its rate covers only those",
        file=sys.stderr,
    )


#: Run inside a subprocess by `checkout_decisions_per_second`: the same run as
#: `training_decisions_per_second`, with the other checkout's own code and config. argv: the
#: checkout's layout ("namespace": fowlplay.training, "top": an older tree's top-level training),
#: the config's path, then the settings as JSON. Prints the run's figures as JSON.
_CHECKOUT_RUN = """
import json, sys, tempfile
layout, path, settings = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
if layout == "namespace":
    try:
        from fowlplay.envs.runtime.threads import passive_threads
        passive_threads()  # as that checkout's own entry points do, before torch loads
    except ImportError:
        pass
    from fowlplay.training.config import load_config
    from fowlplay.training.train import train
else:
    from training.config import load_config
    from training.train import train
with tempfile.TemporaryDirectory(prefix="fowlplay-bench-") as out:
    config = load_config(path, {**settings, "out": out})
    result = train(config, overwrite=True, verbose=False)
print(json.dumps({
    "game": config.game, "decisions": result.timesteps, "seconds": result.seconds,
    "cut": result.stopped_by_time, "vec_env": config.vec_env, "n_envs": config.n_envs,
    "torch_threads": config.torch_threads, "net_arch": list(config.ppo.net_arch),
    "n_epochs": config.ppo.n_epochs,
}))
"""


def checkout_layout(checkout: Path) -> str:
    """How a fowlplay checkout's code is imported: 'namespace' (fowlplay.training, as this one) or
    'top' (the top-level `training` package of older trees); a clear error if it is no checkout."""
    if not (checkout / "training" / "train.py").is_file() or not (checkout / "envs").is_dir():
        raise ValueError(
            f"{checkout} is not a fowlplay checkout: it needs training/train.py and envs/ (for an "
            "older commit: git worktree add <folder> <commit>)"
        )
    setup = checkout / "setup.cfg"
    if setup.is_file() and "fowlplay.training" in setup.read_text():
        return "namespace"
    return "top"


def checkout_config(checkout: Path, game: str) -> Path:
    """A checkout's own `configs/<game>.yaml`; a clear error if it has none (or is no checkout)."""
    checkout_layout(checkout)
    config = checkout / "configs" / f"{game}.yaml"
    if not config.is_file():
        raise ValueError(f"{checkout} has no training config configs/{game}.yaml")
    return config


def checkout_decisions_per_second(
    checkout: str | Path,
    game: str,
    decisions: int = DEFAULT_DECISIONS,
    load: int = 0,
    overrides: dict[str, Any] | None = None,
    max_minutes: float = 10.0,
) -> dict[str, Any]:
    """`training_decisions_per_second` for another fowlplay checkout (an older commit's worktree):
    its own code and its own `configs/<game>.yaml`, in a Python process of its own.

    This is how old and new code are compared in one command: with `--checkout old:<folder>`
    they take turns, so that the machine's changing load touches both alike. The other process
    inherits this environment as it was before the bench set anything (OpenMP's wait policy
    included): it runs as that checkout's own entry point would.
    """
    checkout = Path(checkout).resolve()
    config = checkout_config(checkout, game)
    layout = checkout_layout(checkout)
    settings = _run_settings(game, decisions, load, max_minutes, overrides)
    env = dict(_INHERITED_ENVIRONMENT)
    with tempfile.TemporaryDirectory(prefix="fowlplay-checkout-") as shim:
        if layout == "namespace":
            # `fowlplay.envs` etc. from that checkout, ahead of the installed (editable) package.
            package = Path(shim) / "fowlplay"
            package.mkdir()
            for folder in ("envs", "training", "evaluation"):
                (package / folder).symlink_to(checkout / folder, target_is_directory=True)
            env["PYTHONPATH"] = shim
        else:
            env["PYTHONPATH"] = str(checkout)
        with competing_load(load):
            cpu = _children_cpu()
            done = subprocess.run(
                [sys.executable, "-c", _CHECKOUT_RUN, layout, str(config), json.dumps(settings)],
                cwd=checkout,
                env=env,
                capture_output=True,
                text=True,
            )
            cpu = _children_cpu() - cpu
    if done.returncode != 0:
        raise RuntimeError(f"training with the checkout {checkout} failed:\n{done.stderr[-3000:]}")
    row = json.loads(done.stdout.strip().splitlines()[-1])
    if row["cut"]:
        _report_cut(f"{game} ({checkout})", max_minutes, row["decisions"], decisions)
    return {
        **row,
        "config": str(config),
        "load": load,
        "decisions_per_s": row["decisions"] / row["seconds"],
        "cpu_seconds": cpu,
    }


def _children_cpu() -> float:
    """CPU seconds of this process's finished children (the checkout's run, with its workers)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


#: This process's environment before `main` changed it (`checkout_decisions_per_second` runs
#: another checkout as its own entry point would: with what the user set, not what the bench set).
_INHERITED_ENVIRONMENT = dict(os.environ)


#: The contention bar of the throughput issue: beside as many busy processes as a 2-core machine
#: has cores, training keeps at least this share of its idle rate.
LOADED_SHARE_BAR = 0.6


def loaded_shares(rows: list[dict[str, Any]]) -> dict[tuple[str, str, int], float]:
    """Loaded rate / idle rate, by (game, label, load), for every loaded row whose idle twin ran."""
    idle = {(r["game"], r.get("label", "")): r["decisions_per_s"] for r in rows if r["load"] == 0}
    return {
        (r["game"], r.get("label", ""), r["load"]): r["decisions_per_s"]
        / idle[(r["game"], r.get("label", ""))]
        for r in rows
        if r["load"] > 0 and (r["game"], r.get("label", "")) in idle
    }


def format_rows(rows: list[dict[str, Any]]) -> str:
    """The figures as a Markdown table."""
    lines = [
        "| game | label | load | decisions | decisions/s | of idle | settings |",
        "|---|---|---|---|---|---|---|",
    ]
    shares = loaded_shares(rows)
    for r in rows:
        share = shares.get((r["game"], r.get("label", ""), r["load"]))
        settings = (
            f"{r['vec_env']} x{r['n_envs']}, {r['torch_threads']} thread(s), net {r['net_arch']}, "
            f"{r['n_epochs']} epochs"
        )
        lines.append(
            f"| {r['game']} | {r.get('label', '')} | {r['load']} | {r['decisions']}{' (cut)' if r['cut'] else ''} "
            f"| {r['decisions_per_s']:,.0f} | {'-' if share is None else f'{share:.0%}'} | {settings} |"
        )
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        prog="python -m fowlplay.evaluation.benchmark.training", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--games", nargs="+", default=list(envs.ENV_NAMES), choices=envs.ENV_NAMES)
    parser.add_argument("--decisions", type=int, default=DEFAULT_DECISIONS, help="learner decisions per run")
    parser.add_argument("--loads", type=int, nargs="+", default=[0, 2], help="busy processes beside training")
    parser.add_argument("--rounds", type=int, default=1, help="repeat every measurement, interleaved")
    parser.add_argument(
        "--config-dir",
        help="folder of the <game>.yaml training configs (default: the checkout's configs/, else ./configs)",
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="LABEL:KEY=VALUE;...",
        help="a named set of config overrides measured beside the config (repeatable)",
    )
    parser.add_argument(
        "--checkout",
        action="append",
        default=[],
        metavar="LABEL:FOLDER",
        help="another fowlplay checkout (e.g. a git worktree of an older commit) measured beside this "
        "one with its own code and configs, in turns (repeatable)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Measure each game under each load (and each --set variant, interleaved) and print the table."""
    parser = build_parser()
    args = parser.parse_args(argv)
    checkouts = _checkouts(parser, args)
    try:
        for game in args.games:
            default_config(game, args.config_dir)
    except FileNotFoundError as error:
        parser.error(str(error))
    passive_threads()  # before the first run imports torch
    variants = _variants(args.variant)
    print(uptime(), flush=True)
    rows: list[dict[str, Any]] = []
    for _ in range(args.rounds):
        for game in args.games:
            for load in args.loads:
                failed = _measure_turn(game, load, args.decisions, args.config_dir, variants, checkouts, rows)
                if failed:
                    print(format_rows(rows), flush=True)
                    print(f"{parser.prog}: error: {failed}", file=sys.stderr)
                    return 1
    print(format_rows(rows))
    print(uptime())
    return 0


def _checkouts(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[tuple[str, Path]]:
    """The --checkout folders by label, each holding a config of every chosen game."""
    checkouts: list[tuple[str, Path]] = []
    for spec in args.checkout:
        label, colon, folder = spec.partition(":")
        if not colon or not label or not folder:
            parser.error(f"--checkout takes LABEL:FOLDER (e.g. old:../fowlplay-old); got {spec!r}")
        try:
            for game in args.games:
                checkout_config(Path(folder), game)
        except ValueError as error:
            parser.error(f"--checkout {spec}: {error}")
        checkouts.append((label, Path(folder)))
    return checkouts


def _variants(specs: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """The config as written, then each --variant LABEL:KEY=VALUE;... (values read as YAML)."""
    import yaml

    variants: list[tuple[str, dict[str, Any]]] = [("config", {})]
    for spec in specs:
        label, _, pairs = spec.partition(":")
        settings = {}
        for pair in filter(None, pairs.split(";")):
            key, _, value = pair.partition("=")
            settings[key] = yaml.safe_load(value)
        variants.append((label, settings))
    return variants


def _measure_turn(
    game: str,
    load: int,
    decisions: int,
    config_dir: str | None,
    variants: list[tuple[str, dict[str, Any]]],
    checkouts: list[tuple[str, Path]],
    rows: list[dict[str, Any]],
) -> str | None:
    """One turn of `game` under `load`: each variant of this checkout, then each other checkout, every
    row printed as it comes and added to `rows`; the error of another checkout whose run failed."""
    for label, settings in variants:
        row = training_decisions_per_second(
            game,
            decisions=decisions,
            load=load,
            overrides=settings,
            config_dir=config_dir,
        )
        row["label"] = label
        rows.append(row)
        print(format_rows([row]).splitlines()[-1], flush=True)
    for label, folder in checkouts:
        try:
            row = checkout_decisions_per_second(folder, game, decisions=decisions, load=load)
        except RuntimeError as error:  # that checkout's own run failed: say why, keep ours
            return f"--checkout {label}: {error}"
        row["label"] = label
        rows.append(row)
        print(format_rows([row]).splitlines()[-1], flush=True)
    return None


if __name__ == "__main__":
    raise SystemExit(main())
