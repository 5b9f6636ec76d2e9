"""What runs alongside `model.learn`: refreshing the opponent pool, snapshots, periodic
checkpoints, periodic evaluations (the best checkpoint), per-opponent win rates and the wall-time
budget. The same callback serves every trainer (MaskablePPO and SB3's DQN)."""

from __future__ import annotations

import contextlib
import re
import time
import warnings
import zipfile
from collections import defaultdict, deque
from collections.abc import Callable
from pathlib import Path

import numpy as np
from fowlplay.envs.runtime.files import atomic_write
from fowlplay.envs.runtime.untrusted import inspect_npz, open_regular, read_npz
from fowlplay.training import manifest
from fowlplay.training.checkpoint import MAX_PARAMETERS, CheckpointWarning
from fowlplay.training.policy import playing_state
from stable_baselines3.common.callbacks import BaseCallback

#: Outcome of an episode as the number averaged into a win rate.
_WIN = {"win": 1.0, "draw": 0.0, "loss": 0.0}
#: A snapshot's file name; temporary files of an interrupted save (step_N.tmp.npz, .npz.tmp) are not.
_SNAPSHOT = re.compile(r"^step_(\d+)\.npz$")


def save_snapshot(folder: Path, timesteps: int, state: dict[str, np.ndarray]) -> str:
    """Write learner weights to `<folder>/step_<N>.npz` (whole or not at all); return its name."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f"step_{timesteps}"
    atomic_write(folder / f"{name}.npz", lambda handle: np.savez(handle, **state))
    manifest.record(folder.parent, [folder / f"{name}.npz"])  # the run's record of what it wrote
    return name


def load_snapshots(
    folder: Path,
    window: int,
    shapes: dict[str, tuple] | None = None,
    verify: Callable[[Path], str | None] | None = None,
) -> list[tuple[str, dict[str, np.ndarray]]]:
    """The newest `window` readable snapshots of a run directory, oldest first.

    Temporary files are ignored; a snapshot that cannot be read (or, given the learner's `shapes`,
    does not fit its network, which its `.npz` headers tell before any array is read), or one that
    `verify(path)` has a problem with (the run's record says it did not write it), is skipped with
    a `CheckpointWarning`.
    """
    found = []
    if folder.is_dir():
        for path in folder.iterdir():
            match = _SNAPSHOT.match(path.name)
            if match:
                found.append((int(match.group(1)), path))
    out = []
    for _, path in sorted(found, reverse=True):
        if len(out) == window:
            break
        limit = 8 * MAX_PARAMETERS + 2**20
        try:
            with open_regular(path, limit) as handle:
                if not zipfile.is_zipfile(handle):
                    raise ValueError("not a NumPy .npz archive")
            headers = inspect_npz(path, max_elements=MAX_PARAMETERS, max_file=limit)
            fits = shapes is None or {h.name: h.shape for h in headers} == shapes
            state = read_npz(path, headers, max_file=limit) if fits else None
        except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as exc:
            warnings.warn(f"snapshot {path} is corrupt ({exc}); skipped", CheckpointWarning, stacklevel=2)
            continue
        if state is None:
            warnings.warn(
                f"snapshot {path} does not fit the learner's network; skipped",
                CheckpointWarning,
                stacklevel=2,
            )
            continue
        why = verify(path) if verify is not None else None
        if why is not None:
            warnings.warn(f"snapshot {path}: {why}; skipped", CheckpointWarning, stacklevel=2)
            continue
        out.append((path.stem, state))
    return out[::-1]


class SelfPlayCallback(BaseCallback):
    """Keeps the opponent pool current and the run directory saved while PPO learns."""

    def __init__(
        self,
        run_dir: Path,
        snapshot_every: int,
        checkpoint_every: int,
        win_rate_window: int,
        save_periodic: Callable[[int], Path],
        max_minutes: float | None = None,
        initial_snapshots: list[tuple[str, dict[str, np.ndarray]]] | None = None,
        hold: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext,
        latest_every: int = 0,
        on_snapshot: Callable[[str, dict[str, np.ndarray], int], None] | None = None,
        eval_every: int = 0,
        evaluate: Callable[[int], None] | None = None,
    ) -> None:
        super().__init__()
        #: Timesteps between refreshes of the `latest` opponent (0: every rollout, as PPO's are long).
        self.latest_every = latest_every
        self._refreshed: int | None = None
        #: Called with (name, weights, timesteps) for each snapshot added to the pool (the PSRO meta-game).
        self.on_snapshot = on_snapshot
        #: Called with the timesteps every `eval_every` of them (the best checkpoint's evaluation).
        self.eval_every = eval_every
        self.evaluate = evaluate
        #: Wraps every file write, so a stop signal waits for it (`train.StopSignals.hold`).
        self.hold = hold
        self.snapshot_dir = run_dir / "snapshots"
        self.snapshot_every = snapshot_every
        self.checkpoint_every = checkpoint_every
        self.save_periodic = save_periodic
        self.max_seconds = None if max_minutes is None else max_minutes * 60.0
        self.initial_snapshots = initial_snapshots or []
        self.outcomes: dict[str, deque] = defaultdict(lambda: deque(maxlen=win_rate_window))
        self.games: dict[str, int] = defaultdict(int)
        self.snapshots: list[str] = []
        self.out_of_time = False

    def _on_training_start(self) -> None:
        self._started = time.monotonic()
        self._last_step = self.num_timesteps
        for name, state in self.initial_snapshots:
            self.training_env.env_method("add_snapshot", name, state)
            self.snapshots.append(name)
            if self.on_snapshot is not None:
                self.on_snapshot(name, state, self.num_timesteps)

    def _on_rollout_start(self) -> None:
        # The `latest` opponent plays the learner as it is now, for the whole rollout (an
        # off-policy learner's rollouts are a few steps, so its refreshes are spaced out).
        now = self.num_timesteps
        if self._refreshed is None or now - self._refreshed >= self.latest_every:
            self._refreshed = now
            self.training_env.env_method("set_latest", playing_state(self.model))

    def _on_step(self) -> bool:
        for info in self.locals["infos"]:
            if "outcome" in info:
                self.outcomes[info["opponent"]].append(_WIN[info["outcome"]])
                self.games[info["opponent"]] += 1
        now, before = self.num_timesteps, self._last_step
        self._last_step = now
        if now // self.snapshot_every > before // self.snapshot_every:
            state = playing_state(self.model)
            with self.hold():
                name = save_snapshot(self.snapshot_dir, now, state)
            self.training_env.env_method("add_snapshot", name, state)
            self.snapshots.append(name)
            if self.on_snapshot is not None:
                self.on_snapshot(name, state, now)
        if self.checkpoint_every and now // self.checkpoint_every > before // self.checkpoint_every:
            self.save_periodic(now)
        if self.eval_every and self.evaluate and now // self.eval_every > before // self.eval_every:
            self.evaluate(now)
        if self.max_seconds is not None and time.monotonic() - self._started > self.max_seconds:
            self.out_of_time = True
            return False
        return True

    def _on_rollout_end(self) -> None:
        for kind, outcomes in sorted(self.outcomes.items()):
            self.logger.record(f"selfplay/win_rate_{kind}", float(np.mean(outcomes)))
            self.logger.record(f"selfplay/games_{kind}", self.games[kind])
        self.logger.record("selfplay/snapshots", len(self.snapshots))

    def win_rates(self) -> dict[str, float]:
        """Recent win rate of the learner against each opponent kind."""
        return {kind: float(np.mean(o)) for kind, o in sorted(self.outcomes.items()) if o}
