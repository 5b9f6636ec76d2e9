"""Self-play training of MaskablePPO agents for every registered fowlplay game.

    fowlplay-train --config configs/chicken_v0.yaml

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
    "read_metadata": "training.checkpoint",
    "check_compatible": "training.checkpoint",
    "train": "training.train",
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'training' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)


__all__ = sorted(_EXPORTS)
