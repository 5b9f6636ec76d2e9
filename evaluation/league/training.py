"""The league's first stage: every algorithm x seed trained by `fowlplay-train` in a subprocess,
several side by side with `--train-workers`, each stopped cleanly on Ctrl-C or SIGTERM."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fowlplay.envs.runtime.stopping import further_stops_ignored, signal_of
from fowlplay.evaluation import report
from fowlplay.evaluation.league.config import PROG, Algorithm, LeagueConfig, read_record


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


def log_tail(log: Path, lines: int = 3) -> str:
    """The last `lines` non-blank lines of a run's log joined by ` | ` ('' when it cannot be read)."""
    try:
        text = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return " | ".join(text[-lines:])


def _final_timesteps(target: Path) -> int | None:
    timesteps = read_record(target / "final.json").get("timesteps")
    return timesteps if isinstance(timesteps, int) and not isinstance(timesteps, bool) else None


def train_one(
    config: LeagueConfig,
    algorithm: Algorithm,
    seed: int,
    out: Path,
    log=print,
    trust_checkpoint: bool = False,
    run=run_training,
) -> dict:
    """Train one algorithm x seed unless already done; its record (status done, cut_short or error).

    `run` runs the fowlplay-train command (`run_training`; the league passes its own, which tests
    replace)."""
    target = run_dir(out, algorithm.name, seed)
    record_path = target.parent / f"seed{seed}.json"
    if record_path.exists():
        record = read_record(record_path)
        if record.get("status") in ("done", "cut_short") and _final_timesteps(target) is not None:
            return record
    target.parent.mkdir(parents=True, exist_ok=True)
    command = train_command(config, algorithm, seed, out, trust_checkpoint)
    log(f"{PROG}: training {label_of(algorithm.name, seed)}: {shlex.join(command[1:])}")
    timeout = None if config.max_minutes is None else config.max_minutes * 120 + 300
    log_path = target.parent / f"seed{seed}.log"
    status = run(command, log_path, timeout)
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
        why = log_tail(log_path) or f"exit status {status}"
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
