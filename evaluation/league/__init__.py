"""`fowlplay-league`: train algorithms with several seeds, rate every checkpoint against the ladder.

    fowlplay-league --game chicken_v1 --config configs/league/chicken_v1.yaml --out runs/league-chicken

Four stages, each resumable (run the same command again and finished work is skipped):

1. **Training.** Every algorithm x seed of the config is trained by `fowlplay-train` in a
   subprocess, to a budget in learner *decisions*, into `<out>/train/<algorithm>/seed<S>`. The
   config's `max_minutes` is a safety net only: a run it stops is marked *cut short* in every
   output. A run that fails (an unknown trainer, a config mistake) is reported as an error of that
   entry; the others go on. `<out>/train/<algorithm>/seed<S>.json` records each run's outcome.
   `--train-workers N` trains N runs side by side (and then estimates N exploitabilities), each a
   process of one thread, so a machine of N cores trains on all of them; the results are the same.
2. **Evaluation.** Every pair of agents (the ladder of `evaluation.ladder` and every trained
   checkpoint) plays its own duplicate evaluation in `<out>/eval/<a>__<b>` (the `fowlplay-eval`
   harness: `games.jsonl` with fingerprints, resumed like `fowlplay-eval`). All pairs share the root
   seed and match count, so match m is the same deal everywhere. A game's result depends only on
   the agents (a checkpoint by its weights' hash), the seeds and the package version: the
   evaluation of the same checkpoints is identical on any machine. Training is not (floating-point
   order differs between CPUs), which is why every training figure is a mean over seeds.
3. **Exploitability** (optional, `exploit:` in the config): `fowlplay-exploit` per checkpoint, once per
   best-response seed (`seeds`, default 1), the strongest kept; each is the strongest of a learned
   best response and the game's trivial probes, and the leaderboard names which one it was.
4. **Leaderboard.** One Bradley–Terry fit over every game, Elo anchored at random = 0, 95% intervals
   from resampling deals; `leaderboard.md`, `leaderboard.csv` (one row per rated agent),
   `algorithms.csv` (means over seeds with their spread), `league.json`, `ratings.png` and, when the
   run directories hold `evaluation.csv` (the trainers' periodic scores), `learning_curves.png`.

Exit status: 0 when every entry finished, 1 when some entry failed (the leaderboard is still
written from the rest), 2 for a mistake in the command line or the config, 130 after Ctrl-C and
143 after SIGTERM (a training run it was waiting on saves a checkpoint first).

The package holds one module per stage: `config` (the YAML's schema, its parser and the budget a
folder was trained to), `training`, `pairs` (evaluation), `exploitability`, `outputs` (the
leaderboard's files and plots) and `cli` (arguments, and a line and an exit status per ending);
this module runs them in order (`run_league`) and sums up what they found (`summarise`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from pathlib import Path

import numpy as np
from fowlplay import envs
from fowlplay.evaluation.agents import AgentSpec, AgentSpecError, parse_spec
from fowlplay.evaluation.ladder import ANCHOR, LADDER_VERSION, elo_ratings, ladder_specs
from fowlplay.evaluation.league import cli
from fowlplay.evaluation.league.config import (
    BUDGET_FILE,
    PROG,
    Algorithm,
    LeagueConfig,
    LeagueConfigError,
    LeagueFailedError,
    check_budget,
    load_config,
    override_budget,
    parse_config,
)
from fowlplay.evaluation.league.exploitability import BR_NAME, exploit_one, with_rungs
from fowlplay.evaluation.league.outputs import markdown, write_outputs
from fowlplay.evaluation.league.pairs import checkpoint_spec, evaluate_pair
from fowlplay.evaluation.league.training import (
    label_of,
    one_line_at_a_time,
    run_jobs,
    run_training,
    train_command,
    train_one,
)
from fowlplay.evaluation.matches import EvalConfig, ResumeError
from fowlplay.evaluation.stats import pairwise, redeal_failures

__all__ = [
    "BUDGET_FILE",
    "PROG",
    "Algorithm",
    "LeagueConfig",
    "LeagueConfigError",
    "LeagueFailedError",
    "load_config",
    "main",
    "markdown",
    "override_budget",
    "parse_config",
    "run_jobs",
    "run_league",
    "run_training",
    "summarise",
    "train_command",
    "train_one",
]


# ----- the whole league ---------------------------------------------------------------------------
# `run_league` reads `run_training` and `ladder_specs` from this module when it runs, and `main`
# reads `run_league`: tests replace them here.
def run_league(
    config: LeagueConfig,
    out: Path,
    workers: int = 1,
    progress: bool = False,
    bootstrap: int | None = None,
    log=print,
    command: str | None = None,
    rungs: list[str] | None = None,
    algorithms: list[str] | None = None,
    decisions: int | None = None,
    seeds: list[int] | None = None,
    matches: int | None = None,
    exploit: tuple[int, ...] | None = None,
    train_workers: int = 1,
) -> dict:
    """Train, evaluate, rate and write the leaderboard; returns the league summary.

    `rungs` plays only those rungs of the ladder (the anchor among them): a partial league, said so
    in every output; `algorithms` trains and rates only those algorithms of the config; `decisions`,
    `seeds` and `matches` replace the config's budget, said so in every output (a league directory
    holds one training budget: resuming it with other `decisions` is an error; matches may change,
    since match m is the same deal whatever the count). `train_workers` trainings (and then
    exploitability estimates) run side by side, each a subprocess of one thread; what they produce
    does not depend on it.
    """
    out = Path(out)
    if train_workers > 1:
        log = one_line_at_a_time(log)
    written = config
    config = override_budget(config, decisions, seeds, matches, exploit)
    full = ladder_specs(config.game)
    config = _chosen(config, full, rungs, algorithms)
    out.mkdir(parents=True, exist_ok=True)
    check_budget(config, out)
    errors: list[dict] = []
    # --- 1. training
    trainings = _train_all(config, out, log, train_workers, errors)
    # --- 2. evaluation
    ladder = [parse_spec(text) for text in full if rungs is None or text in rungs]
    trained = _playable(config, out, trainings, errors)
    agents = ladder + trained
    rows, scores, failed = _evaluate_all(config, agents, trained, out, workers, progress, log, errors)
    rated = [s for s in agents if s.label not in failed]
    labels = [s.label for s in rated]
    if len(rated) < 2:
        raise LeagueFailedError(
            f"nothing to rate: only {labels or 'no agent'} could play, since no trained checkpoint is left "
            f"(every training or evaluation failed{'; --rungs left one rung' if rungs else ''})",
            errors,
        )
    ratings = {
        r["agent"]: r
        for r in elo_ratings(
            rows,
            labels,
            config.matches,
            config.bootstrap if bootstrap is None else bootstrap,
            config.eval_seed,
        )
    }
    # --- 3. exploitability
    exploit = _exploit_all(config, trained, out, log, train_workers, errors) if config.exploit else {}
    # --- 4. leaderboard
    summary = summarise(config, ladder, trainings, rated, ratings, scores, exploit, errors, out)
    summary["ladder_left_out"] = [text for text in full if text not in summary["ladder"]]
    summary["config_decisions"] = written.decisions
    summary["config_seeds"] = list(written.seeds)
    summary["config_matches"] = written.matches
    summary["exploit"] = dict(config.exploit) if config.exploit else None
    summary["redeal_failures"] = {
        label: {"failures": f, "decisions": d} for label, (f, d) in redeal_failures(rows).items()
    }
    write_outputs(summary, out, command)
    return summary


def _chosen(
    config: LeagueConfig, full: list[str], rungs: list[str] | None, algorithms: list[str] | None
) -> LeagueConfig:
    """The config with only the `--algorithms` chosen, once `--rungs` and they are checked."""
    if rungs is not None:
        unknown = sorted(set(rungs) - set(full))
        if unknown or ANCHOR not in rungs:
            raise LeagueConfigError(
                f"--rungs must name rungs of the ladder {full}, {ANCHOR!r} among them; got {rungs}"
            )
    if algorithms is not None:
        known = [a.name for a in config.algorithms]
        if not algorithms or set(algorithms) - set(known):
            raise LeagueConfigError(
                f"--algorithms must name algorithms of the config {known}; got {algorithms}"
            )
        config = dataclasses.replace(
            config, algorithms=tuple(a for a in config.algorithms if a.name in algorithms)
        )
    return config


def _train_all(config: LeagueConfig, out: Path, log, train_workers: int, errors: list[dict]) -> list[dict]:
    """Every algorithm x seed trained (or found trained); each failure added to `errors`."""
    runs = [(algorithm, seed) for algorithm in config.algorithms for seed in config.seeds]
    trainings = run_jobs(
        [
            functools.partial(
                train_one, config, algorithm, seed, out, log, config.trust_checkpoint, run=run_training
            )
            for algorithm, seed in runs
        ],
        train_workers,
    )
    for (algorithm, seed), record in zip(runs, trainings, strict=True):
        if record["status"] == "error":
            errors.append(
                {"entry": label_of(algorithm.name, seed), "stage": "training", "message": record["message"]}
            )
    return trainings


def _playable(config: LeagueConfig, out: Path, trainings: list[dict], errors: list[dict]) -> list[AgentSpec]:
    """The trained checkpoints this version can play; each that it cannot added to `errors`."""
    trained = []
    for record in trainings:
        if record["status"] == "error":
            continue
        spec = checkpoint_spec(out, record["algorithm"], record["seed"])
        try:  # a checkpoint this version cannot play is that entry's error
            EvalConfig(config.game, (spec,), 1, config.players).resolve_agents()
        except (AgentSpecError, ValueError) as exc:
            errors.append({"entry": spec.label, "stage": "evaluation", "message": str(exc)})
            continue
        trained.append(spec)
    return trained


def _evaluate_all(
    config: LeagueConfig,
    agents: list[AgentSpec],
    trained: list[AgentSpec],
    out: Path,
    workers: int,
    progress: bool,
    log,
    errors: list[dict],
) -> tuple[list[dict], dict[tuple[str, str], dict], set[str]]:
    """Every pair of `agents` evaluated: the games' rows, each pair's scores, and the agents that
    could not play (a trained one whose folder cannot be resumed), each added to `errors`."""
    pairs = [(a, b) for i, a in enumerate(agents) for b in agents[i + 1 :]]
    rows: list[dict] = []
    scores: dict[tuple[str, str], dict] = {}
    failed: set[str] = set()
    for k, (a, b) in enumerate(pairs, start=1):
        if a.label in failed or b.label in failed:
            continue
        try:
            pair_rows, counts = evaluate_pair(config, a, b, out, workers, progress)
        except ResumeError as exc:
            culprit = b.label if b in trained else a.label
            failed.add(culprit)
            errors.append({"entry": culprit, "stage": "evaluation", "message": str(exc)})
            continue
        log(
            f"{PROG}: [{k}/{len(pairs)}] {a.label} vs {b.label}: {counts['played']} played, {counts['resumed']} resumed"
        )
        rows += pair_rows
        for record in pairwise(pair_rows, [a.label, b.label], config.players):
            scores[(record["agent"], record["opponent"])] = record
    return rows, scores, failed


def _exploit_all(
    config: LeagueConfig, trained: list[AgentSpec], out: Path, log, train_workers: int, errors: list[dict]
) -> dict[str, dict]:
    """Every trained checkpoint's exploitability by label; each failure added to `errors`."""
    exploit = {}
    estimates = run_jobs(
        [functools.partial(exploit_one, config, spec, out, log, run=run_training) for spec in trained],
        train_workers,
    )
    for spec, estimate in zip(trained, estimates, strict=True):
        exploit[spec.label] = estimate
        if estimate["status"] == "error":
            errors.append(
                {"entry": spec.label, "stage": "exploit", "message": exploit[spec.label]["message"]}
            )
    return exploit


def _score(scores: dict, a: str, b: str) -> dict:
    record = scores.get((a, b))
    if record is None:
        return {"score": math.nan, "score_lo": math.nan, "score_hi": math.nan}
    return {k: record[k] for k in ("score", "score_lo", "score_hi")}


def _strongest_rung(entry: dict, rungs: list[str]) -> dict:
    """`rung`, `rung_lo`, `rung_hi`, `rung_name`: the ladder rung that scores best against a trained
    checkpoint, and that score (one minus the checkpoint's, interval mirrored); {} if none played it.

    A best response scores at least what any fixed agent scores, so in a two-player game this is a
    lower bound on exploitability beside the exploit estimate, and a check of it: a best response
    that scores below a rung was too weak to say much."""
    played = [rung for rung in rungs if math.isfinite(entry.get(f"vs_{rung}", math.nan))]
    if not played:
        return {}
    rung = min(played, key=lambda r: entry[f"vs_{r}"])  # where the checkpoint scores least
    score, lo, hi = (entry[f"vs_{rung}{end}"] for end in ("", "_lo", "_hi"))
    return {"rung": 1.0 - score, "rung_lo": 1.0 - hi, "rung_hi": 1.0 - lo, "rung_name": rung}


def _spread(values: list[float]) -> dict:
    x = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if x.size == 0:
        return {"mean": math.nan, "sd": math.nan, "min": math.nan, "max": math.nan, "n": 0}
    sd = float(x.std(ddof=1)) if x.size > 1 else math.nan
    return {"mean": float(x.mean()), "sd": sd, "min": float(x.min()), "max": float(x.max()), "n": int(x.size)}


def summarise(config, ladder, trainings, rated, ratings, scores, exploit, errors, out) -> dict:
    """Every figure of the league: per agent, per algorithm (means over seeds), errors."""
    ladder_labels = [s.label for s in ladder]
    opponents = [label for label in ladder_labels]
    by_label = {label_of(t["algorithm"], t["seed"]): t for t in trainings}
    entries = []
    for spec in rated:
        training = by_label.get(spec.label)
        entry = {
            "agent": spec.label,
            "kind": "trained" if training else "ladder",
            "algorithm": training["algorithm"] if training else "",
            "trainer": training["trainer"] if training else "",
            "seed": training["seed"] if training else "",
            **{k: ratings[spec.label][k] for k in ("elo", "elo_lo", "elo_hi", "games")},
        }
        for opponent in opponents:
            if opponent == spec.label:
                continue
            s = _score(scores, spec.label, opponent)
            entry[f"vs_{opponent}"], entry[f"vs_{opponent}_lo"], entry[f"vs_{opponent}_hi"] = (
                s["score"],
                s["score_lo"],
                s["score_hi"],
            )
        if training:
            entry["decisions"] = training["timesteps"]
            entry["cut_short"] = training["status"] == "cut_short"
            if spec.label in exploit and exploit[spec.label]["status"] == "done":
                ex = exploit[spec.label]
                entry.update(exploit=ex["score"], exploit_lo=ex["score_lo"], exploit_hi=ex["score_hi"])
                entry["exploit_best"] = ex.get("best", BR_NAME)
                entry["exploit_by_seed"] = ex["by_seed"]
            entry.update(_strongest_rung(entry, opponents))
            entry.update(with_rungs(entry, config.players))
        entries.append(entry)
    algorithms = []
    for algorithm in config.algorithms:
        mine = [e for e in entries if e["algorithm"] == algorithm.name]
        record = {
            "algorithm": algorithm.name,
            "trainer": algorithm.trainer,
            "seeds_rated": len(mine),
            "seeds": len(config.seeds),
            "cut_short": sum(bool(e.get("cut_short")) for e in mine),
        }
        for key in ["elo", *[f"vs_{o}" for o in opponents], "exploit", "rung"]:
            spread = _spread([e.get(key) for e in mine])
            for stat, value in spread.items():
                if stat != "n":
                    record[f"{key}_{stat}"] = value
        algorithms.append(record)
    return {
        "game": config.game,
        "players": config.players,
        "ladder_version": LADDER_VERSION,
        "ladder": ladder_labels,
        "anchor": ANCHOR,
        "decisions": config.decisions,
        "max_minutes": config.max_minutes,
        "seeds": list(config.seeds),
        "matches": config.matches,
        "eval_seed": config.eval_seed,
        "train_config": config.train_config,
        "entries": sorted(entries, key=lambda e: -e["elo"]),
        "algorithms": algorithms,
        "trainings": trainings,
        "errors": errors,
        "versions": {"fowlplay": envs.__version__},
    }


# ----- command line -------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    """Run the league described on the command line (`fowlplay-league`)."""
    return cli.run_command(argv, run_league)
