"""Checkpoints: a MaskablePPO model as plain weights, an SB3 zip, and a JSON file saying what it is for.

A checkpoint `<stem>` is three files, each written to a temporary file and renamed, the JSON last,
so a `.json` means the checkpoint is complete:

- `<stem>.npz`: the policy's weights as plain numeric arrays (NumPy's format, read with
  `allow_pickle=False`). Evaluation and play load this: the network is rebuilt from the metadata
  (layer sizes, activation, spaces) and the arrays are copied in; nothing is unpickled.
- `<stem>.zip`: the whole SB3 model (optimizer state and counters too), which `--resume` needs. Its
  `data` entry is cloudpickle: loading it with SB3 (`load_checkpoint`) runs any code the file holds.
  `--resume` never does: `training.sb3.trainer.restore_training_state` reads only the zip's tensors
  (with torch's `weights_only` loader) and the plain numbers of `data`, into a learner built from
  the config, and only from files the run's record (`training.manifest`) says it wrote itself.
- `<stem>.json`: the game, its options, the spaces, the network (`policy`: `net_arch`,
  `activation`, `head`, `weights_sha256`), the package version, seed, timesteps and the whole
  config; it lets evaluation rebuild the game and refuse a checkpoint that does not fit it. `head`
  is `actor_critic` (MaskablePPO, a masked softmax; the default when absent) or `q_values` (the
  masked DQN, the argmax of the masked Q-values). A `best` checkpoint also holds `evaluation`
  (its scores against the ladder); `final` holds `best` (which checkpoint evaluated best).

The trainers that keep no SB3 model (`jax`, `rllib`) write the `.npz` and `.json` alone
(`export_checkpoint`), with their own resumable state beside them under the trainer's name.

Run directory layout::

    <out>/config.yaml                          the resolved config of the run
    <out>/checkpoints/step_<N>.npz/.zip/.json  periodic checkpoints (and the one Ctrl-C saves)
    <out>/final.npz/.zip/.json                 the checkpoint at the end of training
    <out>/best.npz/.zip/.json                  the best-scoring checkpoint against random and baseline
    <out>/evaluation.csv                       the learner's score against them at each evaluation
    <out>/logs/                                progress*.csv and TensorBoard event files
    <out>/snapshots/step_<N>.npz               policy weights of earlier learners (the opponent pool)
    <out>/files.json                           the SHA-256 of every file above a resume loads, signed

Every file is read within bounds checked before anything is allocated (`envs.runtime.untrusted`): the
metadata's fields and ranges, the weights' names and shapes (from the `.npz` headers, against the
network the metadata describes, at most `MAX_PARAMETERS`) and every zip member's size.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from fowlplay import envs
from fowlplay.envs.runtime.files import WriteError, atomic_write  # noqa: F401 (WriteError: part of this API)
from fowlplay.envs.runtime.untrusted import (
    OutsideError,
    UntrustedFileError,
    check_count,
    inspect_npz,
    open_regular,
    read_json,
    read_npz,
    within,
)
from fowlplay.training import manifest

#: Keys every checkpoint's metadata holds (`policy` too, since the weights file exists).
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
#: (`imitated`: a jax run's policy right after `jax.imitate`, before its first PPO update.)
KINDS = ("final", "periodic", "best", "imitated")
#: The most parameters a checkpoint's network may have. Ours have at most a few million (Fowl's
#: 2,800-wide observation into [256, 256] is about 1.6 million); a file whose metadata asks for
#: more is refused before any of it is built.
MAX_PARAMETERS = 20_000_000
#: Bounds of the metadata's sizes (a game's observation and action counts are far below them).
MAX_OBSERVATION_SIZE = 10_000_000
MAX_ACTION_COUNT = 1_000_000
MAX_LAYERS = 64
#: The largest checkpoint metadata file read (ours are a few kilobytes: the config is in it).
MAX_METADATA_BYTES = 4 * 2**20
#: What an SB3 zip of ours holds; anything else in one is refused before it is read.
ZIP_MEMBERS = frozenset(
    {
        "data",
        "policy.pth",
        "policy.optimizer.pth",
        "pytorch_variables.pth",
        "_stable_baselines3_version",
        "system_info.txt",
    }
)
#: Room in a zip (and its `data` entry) beyond its tensors: counters, spaces, the last observations.
_ZIP_SLACK = 32 * 2**20
SUFFIXES = (".json", ".zip", ".npz")
_STEP_NAME = re.compile(r"^step_(\d+)\.(?:json|zip|npz)$")
#: What to tell a user whose checkpoint has no tensor-only weights file.
CONVERT_HINT = (
    "if you made it yourself, convert it once with `fowlplay-train --convert {path}` (which "
    "loads the zip, so only for files you trust), or pass --trust-checkpoint"
)


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, or made for another game; the message names the path."""


class CheckpointWarning(UserWarning):
    """Something about a checkpoint a user should hear about, though the run goes on."""


# ----- paths ----------------------------------------------------------------------------------
def _stem(path: str | Path) -> Path:
    path = Path(path)
    if path.suffix in SUFFIXES:
        return path.with_suffix("")
    return path


def _with(stem: Path, suffix: str) -> Path:
    return stem.with_name(stem.name + suffix)


def periodic_checkpoints(run_dir: str | Path) -> list[tuple[int, Path]]:
    """(step, stem) of every periodic checkpoint in a run directory (complete or not), oldest first."""
    folder = Path(run_dir) / "checkpoints"
    found = set()
    if folder.is_dir():
        for entry in folder.iterdir():
            match = _STEP_NAME.match(entry.name)
            if match:
                found.add((int(match.group(1)), folder / f"step_{match.group(1)}"))
    return sorted(found)


def _is_complete(stem: Path) -> bool:
    return _with(stem, ".json").exists()


def resolve(path: str | Path, prefer_best: bool = True) -> Path:
    """The checkpoint stem `path` names: a .npz, .zip, .json, a stem, or a run directory.

    For a run directory: its best checkpoint (`best`, kept by periodic evaluation) when it has a
    complete one and `prefer_best`; else the newest complete checkpoint (final, unless a periodic
    one is newer: a resumed run that was interrupted). A damaged `.json` is an error naming it; a
    checkpoint whose `.json` was never written (a save cut short) is passed over with a
    `CheckpointWarning`. `<run>/final` names the final checkpoint.
    """
    path = Path(path)
    if not path.is_dir():
        return _stem(path)
    if prefer_best and _is_complete(path / "best"):
        return path / "best"
    final = path / "final"
    best: tuple[int, Path] | None = None
    skipped: list[tuple[int | None, Path]] = []
    if _is_complete(final):
        best = (_timesteps(final), final)
    elif any(_with(final, suffix).exists() for suffix in (".zip", ".npz")):
        skipped.append((None, final))
    for step, stem in reversed(periodic_checkpoints(path)):
        if best is not None and step <= best[0]:
            break
        if _is_complete(stem):
            best = (step, stem)
            break
        skipped.append((step, stem))
    if best is None:
        incomplete = f" (incomplete, no .json: {', '.join(str(s) for _, s in skipped)})" if skipped else ""
        raise CheckpointError(
            f"run directory {path} holds no complete checkpoint (final.json or "
            f"checkpoints/step_<N>.json){incomplete}"
        )
    for step, stem in skipped:
        if step is None or step > best[0]:
            warnings.warn(
                f"{stem} has no {_with(stem, '.json').name} (a save cut short?); using the older "
                f"complete checkpoint {best[1]} ({best[0]} timesteps)",
                CheckpointWarning,
                stacklevel=2,
            )
    return best[1]


def _timesteps(stem: Path) -> int:
    return _read_json(_with(stem, ".json"))["timesteps"]


# ----- weights --------------------------------------------------------------------------------
def weights_sha256(state: dict[str, np.ndarray]) -> str:
    """A hash of a policy's weights: names, dtypes, shapes and values, in name order."""
    digest = hashlib.sha256()
    for name in sorted(state):
        array = np.ascontiguousarray(state[name])
        digest.update(f"{name}\0{array.dtype.str}\0{array.shape}\0".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def network_of(policy) -> dict[str, Any]:
    """The `net_arch` and `activation` name of a MaskablePPO policy (what rebuilding it needs)."""
    import torch

    names = {torch.nn.Tanh: "tanh", torch.nn.ReLU: "relu"}
    activation = names.get(policy.activation_fn)
    if activation is None:
        raise ValueError(
            f"cannot describe a policy with activation {policy.activation_fn!r}; supported: {list(names.values())}"
        )
    net_arch = policy.net_arch
    net_arch = {k: list(v) for k, v in net_arch.items()} if isinstance(net_arch, dict) else list(net_arch)
    return {"net_arch": net_arch, "activation": activation}


def expected_shapes(network: dict[str, Any], observation_size: int, action_count: int) -> dict[str, tuple]:
    """The names and shapes of the weights of the network a checkpoint's metadata describes
    (`policy`: net_arch, head), worked out without building it; refused past `MAX_PARAMETERS`."""
    widths = list(network["net_arch"])
    layers = [observation_size, *widths]
    shapes: dict[str, tuple] = {}
    if network.get("head", "actor_critic") == "q_values":
        sizes = [*layers, action_count]
        for i in range(len(sizes) - 1):
            shapes[f"q_net.{2 * i}.weight"] = (sizes[i + 1], sizes[i])
            shapes[f"q_net.{2 * i}.bias"] = (sizes[i + 1],)
    else:
        for branch in ("policy_net", "value_net"):
            for i in range(len(widths)):
                shapes[f"mlp_extractor.{branch}.{2 * i}.weight"] = (layers[i + 1], layers[i])
                shapes[f"mlp_extractor.{branch}.{2 * i}.bias"] = (layers[i + 1],)
        shapes["action_net.weight"] = (action_count, layers[-1])
        shapes["action_net.bias"] = (action_count,)
        shapes["value_net.weight"] = (1, layers[-1])
        shapes["value_net.bias"] = (1,)
    return shapes


def parameter_count(shapes: dict[str, tuple]) -> int:
    """Elements of every array of `shapes`."""
    return sum(int(np.prod(shape, dtype=object)) for shape in shapes.values())


def _bounded_shapes(network: dict[str, Any], metadata: dict[str, Any], json_path: Path) -> dict[str, tuple]:
    shapes = expected_shapes(network, metadata["observation_size"], metadata["action_count"])
    count = parameter_count(shapes)
    if count > MAX_PARAMETERS:
        raise CheckpointError(
            f"checkpoint metadata {json_path} describes a network of {count:,} parameters (net_arch "
            f"{_short(network['net_arch'])}, obs {metadata['observation_size']}, actions "
            f"{metadata['action_count']}); at most {MAX_PARAMETERS:,} are loaded"
        )
    return shapes


def _short(value: Any, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _read_weights(path: Path, shapes: dict[str, tuple], json_name: str) -> dict[str, np.ndarray]:
    """The arrays of a weights file, which must be exactly `shapes`; its headers are checked before
    any array is read, and nothing is unpickled (object arrays are refused)."""
    count = parameter_count(shapes)
    try:
        # Headers only, up to the largest network allowed: the exact shapes are compared next, so
        # that a mismatch is named; nothing is read before they match.
        headers = inspect_npz(path, max_elements=MAX_PARAMETERS, max_file=MAX_PARAMETERS * 8 + 2**20)
        found = {h.name: h.shape for h in headers}
        if found != shapes:
            missing = sorted(set(shapes) - set(found))
            extra = sorted(set(found) - set(shapes))
            shaped = [
                f"{n} {found[n]} (not {shapes[n]})"
                for n in sorted(found)
                if n in shapes and found[n] != shapes[n]
            ]
            parts = [f"missing {missing[:3]}" if missing else "", f"unexpected {extra[:3]}" if extra else ""]
            parts.append(f"shapes {', '.join(shaped[:3])}" if shaped else "")
            raise CheckpointError(
                f"checkpoint weights {path} do not fit the network {json_name} describes: "
                + "; ".join(part for part in parts if part)
            )
        return read_npz(path, headers, max_file=count * 8 + 2**20)
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint weights {path} do not exist") from None
    except (UntrustedFileError, OSError) as exc:
        raise CheckpointError(f"checkpoint weights {path} are corrupt: {exc}") from None


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


def save_checkpoint(
    model, path: str | Path, metadata: dict[str, Any], run_dir: str | Path | None = None
) -> Path:
    """Write `<path>.npz` (weights), `<path>.zip` (the SB3 model) and `<path>.json` (metadata with the
    network added) atomically; return the zip path. With `run_dir`, the three files' hashes go into
    its record (`training.manifest`) before the `.json` makes the checkpoint complete."""
    from fowlplay.training.policy import head_of, playing_state

    missing = [key for key in METADATA_KEYS if key not in metadata]
    if missing:
        raise ValueError(f"checkpoint metadata lacks {missing}; it needs {list(METADATA_KEYS)}")
    stem = _stem(path)
    stem.parent.mkdir(parents=True, exist_ok=True)
    state = playing_state(model)
    network = {**network_of(model.policy), "head": head_of(model), "weights_sha256": weights_sha256(state)}
    metadata = {**metadata, "policy": network}
    text = json.dumps(metadata, indent=2, sort_keys=True, default=str).encode()
    atomic_write(_with(stem, ".npz"), lambda handle: np.savez(handle, **state))
    zip_path = _with(stem, ".zip")
    atomic_write(zip_path, model.save)
    if run_dir is not None:
        json_digest = hashlib.sha256(text).hexdigest()
        manifest.record(run_dir, [_with(stem, ".npz"), zip_path], {_with(stem, ".json"): json_digest})
    # The metadata goes last: a .json beside the other two means the checkpoint is complete.
    atomic_write(_with(stem, ".json"), lambda handle: handle.write(text))
    return zip_path


# ----- reading --------------------------------------------------------------------------------
def export_checkpoint(
    aec,
    config,
    stem: Path,
    weights: dict[str, np.ndarray],
    timesteps: int,
    kind: str,
    facts: dict,
    extra: dict | None = None,
    run_dir: Path | None = None,
    trainer: str = "rllib",
) -> Path:
    """Write `<stem>.npz` (the learner's weights) and `<stem>.json` (our metadata, with the network
    `policy.build_policy` rebuilds, the trainer's own `facts` under the trainer's name and `extra`
    on top), the .json last (with `run_dir`, both recorded in its record first); the .npz path.
    The trainers that keep no SB3 zip (`jax`, `rllib`) write their checkpoints with it."""
    metadata = make_metadata(aec, config.to_dict(), config.seed, timesteps, kind)
    metadata["policy"] = {
        "net_arch": list(config.ppo.net_arch),
        "activation": config.ppo.activation,
        "head": "actor_critic",
        "weights_sha256": weights_sha256(weights),
    }
    metadata["trainer"] = trainer
    metadata[trainer] = dict(facts)
    metadata.update(extra or {})
    stem.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(metadata, indent=2, sort_keys=True, default=str).encode()
    npz = stem.with_name(stem.name + ".npz")
    atomic_write(npz, lambda handle: np.savez(handle, **weights))
    json_path = stem.with_name(stem.name + ".json")
    if run_dir is not None:
        manifest.record(run_dir, [npz], {json_path: hashlib.sha256(text).hexdigest()})
    atomic_write(json_path, lambda handle: handle.write(text))
    return npz


def _own_file(path: Path) -> Path:
    """`path`, a file of a checkpoint, refused when a link leads it out of its own folder (a shared
    run folder whose weights link elsewhere would play weights nobody shared)."""
    try:
        within(path, path.parent)
    except OutsideError:
        raise CheckpointError(
            f"checkpoint file {path} leads outside its folder {path.parent} (a link); refusing to read it"
        ) from None
    return path


def _read_json(json_path: Path) -> dict[str, Any]:
    """A checkpoint's metadata, read within bounds and checked field by field."""
    _own_file(json_path)
    try:
        metadata = read_json(json_path, limit=MAX_METADATA_BYTES)
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint metadata {json_path} does not exist") from None
    except (OSError, UntrustedFileError) as exc:
        raise CheckpointError(f"checkpoint metadata {json_path} is corrupt: {exc}") from None
    if not isinstance(metadata, dict):
        raise CheckpointError(f"checkpoint metadata {json_path} is corrupt: not a JSON object")
    missing = [key for key in METADATA_KEYS if key not in metadata]
    if missing:
        raise CheckpointError(f"checkpoint metadata {json_path} is corrupt: it lacks {missing}")
    try:
        _check_fields(metadata)
    except ValueError as exc:
        raise CheckpointError(f"checkpoint metadata {json_path} is corrupt: {exc}") from None
    return metadata


def _check_fields(metadata: dict[str, Any]) -> None:
    """Raise ValueError naming the first field of a checkpoint's metadata of the wrong type or range."""
    for key in ("game", "package_version", "kind", "created"):
        if not isinstance(metadata[key], str) or len(metadata[key]) > 200:
            raise ValueError(f"{key} must be a short string; got {_short(metadata[key])}")
    for key in ("env_options", "config"):
        if not isinstance(metadata[key], dict):
            raise ValueError(f"{key} must be a JSON object; got {_short(metadata[key])}")
    check_count(metadata["observation_size"], "observation_size", 1, MAX_OBSERVATION_SIZE)
    check_count(metadata["action_count"], "action_count", 1, MAX_ACTION_COUNT)
    check_count(metadata["timesteps"], "timesteps", 0, 2**62)
    if metadata["seed"] is not None:
        check_count(metadata["seed"], "seed", -(2**63), 2**64)
    network = metadata.get("policy")
    if network is None:
        return
    if not isinstance(network, dict):
        raise ValueError(f"policy must be a JSON object; got {_short(network)}")
    arch = network.get("net_arch")
    if not isinstance(arch, list) or len(arch) > MAX_LAYERS:
        raise ValueError(
            f"policy.net_arch must be a list of at most {MAX_LAYERS} layer sizes; got {_short(arch)}"
        )
    for width in arch:
        check_count(width, "every policy.net_arch layer size", 1, MAX_PARAMETERS)
    activation = network.get("activation")
    if activation not in ("tanh", "relu"):
        raise ValueError(f"policy.activation must be 'tanh' or 'relu'; got {_short(activation)}")
    if network.get("head", "actor_critic") not in ("actor_critic", "q_values"):
        raise ValueError(
            f"policy.head must be 'actor_critic' or 'q_values'; got {_short(network.get('head'))}"
        )
    digest = network.get("weights_sha256")
    if digest is not None and not (isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{64}", digest)):
        raise ValueError(f"policy.weights_sha256 must be 64 hex digits; got {_short(digest)}")


def read_metadata(path: str | Path, prefer_best: bool = True) -> dict[str, Any]:
    """The metadata of a checkpoint, plus `checkpoint` (the path of its .zip) and `stem`; for a run
    directory, of its best checkpoint (`resolve`)."""
    stem = resolve(path, prefer_best)
    metadata = _read_json(_with(stem, ".json"))
    metadata["checkpoint"] = str(_with(stem, ".zip"))
    metadata["stem"] = str(stem)
    return metadata


def load_checkpoint(
    path: str | Path, device: str = "cpu", env=None, **changes: Any
) -> tuple[Any, dict[str, Any]]:
    """Load (model, metadata) from the SB3 zip; `env` (a VecEnv) is attached for further training,
    and `changes` (hyperparameters such as `learning_rate`) replace the saved ones.

    This unpickles the zip's `data`, which runs any code the file holds: use it for your own runs
    (`--resume` does); `load_policy` reads a checkpoint without unpickling anything. For a run
    directory it loads the newest checkpoint (what training goes on from), not the best.
    """
    metadata = read_metadata(path, prefer_best=False)
    zip_path = _own_file(Path(metadata["checkpoint"]))
    if not zip_path.exists():
        raise CheckpointError(f"checkpoint {zip_path} does not exist (its metadata does)")
    try:
        open_regular(zip_path, 2**40).close()  # no device or pipe in its place, even when trusted
    except UntrustedFileError as exc:
        raise CheckpointError(f"checkpoint {zip_path} is corrupt: {exc}") from None
    config = metadata.get("config")
    trainer = config.get("trainer", "ppo") if isinstance(config, dict) else "ppo"
    if trainer == "dqn":
        from fowlplay.training.sb3.dqn import MaskedDQN

        algorithm = MaskedDQN
    else:
        from sb3_contrib import MaskablePPO

        algorithm = MaskablePPO
    try:
        model = algorithm.load(zip_path, env=env, device=device, **changes)
    except Exception as exc:  # SB3 raises many kinds on a damaged zip; all mean the same here
        raise CheckpointError(
            f"checkpoint {zip_path} is corrupt or not a {algorithm.__name__} model: {type(exc).__name__}: {exc}"
        ) from exc
    space = model.observation_space
    # The masked DQN's observations are {"observation", "action_mask"} dicts.
    obs_size = int((space["observation"] if hasattr(space, "spaces") else space).shape[0])
    actions = int(model.action_space.n)
    if (obs_size, actions) != (metadata["observation_size"], metadata["action_count"]):
        raise CheckpointError(
            f"checkpoint {zip_path} holds a model with obs {obs_size}, actions {actions}, but its "
            f"metadata says obs {metadata['observation_size']}, actions {metadata['action_count']}"
        )
    return model, metadata


def load_policy(
    path: str | Path, trust_checkpoint: bool = False, expect_sha256: str | None = None
) -> tuple[Any, dict[str, Any]]:
    """Load (policy, metadata) for playing, on the CPU, without unpickling anything by default.

    The policy is rebuilt from the metadata and its weights read from `<stem>.npz`. A checkpoint
    without that file (written by an older fowlplay) is refused unless `trust_checkpoint`, which
    loads the SB3 zip instead (running any code it holds). `metadata` gains `weights_file` and
    `weights_sha256` (of what was loaded); `expect_sha256` refuses weights that differ from it.
    """
    metadata = read_metadata(path)
    stem = Path(metadata["stem"])
    weights_path = _own_file(_with(stem, ".npz"))
    if weights_path.exists():
        policy, state = _policy_from_weights(weights_path, metadata)
    elif trust_checkpoint:
        model, _ = load_checkpoint(stem)
        from fowlplay.training.policy import build_policy, head_of, load_policy_state, playing_state

        state = playing_state(model)
        if head_of(model) == "q_values":
            network = network_of(model.policy)
            policy = build_policy(
                model.observation_space["observation"], model.action_space, head="q_values", **network
            )
            load_policy_state(policy, state)
        else:
            policy = model.policy
        weights_path = Path(metadata["checkpoint"])
    else:
        raise CheckpointError(
            f"checkpoint {stem} has no weights file {weights_path.name}: it was written by an older "
            f"fowlplay, and only its SB3 zip, whose pickled data can run any code, holds the "
            f"model; {CONVERT_HINT.format(path=stem)}"
        )
    digest = weights_sha256(state)
    if expect_sha256 is not None and digest != expect_sha256:
        raise CheckpointError(
            f"checkpoint {weights_path} changed while in use: its weights are now sha256 "
            f"{digest[:12]}..., not {expect_sha256[:12]}..."
        )
    policy.set_training_mode(False)
    return policy, {**metadata, "weights_file": str(weights_path), "weights_sha256": digest}


def _network(metadata: dict[str, Any], json_path: Path) -> dict[str, Any]:
    """The metadata's `policy` (the network its weights file needs), or a CheckpointError."""
    network = metadata.get("policy")
    if not isinstance(network, dict) or not {"net_arch", "activation", "weights_sha256"} <= set(network):
        raise CheckpointError(
            f"checkpoint metadata {json_path} is corrupt: it lacks the network (policy: net_arch, "
            "activation, weights_sha256) that its weights file needs"
        )
    return network


def _policy_from_weights(weights_path: Path, metadata: dict[str, Any]):
    """A policy rebuilt from the metadata's network, holding the weights of `weights_path`.

    The network's size is bounded and the file's arrays are checked against it from their headers
    before anything is built or read."""
    from fowlplay.training.policy import build_policy, load_policy_state
    from gymnasium import spaces

    json_path = weights_path.with_suffix(".json")
    network = _network(metadata, json_path)
    shapes = _bounded_shapes(network, metadata, json_path)
    state = _read_weights(weights_path, shapes, json_path.name)
    if weights_sha256(state) != network["weights_sha256"]:
        raise CheckpointError(
            f"checkpoint weights {weights_path} do not match {json_path.name} (their sha256 differs): "
            "one of the two was replaced or damaged"
        )
    obs_space = spaces.Box(-np.inf, np.inf, shape=(int(metadata["observation_size"]),), dtype=np.float32)
    action_space = spaces.Discrete(int(metadata["action_count"]))
    try:
        head = network.get("head", "actor_critic")
        policy = build_policy(obs_space, action_space, network["net_arch"], network["activation"], head)
        load_policy_state(policy, state)
    except (ValueError, TypeError, RuntimeError) as exc:
        raise CheckpointError(
            f"checkpoint weights {weights_path} do not fit the network {json_path.name} describes "
            f"(net_arch {network['net_arch']}, {network['activation']}): {exc}"
        ) from None
    return policy, state


# ----- resuming ---------------------------------------------------------------------------------
def training_zip(stem: str | Path) -> tuple[dict[str, Any], dict[str, Any], Path, int]:
    """(metadata, network, zip path, byte bound) of a checkpoint's SB3 zip, which a resume reads
    (`training.sb3.trainer.restore_training_state`): its members are bounded by the network the
    metadata describes before any is read."""
    stem = _stem(stem)
    metadata = read_metadata(stem, prefer_best=False)
    json_path = _with(stem, ".json")
    network = _network(metadata, json_path)
    shapes = _bounded_shapes(network, metadata, json_path)
    # float32 weights, a DQN's target copy, and Adam's two moments of each.
    return metadata, network, _with(stem, ".zip"), 4 * 3 * 2 * parameter_count(shapes) + _ZIP_SLACK


def checkpoint_files(stem: str | Path) -> list[Path]:
    """The files of a checkpoint that exist (`.npz`, `.zip`, `.json`)."""
    stem = _stem(stem)
    return [_with(stem, suffix) for suffix in (".npz", ".zip", ".json") if _with(stem, suffix).exists()]


def convert(path: str | Path) -> list[Path]:
    """Write the tensor-only weights file (and the network in the metadata) of an older checkpoint,
    or of every checkpoint in a run directory; returns the weights files written.

    It loads the SB3 zip, so it runs any code the zip holds: convert only checkpoints you trust.
    """
    from fowlplay.training.policy import head_of, playing_state

    path = Path(path)
    if path.is_dir():
        stems = [stem for _, stem in periodic_checkpoints(path)] + [path / "final", path / "best"]
        stems = [stem for stem in stems if _is_complete(stem)]
        if not stems:
            raise CheckpointError(f"{path} holds no complete checkpoint to convert")
    else:
        stems = [_stem(path)]
    written = []
    for stem in stems:
        model, metadata = load_checkpoint(stem)
        state = playing_state(model)
        for key in ("checkpoint", "stem"):
            metadata.pop(key)
        network = {**network_of(model.policy), "head": head_of(model)}
        metadata["policy"] = {**network, "weights_sha256": weights_sha256(state)}
        text = json.dumps(metadata, indent=2, sort_keys=True, default=str).encode()
        atomic_write(_with(stem, ".npz"), lambda handle, state=state: np.savez(handle, **state))
        atomic_write(_with(stem, ".json"), lambda handle, text=text: handle.write(text))
        written.append(_with(stem, ".npz"))
    return written


# ----- compatibility --------------------------------------------------------------------------
def describe(game: str, options: dict[str, Any], observation_size: int, action_count: int) -> str:
    """'chicken_v1 with 2 players, obs 27, actions 16'."""
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
