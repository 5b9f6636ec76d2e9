"""A whole evaluation: play (or resume) every game, then compute and write every figure."""

from __future__ import annotations

import platform
import shlex
import time
from importlib import metadata
from pathlib import Path

import numpy as np
from fowlplay import envs
from fowlplay.envs.runtime.cli import invoked_as
from fowlplay.envs.runtime.stopping import signal_of
from fowlplay.evaluation import report
from fowlplay.evaluation.matches import (
    BOOTSTRAP_KEY,
    GAMES_FILE,
    EvalConfig,
    EvalInterrupted,
    deal_seed,
    output_folder,
    run_games,
)
from fowlplay.evaluation.ratings import rating_table
from fowlplay.evaluation.stats import agent_summary, game_summary, latency, pairwise, redeal_note

#: Bootstrap resamples for the rating intervals.
DEFAULT_BOOTSTRAP = 1000


def _versions(config: EvalConfig) -> dict:
    packages = ["numpy", "scipy", "openskill", "gymnasium", "pettingzoo"]
    if any(a.kind == "checkpoint" for a in config.agents):
        packages += ["torch", "stable_baselines3", "sb3_contrib"]
    versions = {"fowlplay": envs.__version__, "python": platform.python_version()}
    for package in packages:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def command_line(config: EvalConfig, out: Path) -> str:
    """The fowlplay-eval command that reproduces this evaluation."""
    parts = [invoked_as("fowlplay-eval"), "--game", config.game, "--players", str(config.players), "--agents"]
    parts += [agent.text for agent in config.agents]
    parts += ["--matches", str(config.matches), "--seed", str(config.seed), "--seating", config.seating]
    for key, value in config.options.items():
        parts += ["--option", f"{key}={value}"]
    parts += ["--out", str(out)]
    return shlex.join(parts)


def check_agents(config: EvalConfig) -> EvalConfig:
    """Refuse unknown, missing or incompatible agents before any game is played; the config with
    each checkpoint pinned to the file and weights it plays."""
    return config.resolve_agents()


def summarise(config: EvalConfig, rows: list[dict], bootstrap: int = DEFAULT_BOOTSTRAP) -> dict:
    """Every figure of an evaluation from its games (timing figures kept under 'timing')."""
    labels = config.labels
    kinds = [a.kind for a in config.agents]
    anchor = kinds.index("random") if "random" in kinds else 0
    rng = np.random.default_rng(np.random.SeedSequence(config.seed, spawn_key=(BOOTSTRAP_KEY,)))
    return {
        "config": {
            "game": config.game,
            "players": config.players,
            "options": config.options,
            "agents": [a.to_dict() for a in config.agents],
            "matches": config.matches,
            "seed": config.seed,
            "seating": config.seating,
            "bootstrap": bootstrap,
            "rating_anchor": labels[anchor],
        },
        "versions": _versions(config),
        "seeds": {
            "root": config.seed,
            "deals": [deal_seed(config.seed, m) for m in range(config.matches)],
            "derivation": "numpy SeedSequence(root, spawn_key=(0, match)) for deals, "
            "(1, table, match, arrangement, seat) for agents, (2,) for the bootstrap",
        },
        "games": game_summary(rows),
        "pairwise": pairwise(rows, labels, config.players),
        "ratings": rating_table(
            rows, labels, config.matches, anchor, bootstrap, rng, with_openskill=config.players > 2
        ),
        "agents": agent_summary(rows, labels),
        "timing": {"latency": latency(rows, labels)},
    }


def notes(summary: dict) -> list[str]:
    """Warnings a reader of the figures needs: perfect records, truncations, illegal actions."""
    out = []
    for r in summary["pairwise"]:
        if r["wins"] == r["games"]:
            out.append(
                f"{r['agent']} won every game against {r['opponent']}: their rating gap is set by the "
                "prior (one virtual draw) and its bootstrap interval cannot show how large it really is"
            )
    games = summary["games"]
    if games["truncated"]:
        out.append(f"{games['truncated']} of {games['games']} games were truncated by the game's cap (draws)")
    if games["illegal_actions"]:
        out.append(f"{games['illegal_actions']} illegal actions: those games were forfeited by the offender")
    for a in summary["agents"]:
        if a.get("redeal_failures"):
            out.append(redeal_note(a["agent"], a["redeal_failures"], a["decisions"]))
    return out


def evaluate(
    config: EvalConfig,
    out: Path,
    workers: int = 1,
    progress: bool = True,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    on_row=None,
) -> dict:
    """Play (resuming from out/games.jsonl), then write pairwise.csv, ratings.csv, summary.json,
    report.md and the PNG plots; returns the summary.

    The evaluation holds the lock of `out` throughout (`training.lock`). A stop once every game is
    played raises `EvalInterrupted` with all of them saved (the figures are written on a rerun)."""
    out = Path(out)
    config = check_agents(config)
    with output_folder(out):
        start = time.perf_counter()
        rows, counts = run_games(config, out, workers, progress, on_row)
        try:
            return _write_figures(config, out, rows, counts, workers, bootstrap, start)
        except KeyboardInterrupt as stop:
            raise EvalInterrupted(out / GAMES_FILE, len(rows), len(rows), signal_of(stop)) from None


def _write_figures(
    config: EvalConfig, out: Path, rows: list[dict], counts: dict, workers: int, bootstrap: int, start: float
) -> dict:
    summary = summarise(config, rows, bootstrap)
    summary["command"] = command_line(config, out)
    summary["notes"] = notes(summary)
    summary["timing"].update(
        {
            "workers": workers,
            "seconds": time.perf_counter() - start,
            **{f"games_{k}": v for k, v in counts.items()},
        }
    )
    report.write_csv(out / "pairwise.csv", summary["pairwise"])
    report.write_csv(out / "ratings.csv", summary["ratings"])
    report.write_json(out / "summary.json", summary)
    report.plot_scores(out / "pairwise_scores.png", summary)
    report.plot_ratings(out / "ratings.png", summary)
    report.write_text(out / "report.md", report.markdown(summary))
    return summary
