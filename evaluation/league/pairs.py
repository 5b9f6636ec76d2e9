"""The league's second stage: every pair of agents plays its own duplicate evaluation."""

from __future__ import annotations

import re
from pathlib import Path

from fowlplay.evaluation.agents import AgentSpec, parse_spec
from fowlplay.evaluation.league.config import LeagueConfig
from fowlplay.evaluation.league.training import label_of, run_dir
from fowlplay.evaluation.matches import EvalConfig, run_games


def folder_name(label: str) -> str:
    """`label` as a folder name: anything but letters, digits, `_`, `.` and `-` becomes `-`."""
    return re.sub(r"[^A-Za-z0-9_.-]", "-", label)


def pair_dir(out: Path, a: str, b: str) -> Path:
    """Where the evaluation of one pair of agents lives."""
    return out / "eval" / f"{folder_name(a)}__{folder_name(b)}"


def checkpoint_spec(out: Path, algorithm: str, seed: int) -> AgentSpec:
    """The agent of a trained run: its run directory's checkpoint, sampling from the policy."""
    return parse_spec(f"{label_of(algorithm, seed)}=ckpt:{run_dir(out, algorithm, seed)}")


def evaluate_pair(
    config: LeagueConfig, a: AgentSpec, b: AgentSpec, out: Path, workers: int, progress: bool
) -> tuple[list[dict], dict]:
    """Play (or resume) the duplicate evaluation of one pair; its rows and counts."""
    eval_config = EvalConfig(
        game=config.game, agents=(a, b), matches=config.matches, players=config.players, seed=config.eval_seed
    )
    return run_games(eval_config, pair_dir(out, a.label, b.label), workers, progress)
