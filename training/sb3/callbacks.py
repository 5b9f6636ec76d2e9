"""What runs alongside `model.learn`: refreshing the opponent pool, and the run's cadence
(`training.loop.Cadence`: snapshots, periodic checkpoints, periodic evaluations), per-opponent win
rates and the wall-time budget. The same callback serves every SB3 learner (MaskablePPO and the
masked DQN)."""

from __future__ import annotations

import contextlib
from collections import defaultdict, deque
from collections.abc import Callable
from pathlib import Path

import numpy as np
from fowlplay.training.loop import Cadence, Deadline
from fowlplay.training.policy import playing_state
from fowlplay.training.snapshots import save_snapshot
from stable_baselines3.common.callbacks import BaseCallback

#: Outcome of an episode as the number averaged into a win rate.
_WIN = {"win": 1.0, "draw": 0.0, "loss": 0.0}


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
        #: Wraps every file write, so a stop signal waits for it (`loop.StopSignals.hold`).
        self.hold = hold
        self.snapshot_dir = run_dir / "snapshots"
        self.snapshot_every = snapshot_every
        self.checkpoint_every = checkpoint_every
        self.save_periodic = save_periodic
        self.deadline = Deadline(max_minutes)
        self.initial_snapshots = initial_snapshots or []
        self.outcomes: dict[str, deque] = defaultdict(lambda: deque(maxlen=win_rate_window))
        self.games: dict[str, int] = defaultdict(int)
        self.snapshots: list[str] = []
        self.out_of_time = False

    def _on_training_start(self) -> None:
        self.deadline.start()
        self.cadence = Cadence(self.num_timesteps)
        self.cadence.every(self.snapshot_every, self._snapshot)
        self.cadence.every(self.checkpoint_every, self.save_periodic)
        if self.evaluate:
            self.cadence.every(self.eval_every, self.evaluate)
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
        self.cadence.fire(self.num_timesteps)
        if self.deadline.passed():
            self.out_of_time = True
            return False
        return True

    def _snapshot(self, timesteps: int) -> None:
        """Save the learner's weights as a snapshot and add it to every environment's pool."""
        state = playing_state(self.model)
        with self.hold():
            name = save_snapshot(self.snapshot_dir, timesteps, state)
        self.training_env.env_method("add_snapshot", name, state)
        self.snapshots.append(name)
        if self.on_snapshot is not None:
            self.on_snapshot(name, state, timesteps)

    def _on_rollout_end(self) -> None:
        for kind, outcomes in sorted(self.outcomes.items()):
            self.logger.record(f"selfplay/win_rate_{kind}", float(np.mean(outcomes)))
            self.logger.record(f"selfplay/games_{kind}", self.games[kind])
        self.logger.record("selfplay/snapshots", len(self.snapshots))

    def win_rates(self) -> dict[str, float]:
        """Recent win rate of the learner against each opponent kind."""
        return {kind: float(np.mean(o)) for kind, o in sorted(self.outcomes.items()) if o}
