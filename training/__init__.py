"""Self-play training of agents for every registered fowlplay game (MaskablePPO, PSRO-style
MaskablePPO, or a masked DQN: the config's `trainer:`).

    fowlplay-train --config configs/chicken_v1.yaml            # a run in runs/chicken_v1
    fowlplay-train --config configs/chicken_v1.yaml --total-timesteps 50000 --out runs/quick --seed 1
    fowlplay-train --resume runs/chicken_v1 --total-timesteps 400000   # continue (Ctrl-C saves first)
    fowlplay-train --config configs/chicken_v1.yaml --set trainer=psro --out runs/chicken_psro
    fowlplay-train --list-keys                                  # every config key, default and meaning

- `SelfPlayEnv` (selfplay.py): one seat of a game as a gymnasium env; opponents play inside it.
- `SelfPlayVecEnv` (vec_env.py): many SelfPlayEnvs in one process, opponents' network moves batched.
- `OpponentPool` (opponents.py): random, the game's baseline, the latest learner, earlier snapshots.
- `TrainConfig` (config.py): the YAML schema; unknown keys are errors that list the valid ones.
- `train` / `resume` (train.py): the run itself; callbacks.py keeps the pool and run directory current.
- checkpoint.py: `save_checkpoint`, `load_policy` (weights only, nothing unpickled),
  `load_checkpoint` (the SB3 zip, unpickled: your own runs only), `read_metadata`,
  `check_compatible`, `convert`, `CheckpointError`, and the run directory layout.
- `PolicyAgent` (policy.py): a checkpoint as an `fowlplay.envs.core.agents.Agent`.
- dqn.py: the masked DQN (`trainer: dqn`); psro.py: the meta-game and its Nash meta-solver
  (`trainer: psro`); ladder.py: periodic evaluation against random and the baseline, which keeps
  the best checkpoint and writes `evaluation.csv`.

Heavy modules (torch, stable-baselines3) load only when a name that needs them is used.
"""

from __future__ import annotations

import importlib
from typing import Any

if __name__ != "fowlplay.training":  # imported as a bare top-level name from a checkout's root
    raise ImportError(
        "this folder is the package fowlplay.training; import it by that name (from fowlplay import training), "
        "not as `training`: a bare `training` would load a second, separate copy of every module"
    )

#: Public name -> module that defines it (imported on first use).
_EXPORTS = {
    "SelfPlayEnv": "fowlplay.training.selfplay",
    "SelfPlayVecEnv": "fowlplay.training.vec_env",
    "OpponentPool": "fowlplay.training.opponents",
    "TrainConfig": "fowlplay.training.config",
    "ConfigError": "fowlplay.training.config",
    "load_config": "fowlplay.training.config",
    "PolicyAgent": "fowlplay.training.policy",
    "CheckpointError": "fowlplay.training.checkpoint",
    "save_checkpoint": "fowlplay.training.checkpoint",
    "load_checkpoint": "fowlplay.training.checkpoint",
    "load_policy": "fowlplay.training.checkpoint",
    "read_metadata": "fowlplay.training.checkpoint",
    "check_compatible": "fowlplay.training.checkpoint",
    "train": "fowlplay.training.train",
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'training' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)


__all__ = sorted(_EXPORTS)
