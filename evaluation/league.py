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
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import importlib.util
import json
import math
import os
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from fowlplay import envs
from fowlplay.envs.runtime.stopping import (
    exit_status,
    further_stops_ignored,
    ignore_further_stops,
    signal_of,
    sigterm_stops,
    stopped,
)
from fowlplay.evaluation import report
from fowlplay.evaluation.agents import AgentSpec, AgentSpecError, parse_spec
from fowlplay.evaluation.ladder import ANCHOR, LADDER_VERSION, elo_ratings, ladder_specs
from fowlplay.evaluation.matches import EvalConfig, ResumeError, run_games
from fowlplay.evaluation.stats import pairwise, redeal_failures, redeal_note

PROG = "fowlplay-league"
#: Algorithm names become labels and folder names.
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
#: Keys of a league config; anything else is a mistake.
TOP_KEYS = {
    "game",
    "players",
    "train_config",
    "decisions",
    "max_minutes",
    "seeds",
    "algorithms",
    "evaluation",
    "exploit",
}
EVAL_KEYS = {"matches", "seed", "bootstrap"}
EXPLOIT_KEYS = {"total_timesteps", "matches", "seeds"}
ALGORITHM_KEYS = {"name", "trainer", "overrides"}


class LeagueConfigError(ValueError):
    """A league config that cannot be run as written."""


class LeagueFailedError(RuntimeError):
    """A league with nothing left to rate; `errors` are the entries' errors that led there."""

    def __init__(self, message: str, errors: list[dict]) -> None:
        super().__init__(message)
        self.errors = errors


@dataclass(frozen=True)
class Algorithm:
    """One entry of the config: a name, the `trainer:` of `fowlplay-train`, and config overrides."""

    name: str
    trainer: str = "ppo"
    overrides: dict = field(default_factory=dict)


@dataclass(frozen=True)
class LeagueConfig:
    """What a league trains and how it evaluates (see configs/league/<game>.yaml)."""

    game: str
    players: int
    train_config: str
    decisions: int
    seeds: tuple[int, ...]
    algorithms: tuple[Algorithm, ...]
    max_minutes: float | None = None
    matches: int = 50
    eval_seed: int = 0
    bootstrap: int = 1000
    exploit: dict | None = None
    #: Resume trainings and best responses from files their run's record does not vouch for
    #: (`fowlplay-train --trust-checkpoint`); set by `--trust-checkpoint`, never by the YAML.
    trust_checkpoint: bool = False


def _is_count(value) -> bool:
    """Whether `value` is an int >= 1 (a bool is not)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _require(data: dict, key: str, kind, where: str):
    if key not in data:
        raise LeagueConfigError(f"{where}: missing key {key!r}")
    value = data[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise LeagueConfigError(f"{where}: {key} must be {getattr(kind, '__name__', kind)}; got {value!r}")
    return value


def _unknown(data: dict, allowed: set, where: str) -> None:
    extra = sorted(set(data) - allowed)
    if extra:
        raise LeagueConfigError(f"{where}: unknown keys {extra}; allowed: {sorted(allowed)}")


def parse_config(data: dict, game: str | None = None, where: str = "league config") -> LeagueConfig:
    """A validated LeagueConfig from the YAML's mapping; `game` (the command line's) must match it."""
    if not isinstance(data, dict):
        raise LeagueConfigError(f"{where}: expected a mapping of keys, got {type(data).__name__}")
    _unknown(data, TOP_KEYS, where)
    config_game = _require(data, "game", str, where)
    if config_game not in envs.ENV_NAMES:
        raise LeagueConfigError(f"{where}: unknown game {config_game!r}; games: {list(envs.ENV_NAMES)}")
    if game is not None and game != config_game:
        raise LeagueConfigError(f"{where} is for {config_game}, but --game says {game}")
    players = data.get("players")
    if players is None:
        players = len(envs.make(config_game).possible_agents)
    if not _is_count(players):
        raise LeagueConfigError(f"{where}: players must be an integer >= 1; got {players!r}")
    try:
        envs.make(config_game, num_players=players)
    except ValueError as exc:  # a player count the game refuses, in the game's own words
        raise LeagueConfigError(f"{where}: players: {exc}") from None
    decisions = _require(data, "decisions", int, where)
    if decisions < 1:
        raise LeagueConfigError(f"{where}: decisions must be >= 1; got {decisions}")
    seeds = _require(data, "seeds", list, where)
    if not seeds or not all(isinstance(s, int) and s >= 0 for s in seeds) or len(set(seeds)) != len(seeds):
        raise LeagueConfigError(f"{where}: seeds must be distinct integers >= 0; got {seeds!r}")
    algorithms = []
    for i, entry in enumerate(_require(data, "algorithms", list, where)):
        at = f"{where}: algorithms[{i}]"
        if not isinstance(entry, dict):
            raise LeagueConfigError(f"{at}: expected a mapping with name, trainer, overrides")
        _unknown(entry, ALGORITHM_KEYS, at)
        name = _require(entry, "name", str, at)
        if not NAME.match(name):
            raise LeagueConfigError(f"{at}: name {name!r} must be letters, digits, '_' or '-'")
        overrides = entry.get("overrides") or {}
        if not isinstance(overrides, dict):
            raise LeagueConfigError(f"{at}: overrides must be a mapping of config keys; got {overrides!r}")
        algorithms.append(Algorithm(name, str(entry.get("trainer", "ppo")), dict(overrides)))
    names = [a.name for a in algorithms]
    if not algorithms or len(set(names)) != len(names):
        raise LeagueConfigError(
            f"{where}: algorithms must be a non-empty list of distinct names; got {names}"
        )
    evaluation = data.get("evaluation") or {}
    if not isinstance(evaluation, dict):
        raise LeagueConfigError(
            f"{where}: evaluation must be a mapping of {sorted(EVAL_KEYS)}; got {evaluation!r}"
        )
    _unknown(evaluation, EVAL_KEYS, f"{where}: evaluation")
    for key in ("matches", "bootstrap"):
        if key in evaluation and not _is_count(evaluation[key]):
            raise LeagueConfigError(
                f"{where}: evaluation: {key} must be an integer >= 1; got {evaluation[key]!r}"
            )
    seed = evaluation.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise LeagueConfigError(f"{where}: evaluation: seed must be an integer >= 0; got {seed!r}")
    exploit = data.get("exploit")
    if exploit is not None:
        if not isinstance(exploit, dict):
            raise LeagueConfigError(
                f"{where}: exploit must be a mapping of {sorted(EXPLOIT_KEYS)}; got {exploit!r}"
            )
        _unknown(exploit, EXPLOIT_KEYS, f"{where}: exploit")
        for key in ("total_timesteps", "matches"):
            _require(exploit, key, int, f"{where}: exploit")
        exploit = {**exploit, "seeds": exploit.get("seeds", 1)}
        if not _is_count(exploit["seeds"]):
            raise LeagueConfigError(
                f"{where}: exploit: seeds (best responses per checkpoint) must be an integer >= 1; "
                f"got {exploit['seeds']!r}"
            )
    max_minutes = data.get("max_minutes")
    if max_minutes is not None and (not isinstance(max_minutes, (int, float)) or max_minutes <= 0):
        raise LeagueConfigError(f"{where}: max_minutes must be a number > 0 or null; got {max_minutes!r}")
    return LeagueConfig(
        game=config_game,
        players=int(players),
        train_config=_require(data, "train_config", str, where),
        decisions=decisions,
        seeds=tuple(seeds),
        algorithms=tuple(algorithms),
        max_minutes=max_minutes,
        matches=int(evaluation.get("matches", 50)),
        eval_seed=int(evaluation.get("seed", 0)),
        bootstrap=int(evaluation.get("bootstrap", 1000)),
        exploit=dict(exploit) if exploit else None,
    )


def load_config(path: str | Path, game: str | None = None) -> LeagueConfig:
    """Read and validate a league YAML."""
    import yaml
    from fowlplay.envs.runtime.untrusted import UntrustedFileError, read_bytes

    try:
        data = yaml.safe_load(read_bytes(path, 2**20).decode("utf-8"))
    except OSError as exc:
        raise LeagueConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UntrustedFileError as exc:
        raise LeagueConfigError(f"cannot read the league config: {exc}") from None
    except UnicodeDecodeError:
        raise LeagueConfigError(f"{path} is not a YAML text file (it is not UTF-8 text)") from None
    except (yaml.YAMLError, RecursionError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise LeagueConfigError(f"{path} is not valid YAML: {first}") from None
    return parse_config(data, game, where=str(path))


def override_budget(
    config: LeagueConfig,
    decisions: int | None = None,
    seeds: list[int] | None = None,
    matches: int | None = None,
    exploit: tuple[int, ...] | None = None,
) -> LeagueConfig:
    """The config with the command line's budget (`--decisions`, `--seeds`, `--matches`, and
    `--exploit TIMESTEPS MATCHES [SEEDS]`) in place of its own."""
    if decisions is not None and not _is_count(decisions):
        raise LeagueConfigError(f"--decisions must be an integer >= 1; got {decisions!r}")
    if seeds is not None and (
        not seeds or not all(isinstance(s, int) and s >= 0 for s in seeds) or len(set(seeds)) != len(seeds)
    ):
        raise LeagueConfigError(f"--seeds must be distinct integers >= 0; got {seeds!r}")
    if matches is not None and not _is_count(matches):
        raise LeagueConfigError(f"--matches must be an integer >= 1; got {matches!r}")
    if exploit is not None:
        if len(exploit) not in (2, 3) or not all(_is_count(x) for x in exploit):
            raise LeagueConfigError(
                f"--exploit must be two or three integers >= 1, TIMESTEPS MATCHES [SEEDS]; got {exploit!r}"
            )
        responses = exploit[2] if len(exploit) == 3 else 1
        config = dataclasses.replace(
            config, exploit={"total_timesteps": exploit[0], "matches": exploit[1], "seeds": responses}
        )
    return dataclasses.replace(
        config,
        decisions=config.decisions if decisions is None else decisions,
        seeds=config.seeds if seeds is None else tuple(seeds),
        matches=config.matches if matches is None else matches,
    )


BUDGET_FILE = "budget.json"


def _record(path: Path) -> dict:
    """A JSON record of the league's folder, read within bounds; {} when unreadable or not an object."""
    from fowlplay.envs.runtime.untrusted import read_json

    try:
        record = read_json(path)
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def check_budget(config: LeagueConfig, out: Path) -> None:
    """Refuse to resume a league trained to another budget; record the budget of a new one.

    The budget is read from `<out>/budget.json` and from every training record (leagues written
    before budget.json existed have only those), so no checkpoint of one budget is rated beside
    another budget's under a leaderboard that names one.
    """
    found: dict[str, int] = {}
    path = out / BUDGET_FILE
    if path.exists():
        record = _record(path)
        if not _is_count(record.get("decisions")):
            raise LeagueConfigError(
                f"{path} is damaged (no decisions count); delete it to start the league over"
            )
        found[str(path)] = record["decisions"]
    for record_path in sorted((out / "train").glob("*/seed*.json")):
        record = _record(record_path)
        if record.get("status") in ("done", "cut_short") and _is_count(record.get("decisions")):
            found[str(record_path)] = record["decisions"]
    other = {where: n for where, n in found.items() if n != config.decisions}
    if other:
        where, n = next(iter(other.items()))
        raise LeagueConfigError(
            f"{out} holds a league trained to {n:,} decisions per run ({where}), but this run asks for "
            f"{config.decisions:,}; resume it with --decisions {n}, or give a new --out"
        )
    report.write_json(path, {"decisions": config.decisions})


# ----- training -----------------------------------------------------------------------------------
def run_dir(out: Path, algorithm: str, seed: int) -> Path:
    """Where one algorithm x seed trains."""
    return out / "train" / algorithm / f"seed{seed}"


def label_of(algorithm: str, seed: int) -> str:
    """The label of a trained checkpoint in every table."""
    return f"{algorithm}-s{seed}"


def _yaml_text(value) -> str:
    # JSON is YAML: lists and mappings survive `--set KEY=VALUE` unchanged.
    return value if isinstance(value, str) else json.dumps(value)


def train_command(
    config: LeagueConfig, algorithm: Algorithm, seed: int, out: Path, trust_checkpoint: bool = False
) -> list[str]:
    """The fowlplay-train command of one run (a partly trained run directory is resumed, with
    --trust-checkpoint when the league has it)."""
    target = run_dir(out, algorithm.name, seed)
    base = [sys.executable, "-m", "fowlplay.training.cli"]
    budget = ["--total-timesteps", str(config.decisions), "--no-progress"]
    if config.max_minutes is not None:
        budget += ["--max-minutes", str(config.max_minutes)]
    if (target / "config.yaml").exists() and not (target / "final.json").exists():
        trust = ["--trust-checkpoint"] if trust_checkpoint else []
        return [*base, "--resume", str(target), *budget, *trust]
    command = [
        *base,
        "--config",
        config.train_config,
        "--seed",
        str(seed),
        "--out",
        str(target),
        "--overwrite",
    ]
    # ppo is fowlplay-train's default trainer; naming it is left to configs that know the key.
    if algorithm.trainer != "ppo":
        command += ["--set", f"trainer={algorithm.trainer}"]
    for key, value in algorithm.overrides.items():
        command += ["--set", f"{key}={_yaml_text(value)}"]
    return command + budget


#: The subprocesses the league is running now (several with --train-workers), and whether it has
#: begun to stop: a stopping league starts none.
_running: set[subprocess.Popen] = set()
_running_lock = threading.Lock()
_stopping = threading.Event()
#: The exit status a job reports when the league stopped before it started (128 + SIGINT).
NOT_STARTED = 130


def run_training(command: list[str], log: Path, timeout: float | None) -> int:
    """Run one training command, its output into `log`; its exit status (tests replace this).

    Ctrl-C or SIGTERM here is passed on to the run, which saves a checkpoint before it exits; the
    league waits for that and then stops, so the next league run resumes from it. Runs started side
    by side (`run_jobs`) are stopped the same way, all of them, from the main thread.
    """
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with log.open("w") as handle:
        with _running_lock:
            if _stopping.is_set():
                handle.write(f"{PROG}: not started: the league was stopping\n")
                return NOT_STARTED
            process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env)
            _running.add(process)
        try:
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            handle.write(f"\n{PROG}: killed after {timeout:.0f} s\n")
            return -9
        except KeyboardInterrupt as stop:
            with further_stops_ignored():
                if process.poll() is None:
                    process.send_signal(signal_of(stop))  # a terminal's Ctrl-C reached it already
                    process.wait()
            raise
        finally:
            with _running_lock:
                _running.discard(process)


def run_jobs(jobs: list[Callable[[], dict]], workers: int) -> list[dict]:
    """Run `jobs` (each a training or an exploitability estimate, one subprocess at a time), at most
    `workers` at once; their results in the order of `jobs`.

    On Ctrl-C or SIGTERM every running subprocess gets the signal and is waited for (each saves its
    checkpoint), no job not yet started starts, and the stop is raised again: a job it stopped
    records an error, so the next league run takes it up again (a half-trained run with --resume).
    """
    if workers <= 1 or len(jobs) <= 1:
        return [job() for job in jobs]
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=PROG)
    futures = [pool.submit(job) for job in jobs]
    try:
        return [future.result() for future in futures]
    except KeyboardInterrupt as stop:
        with further_stops_ignored():
            for future in futures:
                future.cancel()
            with _running_lock:
                _stopping.set()
                live = [process for process in _running if process.poll() is None]
                for process in live:
                    process.send_signal(signal_of(stop))
            pool.shutdown(wait=True)
        raise
    finally:
        pool.shutdown(wait=True)
        _stopping.clear()


def one_line_at_a_time(log):
    """`log` shared by several threads: each call's line comes out whole (`print` writes a line's
    text and its end apart, so two threads' lines could run into each other)."""
    lock = threading.Lock()

    def locked(*args, **kwargs):
        with lock:
            return log(*args, **kwargs)

    return locked


def _tail(log: Path, lines: int = 3) -> str:
    try:
        text = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return " | ".join(text[-lines:])


def _final_timesteps(target: Path) -> int | None:
    timesteps = _record(target / "final.json").get("timesteps")
    return timesteps if isinstance(timesteps, int) and not isinstance(timesteps, bool) else None


def train_one(
    config: LeagueConfig,
    algorithm: Algorithm,
    seed: int,
    out: Path,
    log=print,
    trust_checkpoint: bool = False,
) -> dict:
    """Train one algorithm x seed unless already done; its record (status done, cut_short or error)."""
    target = run_dir(out, algorithm.name, seed)
    record_path = target.parent / f"seed{seed}.json"
    if record_path.exists():
        record = _record(record_path)
        if record.get("status") in ("done", "cut_short") and _final_timesteps(target) is not None:
            return record
    target.parent.mkdir(parents=True, exist_ok=True)
    command = train_command(config, algorithm, seed, out, trust_checkpoint)
    log(f"{PROG}: training {label_of(algorithm.name, seed)}: {shlex.join(command[1:])}")
    timeout = None if config.max_minutes is None else config.max_minutes * 120 + 300
    log_path = target.parent / f"seed{seed}.log"
    status = run_training(command, log_path, timeout)
    timesteps = _final_timesteps(target)
    record = {
        "algorithm": algorithm.name,
        "trainer": algorithm.trainer,
        "seed": seed,
        "run_dir": str(target),
        "command": shlex.join(["fowlplay-train", *command[3:]]),
        "returncode": status,
        "timesteps": timesteps,
        "decisions": config.decisions,
    }
    if status != 0 or timesteps is None:
        why = _tail(log_path) or f"exit status {status}"
        record.update(status="error", message=f"training failed (exit status {status}): {why}")
    elif timesteps < config.decisions:
        record.update(
            status="cut_short",
            message=f"stopped by max_minutes={config.max_minutes} at {timesteps} of {config.decisions} decisions",
        )
    else:
        record.update(status="done", message="")
    report.write_json(record_path, record)
    if record["status"] != "done":
        log(f"{PROG}: {label_of(algorithm.name, seed)}: {record['message']}")
    return record


# ----- evaluation ---------------------------------------------------------------------------------
def _folder(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "-", label)


def pair_dir(out: Path, a: str, b: str) -> Path:
    """Where the evaluation of one pair of agents lives."""
    return out / "eval" / f"{_folder(a)}__{_folder(b)}"


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


# ----- exploitability -----------------------------------------------------------------------------
#: fowlplay-exploit's name of its learned best response among the candidates (the others are probes).
BR_NAME = "best_response"
#: Said of an exploit.json made before fowlplay-exploit scored the trivial probes.
NO_PROBES = "(no probes: an exploit.json of format 1)"


def exploit_one(config: LeagueConfig, spec: AgentSpec, out: Path, log=print) -> dict:
    """`fowlplay-exploit` for one agent, once per best-response seed (`exploit: seeds`), each unless
    done; the strongest candidate's score, interval and name, every seed's score, or an error.

    Each estimate is the strongest of a best response and the game's trivial probes (fowlplay-exploit
    names it), a lower bound on how exploitable the agent is, and one training run can fail to find
    the weakness another finds, so the leaderboard shows the highest score of the seeds (with that
    run's interval and candidate) and `league.json` keeps them all.
    """
    runs = []
    for seed in range(config.exploit.get("seeds", 1)):
        result = _exploit_seed(config, spec, out, seed, log)
        if result["status"] == "error":
            return result
        runs.append(result)
    best = max(runs, key=lambda run: -math.inf if run["score"] is None else run["score"])
    return {**best, "by_seed": [run["score"] for run in runs]}


def exploit_dir(out: Path, label: str, seed: int) -> Path:
    """Where one best response against `label` lives (seed 0 where a one-seed league puts it)."""
    folder = _folder(label)
    return out / "exploit" / (folder if seed == 0 else f"{folder}-seed{seed}")


def _exploit_seed(config: LeagueConfig, spec: AgentSpec, out: Path, seed: int, log) -> dict:
    target = exploit_dir(out, spec.label, seed)
    result_path = target / "exploit.json"
    if not result_path.exists():
        if importlib.util.find_spec("fowlplay.evaluation.exploit") is None:
            return {"status": "error", "message": "fowlplay-exploit is not in this version of fowlplay"}
        command = [sys.executable, "-m", "fowlplay.evaluation.exploit", "--game", config.game]
        command += ["--agent", spec.text.partition("=")[2] or spec.text, "--out", str(target)]
        command += ["--players", str(config.players)]
        command += ["--total-timesteps", str(config.exploit["total_timesteps"])]
        command += ["--matches", str(config.exploit["matches"])]
        if seed:
            command += ["--seed", str(seed)]
        if config.trust_checkpoint:
            command += ["--trust-checkpoint"]
        log(f"{PROG}: exploitability of {spec.label}" + (f", best-response seed {seed}" if seed else ""))
        # The log sits beside the output folder: fowlplay-exploit refuses a folder holding foreign files.
        target.parent.mkdir(parents=True, exist_ok=True)
        log_path = target.parent / f"{target.name}.log"
        status = run_training(command, log_path, None)
        if status != 0 or not result_path.exists():
            why = _tail(log_path)
            return {"status": "error", "message": f"fowlplay-exploit failed (exit status {status}): {why}"}
    data = _record(result_path)
    made = (data.get("total_timesteps_requested"), data.get("matches"))
    asked = (config.exploit["total_timesteps"], config.exploit["matches"])
    if made != asked and made != (None, None):
        return {
            "status": "error",
            "message": f"{result_path} was made with {made[0]} timesteps and {made[1]} matches, the league "
            f"asks {asked[0]} and {asked[1]}: delete {target} to estimate it again, or keep the league's "
            "exploit budget",
        }
    if data.get("seed", seed) != seed:
        return {
            "status": "error",
            "message": f"{result_path} was made with seed {data['seed']}, where the league keeps the "
            f"best response of seed {seed}: delete {target} to estimate it again",
        }
    lo, hi = data.get("score_lo"), data.get("score_hi")
    if lo is None and isinstance(data.get("ci"), (list, tuple)) and len(data["ci"]) == 2:
        lo, hi = data["ci"]
    # The strongest candidate (the best response or a trivial probe); a record made before the probes
    # (format 1) holds the best response alone, and says so.
    best = data.get("best") if isinstance(data.get("best"), str) else f"{BR_NAME} {NO_PROBES}"
    return {"status": "done", "score": data.get("score"), "score_lo": lo, "score_hi": hi, "best": best}


# ----- the whole league ---------------------------------------------------------------------------
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
    out.mkdir(parents=True, exist_ok=True)
    check_budget(config, out)
    errors: list[dict] = []
    # --- 1. training
    runs = [(algorithm, seed) for algorithm in config.algorithms for seed in config.seeds]
    trainings = run_jobs(
        [
            functools.partial(train_one, config, algorithm, seed, out, log, config.trust_checkpoint)
            for algorithm, seed in runs
        ],
        train_workers,
    )
    for (algorithm, seed), record in zip(runs, trainings, strict=True):
        if record["status"] == "error":
            errors.append(
                {"entry": label_of(algorithm.name, seed), "stage": "training", "message": record["message"]}
            )
    # --- 2. evaluation
    ladder = [parse_spec(text) for text in full if rungs is None or text in rungs]
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
    agents = ladder + trained
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
    exploit = {}
    if config.exploit:
        estimates = run_jobs(
            [functools.partial(exploit_one, config, spec, out, log) for spec in trained], train_workers
        )
        for spec, estimate in zip(trained, estimates, strict=True):
            exploit[spec.label] = estimate
            if estimate["status"] == "error":
                errors.append(
                    {"entry": spec.label, "stage": "exploit", "message": exploit[spec.label]["message"]}
                )
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


# ----- outputs ------------------------------------------------------------------------------------
def _f(x, digits: int = 3) -> str:
    return "–" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{digits}f}"


def _ci(x, lo, hi, digits: int = 3) -> str:
    if x is None or not math.isfinite(x):
        return "–"
    if lo is None or not math.isfinite(lo):
        return _f(x, digits)
    return f"{_f(x, digits)} [{_f(lo, digits)}, {_f(hi, digits)}]"


def _spread_text(record: dict, key: str, digits: int = 3) -> str:
    mean, sd, lo, hi = (record.get(f"{key}_{s}") for s in ("mean", "sd", "min", "max"))
    if mean is None or not math.isfinite(mean):
        return "–"
    if sd is None or not math.isfinite(sd):
        return _f(mean, digits)
    return f"{_f(mean, digits)} ± {_f(sd, digits)} ({_f(lo, digits)}–{_f(hi, digits)})"


def _config_said(summary: dict, key: str) -> str:
    """``, set by `--KEY` (the league config says X)`` when the league ran with another budget."""
    written = summary.get(f"config_{key}")
    if written is None or written == summary[key]:
        return ""
    shown = f"{written:,}" if isinstance(written, int) else str(written)
    return f", set by `--{key}` (the league config says {shown})"


def _exploit_said(summary: dict) -> str:
    budget = summary.get("exploit")
    if not budget:
        return "Exploitability not estimated (no `exploit:` in the config, no `--exploit`)."
    seeds = budget.get("seeds", 1)
    probes = (
        " and every trivial probe of the game (always pass, first legal, ...) in the same matches; the "
        "exploit column is the strongest candidate's score against the checkpoint, with its interval and "
        f"its name (`{BR_NAME}` or `probe:NAME`)"
    )
    if seeds == 1:
        return (
            f"Exploitability: a fresh MaskablePPO best response per checkpoint (`fowlplay-exploit`, "
            f"{budget['total_timesteps']:,} learner decisions, {budget['matches']} duplicate matches, "
            f"one seed){probes}; lower is less exploitable."
        )
    return (
        f"Exploitability: {seeds} fresh MaskablePPO best responses per checkpoint (`fowlplay-exploit`, "
        f"seeds 0-{seeds - 1}, {budget['total_timesteps']:,} learner decisions, {budget['matches']} "
        f"duplicate matches each){probes}, the highest over the seeds (each seed's in parentheses); "
        "lower is less exploitable."
    )


def markdown(summary: dict, command: str) -> str:
    """leaderboard.md."""
    ladder = summary["ladder"]
    lines = [
        f"# League: {summary['game']}, {summary['players']} players",
        "",
        f"Ladder version {summary['ladder_version']}: {', '.join(ladder)}. Bradley–Terry Elo anchored at "
        f"{summary['anchor']} = 0, 95% bootstrap intervals over deals. Training budget "
        f"{summary['decisions']:,} decisions per run{_config_said(summary, 'decisions')}; safety cap "
        f"{summary['max_minutes']} minutes; seeds {summary['seeds']}{_config_said(summary, 'seeds')}; "
        f"{summary['matches']} duplicate matches per pair{_config_said(summary, 'matches')}, evaluation seed "
        f"{summary['eval_seed']}; training config `{summary['train_config']}`. " + _exploit_said(summary),
        "",
        f"```\n{command}\n```",
        *(
            [
                "",
                f"**Partial ladder**: the rungs {', '.join(summary['ladder_left_out'])} were left out of "
                "this run (`--rungs`), so these ratings are not comparable with a full ladder's.",
            ]
            if summary.get("ladder_left_out")
            else []
        ),
        "",
        "## Algorithms (mean ± sd over seeds, min–max in parentheses)",
        "",
        "| algorithm | trainer | seeds rated | Elo | "
        + " | ".join(f"score vs {o}" for o in ladder[:2])
        + " | exploit | strongest rung | cut short |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in summary["algorithms"]:
        lines.append(
            f"| {r['algorithm']} | {r['trainer']} | {r['seeds_rated']} / {r['seeds']} | {_spread_text(r, 'elo', 0)} | "
            + " | ".join(_spread_text(r, f"vs_{o}") for o in ladder[:2])
            + f" | {_spread_text(r, 'exploit')} | {_spread_text(r, 'rung')} | {r['cut_short']} |"
        )
    lines += [
        "",
        "## Every rated agent",
        "",
        "| agent | Elo [95% CI] | "
        + " | ".join(f"vs {o}" for o in ladder)
        + " | decisions | exploit | strongest rung |",
        "|---" * (len(ladder) + 5) + "|",
    ]
    for e in summary["entries"]:
        cells = [
            _ci(e.get(f"vs_{o}"), e.get(f"vs_{o}_lo"), e.get(f"vs_{o}_hi")) if o != e["agent"] else "–"
            for o in ladder
        ]
        decisions = (
            ""
            if e["kind"] == "ladder"
            else f"{e['decisions']:,}" + (" (cut short)" if e["cut_short"] else "")
        )
        exploit = _ci(e.get("exploit"), e.get("exploit_lo"), e.get("exploit_hi")) if "exploit" in e else "–"
        if e.get("exploit_best"):  # which candidate was strongest: the best response or a probe
            exploit += f" {e['exploit_best']}"
        if len(e.get("exploit_by_seed", [])) > 1:  # every seed's strongest score
            exploit += " (" + ", ".join(_f(x) for x in e["exploit_by_seed"]) + ")"
        rung = _ci(e.get("rung"), e.get("rung_lo"), e.get("rung_hi")) + (
            f" {e['rung_name']}" if "rung_name" in e else ""
        )
        lines.append(
            f"| {e['agent']} | {_ci(e['elo'], e['elo_lo'], e['elo_hi'], 0)} | "
            + " | ".join(cells)
            + f" | {decisions} | {exploit} | {rung} |"
        )
    lines += [
        "",
        "The strongest rung is the ladder agent that scores best against a trained checkpoint, with "
        "that score: a best response scores at least as much, so where the exploit figure is lower, "
        "its best response was too weak to bound the checkpoint (with more than two players both are "
        "read on their own scales: a rung's score is pairwise).",
        "",
        "Scores are the row agent's mean outcome against the column agent (1 win, ½ draw) over "
        "duplicate matches, with 95% intervals over deals. Evaluation is reproducible: the same "
        "checkpoints and seeds give the same games on any machine. Training is not bitwise "
        "reproducible across CPUs, so compare algorithms by their means over seeds.",
    ]
    if summary.get("redeal_failures"):
        lines += ["", "## Searches that fell back", ""]
        lines += [
            f"- {redeal_note(label, r['failures'], r['decisions'])}."
            for label, r in summary["redeal_failures"].items()
        ]
    if summary["errors"]:
        lines += ["", "## Entries that failed", ""]
        lines += [f"- **{e['entry']}** ({e['stage']}): {e['message']}" for e in summary["errors"]]
    return "\n".join(lines) + "\n"


def plot_ratings(path: Path, summary: dict) -> None:
    """Elo with 95% intervals per agent, and per algorithm the mean over seeds with its min–max."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = []  # (label, value, low, high, style)
    for e in sorted(summary["entries"], key=lambda e: (e["algorithm"], e["kind"] != "ladder", -e["elo"])):
        if e["kind"] == "ladder":
            rows.append((e["agent"], e["elo"], e["elo_lo"], e["elo_hi"], "ladder"))
    for r in summary["algorithms"]:
        if r["seeds_rated"]:
            rows.append(
                (
                    f"{r['algorithm']} (mean of {r['seeds_rated']})",
                    r["elo_mean"],
                    r["elo_min"],
                    r["elo_max"],
                    "mean",
                )
            )
            for e in summary["entries"]:
                if e["algorithm"] == r["algorithm"]:
                    rows.append((f"  {e['agent']}", e["elo"], e["elo_lo"], e["elo_hi"], "seed"))
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.4 * max(len(rows), 1)))
    colours = {"ladder": "grey", "mean": "C3", "seed": "C0"}
    for y, (_, value, low, high, style) in enumerate(rows):
        lo = value - low if math.isfinite(low) else 0.0
        hi = high - value if math.isfinite(high) else 0.0
        marker = "D" if style == "mean" else "o"
        ax.errorbar([value], [y], xerr=[[lo], [hi]], fmt=marker, color=colours[style], capsize=4)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.invert_yaxis()
    ax.axvline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("Elo (random = 0): agents with 95% CI, algorithm means with min–max over seeds")
    ax.set_title(f"{summary['game']}, ladder v{summary['ladder_version']}")
    fig.tight_layout()
    report._save_figure(fig, path)


def read_curves(summary: dict) -> dict[str, list[dict]]:
    """Per algorithm, each seed's periodic scores from `<run>/evaluation.csv` (absent: none)."""
    curves: dict[str, list[dict]] = {}
    for t in summary["trainings"]:
        path = Path(t["run_dir"]) / "evaluation.csv"
        if t["status"] == "error" or not path.exists():
            continue
        rows = [row for row in _csv_rows(path) if _curve_row(row)]
        if rows:
            curves.setdefault(t["algorithm"], []).append({"seed": t["seed"], "rows": rows})
    return curves


def _curve_row(row: dict) -> bool:
    """Whether a row of evaluation.csv holds what the curves plot (an int and numbers)."""
    try:
        int(row["timesteps"])
        for key in ("score_random", "score_baseline"):
            if row.get(key) not in (None, ""):
                float(row[key])
    except (KeyError, TypeError, ValueError):
        return False
    return True


def _csv_rows(path: Path) -> list[dict]:
    """The rows of a CSV file of a run, read within bounds (none when it is unreadable or no file)."""
    from fowlplay.envs.runtime.untrusted import UntrustedFileError, read_bytes

    try:
        text = read_bytes(path, 256 * 2**20).decode("utf-8", errors="replace")
    except (OSError, UntrustedFileError):
        return []
    return list(csv.DictReader(text.splitlines()))


def plot_curves(path: Path, summary: dict, curves: dict[str, list[dict]]) -> None:
    """Score against random and the baseline over training: each seed thin, the mean over seeds bold."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, opponent in zip(axes, ("random", "baseline")):
        column = f"score_{opponent}"
        for c, (algorithm, runs) in enumerate(sorted(curves.items())):
            series = {}
            for run in runs:
                xs = [int(r["timesteps"]) for r in run["rows"] if r.get(column) not in (None, "")]
                ys = [float(r[column]) for r in run["rows"] if r.get(column) not in (None, "")]
                ax.plot(xs, ys, color=f"C{c}", alpha=0.3, linewidth=0.8)
                for x, y in zip(xs, ys):
                    series.setdefault(x, []).append(y)
            xs = sorted(x for x in series if len(series[x]) == len(runs))
            ax.plot(
                xs,
                [np.mean(series[x]) for x in xs],
                color=f"C{c}",
                linewidth=2,
                label=f"{algorithm} (mean of {len(runs)})",
            )
        ax.set_title(f"vs {opponent}")
        ax.set_xlabel("learner decisions")
        # The trainers' evaluation wins a game only by beating every other seat: an agent equal to
        # its opponents scores 1 / players (1/3 in 3-player Murray), not 1/2.
        ax.axhline(1 / summary["players"], color="grey", linewidth=0.8, linestyle="--")
    axes[0].set_ylabel(f"score (periodic evaluation during training; dashed: parity, 1/{summary['players']})")
    axes[0].legend()
    fig.suptitle(summary["game"])
    fig.tight_layout()
    report._save_figure(fig, path)


def write_outputs(summary: dict, out: Path, command: str | None = None) -> None:
    """leaderboard.md, leaderboard.csv, algorithms.csv, league.json and the plots."""
    command = command or summary.get("command") or f"{PROG} --game {summary['game']} --out {out}"
    summary["command"] = command
    report.write_json(out / "league.json", summary)
    report.write_csv(out / "leaderboard.csv", summary["entries"])
    report.write_csv(out / "algorithms.csv", summary["algorithms"])
    report.write_text(out / "leaderboard.md", markdown(summary, command))
    plot_ratings(out / "ratings.png", summary)
    curves = read_curves(summary)
    if curves:
        plot_curves(out / "learning_curves.png", summary, curves)


# ----- command line -------------------------------------------------------------------------------
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


def main(argv: list[str] | None = None) -> int:
    """Run the league described on the command line."""
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
    command = shlex.join([PROG, "--game", args.game, "--config", str(args.config), "--out", str(args.out)])
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
    with sigterm_stops():
        try:
            with hold_folder(args.out, command):
                summary = _run_league(config, args, command)
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
            f"{r['algorithm']} ({r['seeds_rated']}/{r['seeds']} seeds): Elo {_spread_text(r, 'elo', 0)}; "
            f"vs random {_spread_text(r, 'vs_random')}; vs baseline {_spread_text(r, 'vs_baseline')}"
        )
    for e in summary["errors"]:
        print(f"{PROG}: {e['entry']} ({e['stage']}): {e['message']}", file=sys.stderr)
    print(f"leaderboard: {args.out / 'leaderboard.md'}")
    return 1 if summary["errors"] else 0


def _run_league(config: LeagueConfig, args: argparse.Namespace, command: str) -> dict:
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


if __name__ == "__main__":
    sys.exit(main())
