"""The run scaffolding every trainer shares: what a run returns, how it stops, its progress bar and
logs, the cadence of its periodic events (snapshots, evaluations, checkpoints) and its evaluation
against the ladder, which keeps the best checkpoint.

A trainer (`training.sb3`, `training.jitted`, `training.rllib`) holds only what differs: how it
learns, how it saves, and which events it hangs on the cadence.
"""

from __future__ import annotations

import contextlib
import csv
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from fowlplay.envs.runtime.files import atomic_write
from fowlplay.envs.runtime.stopping import STOP_SIGNALS, Stop, signal_of
from fowlplay.training import ladder
from fowlplay.training.checkpoint import weights_sha256
from fowlplay.training.config import TrainConfig


# ----- what a run returns, and how it stops ---------------------------------------------------
@dataclass
class RunResult:
    """What a finished run produced."""

    run_dir: Path
    checkpoint: Path
    timesteps: int
    seconds: float
    win_rates: dict[str, float]
    stopped_by_time: bool
    #: The best evaluation (timesteps, scores, score, checkpoint) when the run evaluated, else None.
    best: dict | None = None
    #: Seconds spent compiling before the first decision (trainer: jax), not counted in `seconds`.
    compile_seconds: float | None = None


class RunInterrupted(KeyboardInterrupt):
    """A stop signal during training; `checkpoint` is the checkpoint saved before stopping."""

    def __init__(self, checkpoint: Path, signum: int = signal.SIGINT) -> None:
        super().__init__(f"training interrupted by {signal.Signals(signum).name}; saved {checkpoint}")
        self.checkpoint = checkpoint
        self.signum = signum


class StopSignals:
    """SIGINT and SIGTERM raise `Stop` in the trainer, but never in the middle of writing a file.

    Inside `hold()` a signal waits until the write is done; after the first signal every further one
    is ignored, so pressing Ctrl-C twice cannot cut the checkpoint being saved short. Handlers are
    only installed from the main thread (Python allows no other).
    """

    def __init__(self) -> None:
        self.received: int | None = None
        self._holding = 0
        self._pending = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            if handler is not None:  # None: a handler set outside Python, which cannot be restored
                signal.signal(signum, handler)

    def _handle(self, signum: int, frame: object) -> None:
        if self.received is not None:
            return  # already stopping: the checkpoint being written is finished first
        self.received = signum
        if self._holding:
            self._pending = True
        else:
            raise Stop(signum)

    @contextlib.contextmanager
    def hold(self, stop_after: bool = True) -> Iterator[None]:
        """Defer a stop signal until the body (a file write) is done; then stop if `stop_after`."""
        self._holding += 1
        try:
            yield
        finally:
            self._holding -= 1
        if stop_after and not self._holding and self._pending:
            self._pending = False
            raise Stop(self.received)


def write_config(config: TrainConfig, run_dir: Path) -> None:
    """Save the resolved config as `<run_dir>/config.yaml` (whole or not at all)."""
    import yaml

    text = yaml.safe_dump(config.to_dict(), sort_keys=False).encode()
    atomic_write(run_dir / "config.yaml", lambda handle: handle.write(text))


# ----- the cadence of periodic events -----------------------------------------------------------
@dataclass
class _Event:
    every: int
    due: int  # the decision count at which it next falls due
    action: Callable[[int], Any]
    catch_up: bool


class Cadence:
    """The run's periodic events (snapshot, evaluation, checkpoint), fired in the order added.

    An event of period N falls due once the run's decisions reach the next multiple of N after the
    count it started from; `fire(timesteps)` calls the action of each event due with the count. A
    learner that passes several multiples at once fires the event once, and it next falls due at
    the multiple after the count reached (`catch_up`); without `catch_up` it falls due one period
    after the last multiple it was due at (the RLlib trainer's way, whose iterations vary in size).
    """

    def __init__(self, timesteps: int) -> None:
        self.start = timesteps
        self._events: list[_Event] = []

    def every(self, period: int | None, action: Callable[[int], Any], catch_up: bool = True) -> None:
        """Call `action(timesteps)` every `period` decisions (never when `period` is 0 or None)."""
        if period:
            self._events.append(_Event(period, (self.start // period + 1) * period, action, catch_up))

    def fire(self, timesteps: int) -> None:
        """Run every event that falls due at `timesteps` decisions."""
        for event in self._events:
            if timesteps < event.due:
                continue
            event.action(timesteps)
            event.due += event.every
            while event.catch_up and event.due <= timesteps:
                event.due += event.every


class Deadline:
    """The wall-time budget of a run (`max_minutes`), counted from `start()`."""

    def __init__(self, max_minutes: float | None) -> None:
        self.max_seconds = None if max_minutes is None else max_minutes * 60.0
        self.started = time.monotonic()

    def start(self) -> None:
        """Start counting now."""
        self.started = time.monotonic()

    def passed(self) -> bool:
        """True once the budget is spent."""
        return self.max_seconds is not None and time.monotonic() - self.started > self.max_seconds


# ----- evaluation against the ladder (the best checkpoint) -------------------------------------
def playing_policy(aec, network: dict[str, Any], weights: dict[str, np.ndarray]):
    """A fresh CPU policy network (`network`: net_arch, activation, head) holding the learner's
    weights as a checkpoint exports them: the learner as evaluation will load it."""
    from fowlplay.training.policy import build_policy, load_policy_state

    agent = aec.possible_agents[0]
    policy = build_policy(aec.observation_space(agent)["observation"], aec.action_space(agent), **network)
    load_policy_state(policy, weights)
    return policy


class Evaluations:
    """Periodic evaluation of the learner against random and the baseline (`training.ladder`),
    which writes `evaluation.csv` and saves the best weights with `save_best(timesteps, weights,
    learning)` (a stop signal waits for both), then hands the scores to `on_scores` (a trainer's log).

    One row per evaluation of a learner's weights at a count of decisions: asked again for the
    weights it scored last at the same count, it returns those scores and writes nothing.
    """

    def __init__(
        self,
        run_dir: Path,
        aec,
        config: TrainConfig,
        signals: StopSignals,
        save_best: Callable[[int, dict[str, np.ndarray], bool], Any],
        on_scores: Callable[[dict[str, float]], Any] | None = None,
    ) -> None:
        self.run_dir, self.aec, self.signals, self.save_best = run_dir, aec, signals, save_best
        self.on_scores = on_scores
        self.every, self.games = config.eval_every, config.eval_games
        self.network = config.network()
        self.best = ladder.BestCheckpoint.of_run(run_dir)
        #: This session's last evaluation: (timesteps, weights hash, scores); None before the first.
        self.last: tuple[int, str, dict[str, float]] | None = None

    def evaluate(self, timesteps: int, weights: dict[str, np.ndarray], learning: bool = True) -> dict:
        """Score `weights` on the ladder, keep them if they are the best so far; the scores."""
        evaluated = (int(timesteps), weights_sha256(weights))
        if self.last is not None and self.last[:2] == evaluated:
            return self.last[2]  # evaluation.csv's newest row scored these weights at this count
        scores = self.scores(weights)
        with self.signals.hold(stop_after=learning):
            if self.best.record(timesteps, scores, self.games):
                self.save_best(timesteps, weights, learning)
        self.last = (*evaluated, scores)
        if self.on_scores is not None:
            self.on_scores(scores)
        return scores

    def scores(self, weights: dict[str, np.ndarray]) -> dict[str, float]:
        """The weights' score against each ladder agent (a trainer may play the games elsewhere)."""
        # Looked up on the module at each call (a test scripts the scores by replacing it there).
        return ladder.ladder_scores(self.aec, playing_policy(self.aec, self.network, weights), self.games)

    def evaluate_last(self, timesteps: int, weights: dict[str, np.ndarray]) -> None:
        """Evaluate the last weights too, so a final better than every earlier one is kept (a learner
        may take one more update after the last in-training evaluation); not when they are the
        weights this session evaluated last, nor when this session evaluated nothing and
        evaluation.csv's newest row is at `timesteps` (a resumed run that took no update: that row
        scored these weights). Learning is over: a stop signal waits for it."""
        if not self.every:
            return
        if self.last is None and _newest_row_at(self.best.path) == timesteps:
            return
        if self.last is not None and self.last[1] == weights_sha256(weights):
            return
        with self.signals.hold(stop_after=False):
            self.evaluate(timesteps, weights, learning=False)

    def picked(self) -> dict | None:
        """The best evaluation with its checkpoint, as the final checkpoint names it; None if none."""
        if self.best.best is not None and (self.run_dir / "best.json").exists():
            return {**self.best.best, "checkpoint": str(self.run_dir / "best")}
        return None


def _newest_row_at(path: Path) -> int | None:
    """The decisions of evaluation.csv's newest row; None without one (or an unreadable file)."""
    from fowlplay.envs.runtime.untrusted import UntrustedFileError, read_bytes

    try:
        text = read_bytes(path, 256 * 2**20).decode("utf-8", errors="replace")
        rows = [line for line in text.splitlines() if line.strip()]
        return int(rows[-1].split(",")[0]) if len(rows) > 1 else None
    except (OSError, UntrustedFileError, ValueError):
        return None


# ----- progress and logs ------------------------------------------------------------------------
def progress(config: TrainConfig, initial: int):
    """The progress bar of a run, in learner decisions (off unless `progress_bar`)."""
    from tqdm import tqdm

    return tqdm(
        total=config.total_timesteps,
        initial=min(initial, config.total_timesteps),
        unit="dec",
        disable=not config.progress_bar,
        dynamic_ncols=True,
    )


def log_name(resumed_at: int | None) -> str:
    """A run's CSV log: a resumed run writes its own next to the first (progress_resumed_<N>.csv)."""
    return "progress.csv" if resumed_at is None else f"progress_resumed_{resumed_at}.csv"


class RunLog:
    """logs/progress.csv (progress_resumed_<N>.csv after a resume) and TensorBoard event files
    (`summary_writer(folder)` makes one, when given), a row per update; TensorBoard's scalars are
    named `<prefix>/<column>`."""

    def __init__(
        self,
        run_dir: Path,
        resumed_at: int | None,
        columns: list[str],
        prefix: str,
        summary_writer: Callable[[str], Any] | None = None,
    ) -> None:
        logs = run_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        self._file = open(logs / log_name(resumed_at), "w", newline="")  # noqa: SIM115 - closed in close()
        self._csv = csv.DictWriter(self._file, fieldnames=columns)
        self._csv.writeheader()
        self._prefix = prefix
        self._tb = None if summary_writer is None else summary_writer(str(logs))
        self.iteration = 0

    def write(self, timesteps: int, seconds: float, rate: float, values: dict[str, Any]) -> None:
        """One row: the decisions so far, the update's number, the seconds since the start, the
        decisions per second of this update, then the trainer's `values`."""
        self.iteration += 1
        row = {
            "timesteps": timesteps,
            "iteration": self.iteration,
            "seconds": round(seconds, 2),
            "decisions_per_s": round(rate, 1),
            **values,
        }
        self._csv.writerow(row)
        self._file.flush()
        if self._tb is not None:
            for key, value in row.items():
                if key not in ("timesteps", "iteration") and value != "":
                    self._tb.add_scalar(f"{self._prefix}/{key}", value, timesteps)

    def close(self) -> None:
        """Flush and close the files."""
        self._file.close()
        if self._tb is not None:
            self._tb.close()


# ----- the loop of a trainer that learns one update at a time ----------------------------------
def drive(
    config: TrainConfig,
    timesteps: int,
    update: Callable[[], tuple[int, dict[str, Any]]],
    cadence: Cadence,
    log: RunLog,
    signals: StopSignals,
    on_stop: Callable[[KeyboardInterrupt, int], Path],
) -> tuple[int, float, bool]:
    """Learn from `timesteps` up to `total_timesteps` decisions, one `update()` at a time.

    `update()` learns once and returns the decisions it took and its row of logs/progress.csv (the
    values after the first columns). After each update the row is written, the cadence's events
    that fall due fire, and the wall-time budget is checked. A stop (Ctrl-C, SIGTERM) calls
    `on_stop(stop, timesteps)` for the checkpoint to keep and raises `RunInterrupted` naming it.
    Returns (timesteps, seconds, whether `max_minutes` ended the run). The SB3 trainers learn
    inside SB3's own loop and fire the same cadence from its callback instead.
    """
    bar = progress(config, timesteps)
    began, deadline = time.monotonic(), Deadline(config.max_minutes)
    out_of_time = False
    try:
        while timesteps < config.total_timesteps:
            tick = time.monotonic()
            steps, values = update()
            timesteps += steps
            bar.update(steps)
            rate = steps / (time.monotonic() - tick)
            with signals.hold():
                log.write(timesteps, time.monotonic() - began, rate, values)
            cadence.fire(timesteps)
            if deadline.passed():
                out_of_time = True
                break
    except KeyboardInterrupt as stop:
        raise RunInterrupted(on_stop(stop, timesteps), signal_of(stop)) from None
    finally:
        bar.close()
        log.close()
    return timesteps, time.monotonic() - began, out_of_time
