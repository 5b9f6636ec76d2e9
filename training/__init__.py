"""Self-play training of agents for every registered fowlplay game (MaskablePPO, PSRO-style
MaskablePPO, or a masked DQN: the config's `trainer:`).

    fowlplay-train --config configs/chicken_v1.yaml            # a run in runs/chicken_v1
    fowlplay-train --config configs/chicken_v1.yaml --total-timesteps 50000 --out runs/quick --seed 1
    fowlplay-train --resume runs/chicken_v1 --total-timesteps 400000   # continue (Ctrl-C saves first)
    fowlplay-train --config configs/chicken_v1.yaml --set trainer=psro --out runs/chicken_psro
    fowlplay-train --list-keys                                  # every config key, default and meaning

- `train` / `resume` (train.py): the command: the run directory, its config, the trainer it names.
- loop.py: the scaffolding every trainer runs on: `RunResult`, stop signals, progress, logs, the
  cadence of snapshots, evaluations and checkpoints; ladder.py: periodic evaluation against random
  and the baseline, which keeps the best checkpoint and writes `evaluation.csv`.
- The trainers, each in a room of its own: sb3/ (`ppo`, `psro`, `dqn`: `SelfPlayEnv`, one seat of a
  game as a gymnasium env; `SelfPlayVecEnv`, many in one process; `OpponentPool`; the callback; the
  masked DQN; the PSRO meta-game), jitted/ (`jax`: masked PPO jitted on the batched twins) and
  rllib/ (`rllib`: Ray RLlib's PPO).
- `TrainConfig` (config.py): the YAML schema; unknown keys are errors that list the valid ones.
- checkpoint.py: `save_checkpoint`, `export_checkpoint`, `load_policy` (weights only, nothing
  unpickled), `load_checkpoint` (the SB3 zip, unpickled: your own runs only), `read_metadata`,
  `check_compatible`, `convert`, `CheckpointError`, and the run directory layout; snapshots.py: the
  opponent pool's snapshot files.
- policy.py: the policy network and its masked distribution; `PolicyAgent` (agent.py): a
  checkpoint as an `fowlplay.envs.core.agents.Agent`.

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
    "SelfPlayEnv": "fowlplay.training.sb3.selfplay",
    "SelfPlayVecEnv": "fowlplay.training.sb3.vec_env",
    "OpponentPool": "fowlplay.training.sb3.opponents",
    "TrainConfig": "fowlplay.training.config",
    "ConfigError": "fowlplay.training.config",
    "load_config": "fowlplay.training.config",
    "PolicyAgent": "fowlplay.training.agent",
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
