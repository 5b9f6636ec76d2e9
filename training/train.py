"""One self-play training run, top to bottom: run directory, environments, learner, learning,
saving. `train(config)` starts a run; `resume(run_dir)` continues one."""

from __future__ import annotations

import functools
import multiprocessing
import shutil
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import envs
from training.checkpoint import CheckpointError, load_checkpoint, make_metadata, resolve, save_checkpoint
from training.config import ConfigError, TrainConfig, from_dict

#: What a run directory holds (all that `overwrite` removes).
RUN_FILES = ("config.yaml", "final.zip", "final.json", "checkpoints", "snapshots", "logs")


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during training; `checkpoint` is the checkpoint saved before stopping."""

    def __init__(self, checkpoint: Path) -> None:
        super().__init__(f"training interrupted; saved {checkpoint}")
        self.checkpoint = checkpoint


@dataclass
class RunResult:
    """What a finished run produced."""

    run_dir: Path
    checkpoint: Path
    timesteps: int
    seconds: float
    win_rates: dict[str, float]
    stopped_by_time: bool


# ----- environments ---------------------------------------------------------------------------
def _worker_env(torch_threads: int, **kwargs: Any):
    """Build one SelfPlayEnv (in a subprocess worker, or in-process for 'dummy')."""
    from stable_baselines3.common.monitor import Monitor

    from training.selfplay import SelfPlayEnv

    if multiprocessing.parent_process() is not None:
        # Ctrl-C reaches the whole process group; only the trainer should handle it, so that it
        # can still talk to its workers while saving.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        import torch

        torch.set_num_threads(torch_threads)
    return Monitor(SelfPlayEnv(**kwargs))


def make_vec_env(config: TrainConfig):
    """The learner's vectorised SelfPlayEnvs, as the config asks."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    factory = functools.partial(
        _worker_env,
        torch_threads=1,
        game=config.game,
        env_options=config.training_options(),
        opponents=config.opponents.weights(),
        learner_seat=config.learner_seat,
        truncation_reward=config.truncation_reward,
        decision_cost=config.decision_cost,
        shaping=config.shaping,
        gamma=config.ppo.gamma,
        max_decisions=config.max_decisions,
        snapshot_window=config.opponents.snapshot_window,
        network={"net_arch": config.ppo.net_arch, "activation": config.ppo.activation},
    )
    factories = [factory] * config.n_envs
    if config.vec_env == "batched":
        from stable_baselines3.common.vec_env import VecMonitor

        from training.vec_env import SelfPlayVecEnv

        kwargs = {key: value for key, value in factory.keywords.items() if key != "torch_threads"}
        return VecMonitor(SelfPlayVecEnv(config.n_envs, **kwargs))
    if config.vec_env == "dummy":
        return DummyVecEnv(factories)
    return SubprocVecEnv(factories, start_method=config.start_method)


def make_model(config: TrainConfig, vec_env):
    """A fresh MaskablePPO learner for the config."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.utils import LinearSchedule

    from training.policy import policy_kwargs

    ppo = config.ppo
    # SB3 calls a schedule with the fraction of total_timesteps still to go (1 -> 0).
    rate = LinearSchedule(ppo.learning_rate, 0.0, 1.0) if ppo.lr_schedule == "linear" else ppo.learning_rate
    return MaskablePPO(
        "MlpPolicy",
        vec_env,
        learning_rate=rate,
        n_steps=ppo.n_steps,
        batch_size=ppo.batch_size,
        n_epochs=ppo.n_epochs,
        gamma=ppo.gamma,
        gae_lambda=ppo.gae_lambda,
        clip_range=ppo.clip_range,
        ent_coef=ppo.ent_coef,
        vf_coef=ppo.vf_coef,
        max_grad_norm=ppo.max_grad_norm,
        target_kl=ppo.target_kl,
        policy_kwargs=policy_kwargs(ppo.net_arch, ppo.activation),
        seed=config.seed,
        device=config.device,
    )


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


def write_config(config: TrainConfig, run_dir: Path) -> None:
    """Save the resolved config as `<run_dir>/config.yaml`."""
    import yaml

    text = yaml.safe_dump(config.to_dict(), sort_keys=False)
    tmp = run_dir / "config.yaml.tmp"
    tmp.write_text(text)
    tmp.replace(run_dir / "config.yaml")


def read_run_config(run_dir: Path, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """The config a run directory was started with, with `overrides` applied."""
    import yaml

    from training.config import apply_overrides

    path = run_dir / "config.yaml"
    if not path.exists():
        raise CheckpointError(f"{run_dir} is not a run directory: {path} does not exist")
    try:
        data = yaml.safe_load(path.read_text())
        return from_dict(apply_overrides(data, overrides or {}))
    except (yaml.YAMLError, ConfigError) as exc:
        raise CheckpointError(f"run config {path} is corrupt: {exc}") from exc


def _logger(run_dir: Path, config: TrainConfig, resumed_at: int | None):
    from stable_baselines3.common.logger import CSVOutputFormat, Logger, make_output_format

    logs = run_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    # SB3's CSV writer truncates its file, so a resumed run writes its own next to the first.
    name = "progress.csv" if resumed_at is None else f"progress_resumed_{resumed_at}.csv"
    formats = [CSVOutputFormat(str(logs / name))]
    if config.tensorboard:
        formats.append(make_output_format("tensorboard", str(logs)))
    return Logger(folder=str(logs), output_formats=formats)


# ----- training -------------------------------------------------------------------------------
def train(config: TrainConfig, overwrite: bool = False, verbose: bool = True) -> RunResult:
    """Start a new run in `config.run_dir()`."""
    run_dir = config.run_dir()
    prepare_run_dir(run_dir, overwrite)
    write_config(config, run_dir)
    return _run(config, run_dir, checkpoint=None, verbose=verbose)


def resume(run_dir: str | Path, overrides: dict[str, Any] | None = None, verbose: bool = True) -> RunResult:
    """Continue a run from its newest checkpoint up to its (possibly raised) total_timesteps."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise CheckpointError(f"run directory {run_dir} does not exist")
    config = read_run_config(run_dir, overrides)
    if config.run_dir().resolve() != run_dir.resolve():
        # The run may have been moved or copied: it continues where it is now.
        config.out = str(run_dir)
    checkpoint = resolve(run_dir)
    write_config(config, run_dir)
    return _run(config, run_dir, checkpoint=checkpoint, verbose=verbose)


def _run(config: TrainConfig, run_dir: Path, checkpoint: Path | None, verbose: bool) -> RunResult:
    import torch

    from training.callbacks import SelfPlayCallback, load_snapshots

    torch.set_num_threads(config.torch_threads)
    aec = envs.make(config.game, **config.env_options)
    config_dict = config.to_dict()

    def save(kind: str, timesteps: int) -> Path:
        stem = run_dir / "final" if kind == "final" else run_dir / "checkpoints" / f"step_{timesteps}"
        metadata = make_metadata(aec, config_dict, config.seed, timesteps, kind)
        return save_checkpoint(model, stem, metadata)

    # --- environments and learner
    vec_env = make_vec_env(config)
    interrupted = False
    try:
        if checkpoint is None:
            model, resumed_at = make_model(config, vec_env), None
        else:
            model, _ = load_checkpoint(checkpoint, device=config.device, env=vec_env)
            resumed_at = model.num_timesteps
            # A resumed run reseeds from where it stopped, so it does not replay its first games.
            model.set_random_seed(config.seed + resumed_at)
        model.set_logger(_logger(run_dir, config, resumed_at))
        remaining = config.total_timesteps - model.num_timesteps
        if remaining <= 0:
            path = save("final", model.num_timesteps)
            return RunResult(run_dir, path, model.num_timesteps, 0.0, {}, False)

        callback = SelfPlayCallback(
            run_dir,
            snapshot_every=config.opponents.snapshot_every,
            checkpoint_every=config.checkpoint_every,
            win_rate_window=config.win_rate_window,
            save_periodic=lambda steps: save("periodic", steps),
            max_minutes=config.max_minutes,
            initial_snapshots=load_snapshots(run_dir / "snapshots", config.opponents.snapshot_window),
        )
        if verbose:
            start = "starting" if checkpoint is None else f"resuming from {checkpoint} at step {resumed_at}"
            print(f"fowlplay-train: {config.game}, {start}; run directory {run_dir}", flush=True)

        # --- learning
        started = time.monotonic()
        try:
            model.learn(
                total_timesteps=remaining,
                callback=callback,
                reset_num_timesteps=checkpoint is None,
                progress_bar=config.progress_bar,
            )
        except KeyboardInterrupt:
            interrupted = True
            raise RunInterrupted(save("periodic", model.num_timesteps)) from None
        seconds = time.monotonic() - started

        # --- saving
        path = save("final", model.num_timesteps)
        return RunResult(
            run_dir, path, model.num_timesteps, seconds, callback.win_rates(), callback.out_of_time
        )
    finally:
        if interrupted and hasattr(vec_env, "waiting"):
            # Ctrl-C may land inside SubprocVecEnv.step_wait after some replies were read; close()
            # would then wait forever for them again. The workers exit on 'close' all the same.
            vec_env.waiting = False
        vec_env.close()
