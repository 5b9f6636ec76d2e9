"""Self-play training of MaskablePPO agents for every registered fowlplay game.

    fowlplay-train --config configs/chicken_v0.yaml            # a run in runs/chicken_v0
    fowlplay-train --config configs/chicken_v0.yaml --total-timesteps 50000 --out runs/quick --seed 1
    fowlplay-train --resume runs/chicken_v0 --total-timesteps 400000   # continue (Ctrl-C saves first)
    fowlplay-train --list-keys                                  # every config key, default and meaning

- `SelfPlayEnv` (selfplay.py): one seat of a game as a gymnasium env; opponents play inside it.
- `OpponentPool` (opponents.py): random, the game's baseline, the latest learner, earlier snapshots.
- `TrainConfig` (config.py): the YAML schema; unknown keys are errors that list the valid ones.
- `train` / `resume` (train.py): the run itself; callbacks.py keeps the pool and run directory current.
- checkpoint.py: `save_checkpoint`, `load_policy` (weights only, nothing unpickled),
  `load_checkpoint` (the SB3 zip, unpickled: your own runs only), `read_metadata`,
  `check_compatible`, `convert`, `CheckpointError`, and the run directory layout.
- `PolicyAgent` (policy.py): a checkpoint as an `envs.core.agents.Agent`.

Heavy modules (torch, stable-baselines3) load only when a name that needs them is used.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> module that defines it (imported on first use).
_EXPORTS = {
    "SelfPlayEnv": "training.selfplay",
    "OpponentPool": "training.opponents",
    "TrainConfig": "training.config",
    "ConfigError": "training.config",
    "load_config": "training.config",
    "PolicyAgent": "training.policy",
    "CheckpointError": "training.checkpoint",
    "save_checkpoint": "training.checkpoint",
    "load_checkpoint": "training.checkpoint",
    "load_policy": "training.checkpoint",
    "read_metadata": "training.checkpoint",
    "check_compatible": "training.checkpoint",
    "train": "training.train",
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'training' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)


__all__ = sorted(_EXPORTS)
