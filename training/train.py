"""The train command: a run directory, its config, and the trainer the config names. `train(config)`
starts a run; `resume(run_dir)` continues one.

`config.trainer` picks the trainer, each in a room of its own that holds only what differs:
`ppo` (MaskablePPO against the pool), `psro` (the same, the pool's weights set by a meta-solver) and
`dqn` (SB3's DQN with the action mask) in `training.sb3`; `jax` (masked PPO jitted on the batched
twins) in `training.jitted`; `rllib` (Ray RLlib's PPO) in `training.rllib`. Every trainer runs on the
same scaffolding (`training.loop`), writes the same checkpoints and keeps the best one
(`training.ladder`).
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path
from typing import Any

from fowlplay.envs.runtime.lock import hold_folder
from fowlplay.envs.runtime.untrusted import UntrustedFileError, read_bytes
from fowlplay.training import manifest
from fowlplay.training.checkpoint import (
    CheckpointError,
    CheckpointWarning,
    checkpoint_files,
    read_metadata,
    resolve,
)
from fowlplay.training.config import ConfigError, TrainConfig, from_dict, with_overrides
from fowlplay.training.loop import RunResult
from fowlplay.training.sb3.trainer import PoolFactory, checkpoint_network

#: What a run directory holds (all that `overwrite` removes).
RUN_FILES = (
    "config.yaml",
    "final.npz",
    "final.zip",
    "final.json",
    "best.npz",
    "best.zip",
    "best.json",
    "evaluation.csv",
    "checkpoints",
    "snapshots",
    "logs",
    "rllib",
    manifest.MANIFEST,
)
#: The largest config.yaml a resume reads (ours are a few kilobytes).
MAX_CONFIG_BYTES = 2**20


class RunFinished(Exception):  # noqa: N818 - no error: nothing is left to do
    """`resume` of a run whose final checkpoint already holds its total_timesteps: nothing to do, and
    nothing was written; the message says so and how to train on."""


# ----- the run directory ----------------------------------------------------------------------
def prepare_run_dir(run_dir: Path, overwrite: bool) -> None:
    """Create the run directory; refuse one that holds a run unless `overwrite`."""
    existing = [name for name in RUN_FILES if (run_dir / name).exists()]
    if existing and not overwrite:
        raise ConfigError(
            f"run directory {run_dir} already holds a run ({', '.join(existing)}); continue it with "
            f"--resume {run_dir}, replace it with --overwrite, or choose another --out"
        )
    for name in existing:
        path = run_dir / name
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    run_dir.mkdir(parents=True, exist_ok=True)


def read_run_config(
    run_dir: Path, overrides: dict[str, Any] | None = None, given: dict[str, str] | None = None
) -> TrainConfig:
    """The config a run directory was started with, with `overrides` applied; a mistake in an
    override is a `ConfigError` naming it as the user `given` it (`config.with_overrides`)."""
    import yaml

    path = run_dir / "config.yaml"
    if not path.exists():
        raise CheckpointError(f"{run_dir} is not a run directory: {path} does not exist")
    try:
        data = yaml.safe_load(read_bytes(path, MAX_CONFIG_BYTES).decode("utf-8"))
        if not isinstance(data, dict):
            raise ConfigError(f"expected a mapping of config keys, got {type(data).__name__}")
        from_dict(data)  # the run's own config, before any override
    except (yaml.YAMLError, ConfigError, UntrustedFileError, UnicodeDecodeError, RecursionError) as exc:
        raise CheckpointError(f"run config {path} is corrupt: {_first_line(exc)}") from None
    except OSError as exc:
        raise CheckpointError(f"run config {path} is unreadable: {exc.strerror or exc}") from None
    return with_overrides(data, overrides or {}, f"run config {path}", given)


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


# ----- training -------------------------------------------------------------------------------
def train(
    config: TrainConfig,
    overwrite: bool = False,
    verbose: bool = True,
    pool_factory: PoolFactory | None = None,
) -> RunResult:
    """Start a new run in `config.run_dir()` (`pool_factory`: see `sb3.trainer.make_vec_env`); the
    run holds the folder's lock (`envs.runtime.lock`) until it ends."""
    run_dir = config.run_dir()
    with hold_folder(run_dir):
        prepare_run_dir(run_dir, overwrite)
        return _run(config, run_dir, checkpoint=None, verbose=verbose, pool_factory=pool_factory)


def resume(
    run_dir: str | Path,
    overrides: dict[str, Any] | None = None,
    verbose: bool = True,
    pool_factory: PoolFactory | None = None,
    trust_checkpoint: bool = False,
    given: dict[str, str] | None = None,
) -> RunResult:
    """Continue a run from its newest checkpoint up to its (possibly raised) total_timesteps.

    Any config key may change but the game, the seed and the network's shape (`NETWORK_KEYS`), which
    the checkpoint fixes; config.yaml is rewritten only once the checkpoint has loaded. A run that
    is finished (its final checkpoint holds total_timesteps) raises `RunFinished` and writes nothing.
    `pool_factory` (see `sb3.trainer.make_vec_env`) must be the one the run started with. The
    checkpoint is loaded without unpickling anything, and only when the run's record
    (`training.manifest`) says this user's fowlplay wrote it, unless `trust_checkpoint`. The run
    holds the folder's lock. `given` names each override as the user gave it (for its errors).
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise CheckpointError(f"run directory {run_dir} does not exist")
    with hold_folder(run_dir):
        return _resume(run_dir, overrides or {}, verbose, pool_factory, trust_checkpoint, given)


def _resume(
    run_dir: Path,
    overrides: dict[str, Any],
    verbose: bool,
    pool_factory: PoolFactory | None,
    trust_checkpoint: bool,
    given: dict[str, str] | None,
) -> RunResult:
    from fowlplay.training.config import NETWORK_KEYS

    config = read_run_config(run_dir, overrides, given)
    if config.run_dir().resolve() != run_dir.resolve():
        # The run may have been moved or copied: it continues where it is now.
        config.out = str(run_dir)
    checkpoint = resolve(run_dir, prefer_best=False)
    try:
        manifest.verify(run_dir, checkpoint_files(checkpoint), trust_checkpoint)
    except manifest.ManifestError as exc:
        raise CheckpointError(str(exc)) from None
    trained_with = read_metadata(checkpoint)["config"]
    trained_by = trained_with.get("trainer", "ppo")
    if config.trainer != trained_by:
        raise ConfigError(
            f"--resume keeps the trainer of {run_dir}: {checkpoint} was trained by {trained_by!r}, so it "
            f"cannot continue as {config.trainer!r}; start a new run (--config ... --out ...) to change it"
        )
    network = checkpoint_network(checkpoint, trust_checkpoint)
    section = "dqn" if config.trainer == "dqn" else "ppo"
    for key in NETWORK_KEYS:
        if not key.startswith(section + "."):
            continue
        name = key.split(".")[1]
        asked, real = getattr(getattr(config, section), name), network[name]
        if asked == real:
            continue
        if key in overrides or "ppo" in overrides:
            raise ConfigError(
                f"--resume keeps the network of {run_dir}: {key} is {real!r} in {checkpoint}, so it "
                f"cannot become {asked!r}; start a new run (--config ... --out ...) to change it"
            )
        # config.yaml disagrees with the model (an earlier resume rewrote it): the model is right.
        warnings.warn(
            f"{run_dir / 'config.yaml'} says {key} {asked!r}, but the model in {checkpoint} has "
            f"{real!r}; continuing with {real!r} (config.yaml is corrected)",
            CheckpointWarning,
            stacklevel=2,
        )
        setattr(getattr(config, section), name, real)
    _refuse_finished(run_dir, checkpoint, config.total_timesteps)
    if trust_checkpoint:
        # The user vouches for the folder: what this resume loads becomes the run's own, so the next
        # resume (and the opponent pool's snapshots) need no flag.
        snapshots = [
            path
            for path in sorted((run_dir / "snapshots").glob("step_*.npz"))
            if path.stem[len("step_") :].isdigit() and path.is_file()
        ]
        try:
            manifest.record(run_dir, [*checkpoint_files(checkpoint), *snapshots])
        except UntrustedFileError as exc:  # a device or a pipe in a file's place: trusted or not
            raise CheckpointError(f"cannot resume from {checkpoint}: {exc}") from None
    _warn_stretched_schedule(run_dir, config, trained_with.get("total_timesteps"))
    return _run(
        config,
        run_dir,
        checkpoint=checkpoint,
        verbose=verbose,
        pool_factory=pool_factory,
        trust_checkpoint=trust_checkpoint,
    )


def _refuse_finished(run_dir: Path, checkpoint: Path, total: int) -> None:
    """Raise `RunFinished` when the newest checkpoint is the final one and holds `total` decisions
    (a resume would only evaluate it again); a final cut short by max_minutes goes on."""
    if checkpoint != run_dir / "final":
        return
    timesteps = read_metadata(checkpoint).get("timesteps")
    if isinstance(timesteps, int) and timesteps >= total:
        raise RunFinished(
            f"{run_dir} is finished: its final checkpoint holds {timesteps:,} decisions of "
            f"total_timesteps {total:,}; nothing was done (raise --total-timesteps to train it further)"
        )


def _warn_stretched_schedule(run_dir: Path, config: TrainConfig, started: int) -> None:
    """Warn when a resume changes the budget (`started`: the checkpoint's) that a decaying schedule spans."""
    if config.total_timesteps == started or not isinstance(started, int):
        return
    if config.trainer == "dqn":
        schedule = f"DQN's exploration (epsilon over {config.dqn.exploration_fraction:g} of the budget)"
    elif config.ppo.lr_schedule == "linear":
        schedule = "the linear learning-rate schedule"
    else:
        return  # a constant rate spans no budget
    warnings.warn(
        f"--resume {run_dir} with total_timesteps {config.total_timesteps:,} (it was {started:,}): "
        f"{schedule} is rebuilt over the new total from where the run stands, so this run differs "
        f"from one started with {config.total_timesteps:,} (docs/training.md)",
        CheckpointWarning,
        stacklevel=3,  # the caller of `resume`
    )


def _run(
    config: TrainConfig,
    run_dir: Path,
    checkpoint: Path | None,
    verbose: bool,
    pool_factory: PoolFactory | None = None,
    trust_checkpoint: bool = False,
) -> RunResult:
    """Run the trainer the config names (each imported only when asked for)."""
    if config.trainer == "rllib":
        if pool_factory is not None:
            raise ConfigError(
                "trainer rllib has no pool hook; fowlplay-exploit trains its best response with MaskablePPO"
            )
        # Ray RLlib's PPO (the rllib extra).
        from fowlplay.training.rllib.trainer import run

        return run(config, run_dir, checkpoint, verbose, trust_checkpoint=trust_checkpoint)
    if config.trainer == "jax":
        if pool_factory is not None:
            raise ConfigError(
                "trainer jax has no pool hook; fowlplay-exploit trains its best response with MaskablePPO"
            )
        # Masked PPO jitted on the batched twins (the jax extra).
        from fowlplay.training.jitted.trainer import run

        return run(config, run_dir, checkpoint, verbose, trust_checkpoint=trust_checkpoint)
    from fowlplay.training.sb3.trainer import run

    return run(config, run_dir, checkpoint, verbose, pool_factory, trust_checkpoint)
