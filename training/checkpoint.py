"""Checkpoints: the SB3 zip of a MaskablePPO model plus a JSON file that says what it was made for.

A checkpoint `<stem>` is the pair `<stem>.zip` and `<stem>.json`, each written to a temporary file
and renamed, so a crash never leaves half a checkpoint. The metadata lets evaluation rebuild the
game and refuse a checkpoint that does not fit it.

Run directory layout::

    <out>/config.yaml                     the resolved config of the run
    <out>/checkpoints/step_<N>.zip/.json  periodic checkpoints (and the one Ctrl-C saves)
    <out>/final.zip/.json                 the checkpoint at the end of training
    <out>/logs/                           progress*.csv and TensorBoard event files
    <out>/snapshots/step_<N>.npz          policy weights of earlier learners (the opponent pool)
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import re
from pathlib import Path
from typing import Any

import envs

#: Keys every checkpoint's metadata holds.
METADATA_KEYS = (
    "game",
    "env_options",
    "observation_size",
    "action_count",
    "package_version",
    "seed",
    "timesteps",
    "config",
    "created",
    "kind",
)
KINDS = ("final", "periodic")
_STEP_NAME = re.compile(r"^step_(\d+)\.zip$")


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, or made for another game; the message names the path."""


# ----- paths ----------------------------------------------------------------------------------
def _stem(path: str | Path) -> Path:
    path = Path(path)
    if path.suffix in (".zip", ".json"):
        return path.with_suffix("")
    return path


def _with(stem: Path, suffix: str) -> Path:
    return stem.with_name(stem.name + suffix)


def periodic_checkpoints(run_dir: str | Path) -> list[tuple[int, Path]]:
    """(step, stem) of every periodic checkpoint in a run directory, oldest first."""
    folder = Path(run_dir) / "checkpoints"
    found = []
    if folder.is_dir():
        for entry in folder.iterdir():
            match = _STEP_NAME.match(entry.name)
            if match:
                found.append((int(match.group(1)), entry.with_suffix("")))
    return sorted(found)


def resolve(path: str | Path) -> Path:
    """The checkpoint stem `path` names: a .zip, a .json, a stem, or a run directory.

    For a run directory: its final checkpoint, unless a periodic one is newer (a resumed run that
    was interrupted), else the newest periodic one.
    """
    path = Path(path)
    if not path.is_dir():
        return _stem(path)
    periodic = periodic_checkpoints(path)
    final = path / "final"
    if _with(final, ".zip").exists() and (not periodic or _timesteps(final) >= periodic[-1][0]):
        return final
    if periodic:
        return periodic[-1][1]
    raise CheckpointError(
        f"run directory {path} holds no checkpoint (neither final.zip nor checkpoints/step_<N>.zip)"
    )


def _timesteps(stem: Path) -> int:
    try:
        return int(read_metadata(stem)["timesteps"])
    except (CheckpointError, TypeError, ValueError):
        return -1


# ----- writing --------------------------------------------------------------------------------
def make_metadata(aec_env, config: dict[str, Any], seed: int, timesteps: int, kind: str) -> dict[str, Any]:
    """The metadata of a checkpoint of a model trained on the fowlplay AEC env `aec_env`."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {list(KINDS)}; got {kind!r}")
    agent = aec_env.possible_agents[0]
    return {
        "game": aec_env.metadata["name"],
        "env_options": dataclasses.asdict(aec_env.options),
        "observation_size": int(aec_env.observation_space(agent)["observation"].shape[0]),
        "action_count": int(aec_env.action_space(agent).n),
        "package_version": envs.__version__,
        "seed": seed,
        "timesteps": int(timesteps),
        "config": config,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "kind": kind,
    }


def _atomic_write(target: Path, write) -> None:
    tmp = target.with_name(target.name + ".tmp")
    with open(tmp, "wb") as handle:
        write(handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, target)


def save_checkpoint(model, path: str | Path, metadata: dict[str, Any]) -> Path:
    """Write `<path>.zip` (the model) and `<path>.json` (metadata) atomically; return the zip path."""
    missing = [key for key in METADATA_KEYS if key not in metadata]
    if missing:
        raise ValueError(f"checkpoint metadata lacks {missing}; it needs {list(METADATA_KEYS)}")
    stem = _stem(path)
    stem.parent.mkdir(parents=True, exist_ok=True)
    zip_path = _with(stem, ".zip")
    text = json.dumps(metadata, indent=2, sort_keys=True, default=str).encode()
    _atomic_write(zip_path, model.save)
    # The metadata goes last: a .json beside a .zip means the pair is complete.
    _atomic_write(_with(stem, ".json"), lambda handle: handle.write(text))
    return zip_path


# ----- reading --------------------------------------------------------------------------------
def read_metadata(path: str | Path) -> dict[str, Any]:
    """The metadata of a checkpoint, plus `checkpoint`: the path of its .zip."""
    stem = resolve(path)
    json_path = _with(stem, ".json")
    try:
        metadata = json.loads(json_path.read_text())
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint metadata {json_path} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"checkpoint metadata {json_path} is corrupt: {exc}") from None
    if not isinstance(metadata, dict):
        raise CheckpointError(f"checkpoint metadata {json_path} is corrupt: not a JSON object")
    missing = [key for key in METADATA_KEYS if key not in metadata]
    if missing:
        raise CheckpointError(f"checkpoint metadata {json_path} is corrupt: it lacks {missing}")
    metadata["checkpoint"] = str(_with(stem, ".zip"))
    return metadata


def load_checkpoint(path: str | Path, device: str = "cpu", env=None) -> tuple[Any, dict[str, Any]]:
    """Load (model, metadata); `env` (a VecEnv) is attached for further training."""
    from sb3_contrib import MaskablePPO

    metadata = read_metadata(path)
    zip_path = Path(metadata["checkpoint"])
    if not zip_path.exists():
        raise CheckpointError(f"checkpoint {zip_path} does not exist (its metadata does)")
    try:
        model = MaskablePPO.load(zip_path, env=env, device=device)
    except Exception as exc:  # SB3 raises many kinds on a damaged zip; all mean the same here
        raise CheckpointError(
            f"checkpoint {zip_path} is corrupt or not a MaskablePPO model: {type(exc).__name__}: {exc}"
        ) from exc
    obs_size = int(model.observation_space.shape[0])
    actions = int(model.action_space.n)
    if (obs_size, actions) != (metadata["observation_size"], metadata["action_count"]):
        raise CheckpointError(
            f"checkpoint {zip_path} holds a model with obs {obs_size}, actions {actions}, but its "
            f"metadata says obs {metadata['observation_size']}, actions {metadata['action_count']}"
        )
    return model, metadata


# ----- compatibility --------------------------------------------------------------------------
def describe(game: str, options: dict[str, Any], observation_size: int, action_count: int) -> str:
    """'chicken_v0 with 2 players, obs 27, actions 16'."""
    return f"{game} with {options.get('num_players', '?')} players, obs {observation_size}, actions {action_count}"


def check_compatible(metadata: dict[str, Any], env) -> None:
    """Raise CheckpointError unless the checkpoint was made for this game, options and spaces.

    `env` is a fowlplay AEC env (or a `SelfPlayEnv`, whose AEC env is used).
    """
    aec = getattr(env, "aec", env)
    agent = aec.possible_agents[0]
    game = aec.metadata["name"]
    # Compare as the metadata stores them: JSON turns tuples into lists.
    options = json.loads(json.dumps(dataclasses.asdict(aec.options), default=str))
    obs_size = int(aec.observation_space(agent)["observation"].shape[0])
    actions = int(aec.action_space(agent).n)
    theirs = metadata.get("env_options", {})
    differences = [
        f"{key} {value!r} vs {options.get(key, 'absent')!r}"
        for key, value in sorted(theirs.items())
        if options.get(key, object()) != value
    ]
    same = (
        metadata.get("game") == game
        and metadata.get("observation_size") == obs_size
        and metadata.get("action_count") == actions
        and not differences
    )
    if same:
        return
    where = metadata.get("checkpoint", "checkpoint")
    message = (
        f"checkpoint {where} is for "
        f"{describe(metadata.get('game'), theirs, metadata.get('observation_size'), metadata.get('action_count'))}; "
        f"this game is {describe(game, options, obs_size, actions)}"
    )
    if differences and metadata.get("game") == game:
        message += f" (options differ, checkpoint vs game: {', '.join(differences)})"
    raise CheckpointError(message)
