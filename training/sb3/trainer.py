"""The SB3 trainers (`trainer: ppo`, `psro`, `dqn`), top to bottom: environments, learner,
learning, saving. `run(config, run_dir, checkpoint)` starts or resumes one; `training.train` calls it.

`ppo` is MaskablePPO against the opponent pool; `psro` the same, the pool's weights set by a
meta-solver (`training.sb3.psro`); `dqn` SB3's DQN with the action mask (`training.sb3.dqn`). The run's
scaffolding (stop signals, the cadence of snapshots, evaluations and checkpoints, the best
checkpoint) is `training.loop`'s; the callback (`training.sb3.callbacks`) fires the cadence.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import signal
import time
import warnings
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from fowlplay import envs
from fowlplay.envs.runtime.stopping import STOP_SIGNALS, signal_of
from fowlplay.envs.runtime.untrusted import UntrustedFileError, check_members, open_zip, parse_json
from fowlplay.training import manifest
from fowlplay.training.checkpoint import (
    ZIP_MEMBERS,
    CheckpointError,
    CheckpointWarning,
    load_checkpoint,
    make_metadata,
    network_of,
    read_metadata,
    save_checkpoint,
    training_zip,
    weights_sha256,
)
from fowlplay.training.config import ConfigError, TrainConfig
from fowlplay.training.loop import Evaluations, RunInterrupted, RunResult, StopSignals, log_name, write_config

#: Builds the opponent pool of one SelfPlayEnv from its AEC env (anything with the pool's
#: `draw(rng)`, `set_latest`, `add_snapshot` and `snapshot_names`); `fowlplay-exploit` seats a fixed agent.
PoolFactory = Callable[[Any], Any]


# ----- environments ---------------------------------------------------------------------------
def _worker_env(torch_threads: int, pool_factory: PoolFactory | None = None, **kwargs: Any):
    """Build one SelfPlayEnv (in a subprocess worker, or in-process for 'dummy')."""
    from fowlplay.training.sb3.selfplay import SelfPlayEnv
    from stable_baselines3.common.monitor import Monitor

    if multiprocessing.parent_process() is not None:
        # Ctrl-C (and `timeout`'s SIGTERM) reach the whole process group; only the trainer should
        # handle them, so that it can still talk to its workers while saving.
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
        import torch

        torch.set_num_threads(torch_threads)
    env = SelfPlayEnv(**kwargs)
    if pool_factory is not None:
        env.pool = pool_factory(env.aec)
    return Monitor(env)


def _quiet_worker(remote, parent_remote, env_fn_wrapper) -> None:
    """SB3's SubprocVecEnv worker loop, ending without a traceback when the trainer is gone (killed,
    or stopped while this worker's reply was on its way): a broken pipe then is not the worker's
    error, and the trainer says what happened."""
    from stable_baselines3.common.vec_env import subproc_vec_env

    worker = getattr(subproc_vec_env, "_fowlplay_sb3_worker", subproc_vec_env._worker)
    with contextlib.suppress(BrokenPipeError, ConnectionResetError, EOFError, KeyboardInterrupt):
        worker(remote, parent_remote, env_fn_wrapper)


def subproc_vec_env(factories: list, start_method: str):
    """SB3's SubprocVecEnv whose workers run `_quiet_worker` (the worker function it starts is its
    module's `_worker`, looked up when each process starts, so it is swapped for the start only)."""
    from stable_baselines3.common.vec_env import SubprocVecEnv
    from stable_baselines3.common.vec_env import subproc_vec_env as module

    original = module._worker
    module._fowlplay_sb3_worker = original
    module._worker = _quiet_worker
    try:
        return SubprocVecEnv(factories, start_method=start_method)
    finally:
        module._worker = original


class WorkerDiedError(OSError):
    """An environment worker process of the trainer died (killed, out of memory); the message names it."""


def dead_workers(vec_env, wait: float = 2.0) -> list[str]:
    """'pid 123 (killed by SIGKILL)' for every subprocess worker of `vec_env` that is gone, waiting
    up to `wait` seconds for one to be reported gone (its pipe can close before its exit is known)."""
    processes = getattr(getattr(vec_env, "unwrapped", vec_env), "processes", [])
    deadline = time.monotonic() + wait
    while processes and all(p.is_alive() for p in processes) and time.monotonic() < deadline:
        time.sleep(0.05)
    dead = []
    for process in processes:
        if process.is_alive():
            continue
        code = process.exitcode
        how = (
            f"killed by {signal.Signals(-code).name}"
            if code is not None and code < 0
            else f"exit status {code}"
        )
        dead.append(f"pid {process.pid} ({how})")
    return dead


def close_vec_env(vec_env) -> None:
    """Close the environments; subprocess workers that do not exit (a sibling died, so the close
    was never sent to them) are killed rather than waited for."""
    with contextlib.suppress(OSError, EOFError):  # a dead worker's pipe: the others are dealt with below
        vec_env.close()
    inner = getattr(vec_env, "unwrapped", vec_env)
    for process in getattr(inner, "processes", []):
        process.join(timeout=2)
        if process.is_alive():
            process.kill()
            process.join()
    if hasattr(inner, "closed"):
        inner.closed = True


def make_vec_env(config: TrainConfig, pool_factory: PoolFactory | None = None):
    """The learner's vectorised SelfPlayEnvs, as the config asks; `pool_factory(aec_env)`, when
    given, replaces each environment's opponent pool (config.opponents is then unused)."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    factory = functools.partial(
        _worker_env,
        torch_threads=1,
        pool_factory=pool_factory,
        game=config.game,
        env_options=config.training_options(),
        opponents=config.opponents.weights(),
        learner_seat=config.learner_seat,
        truncation_reward=config.truncation_reward,
        decision_cost=config.decision_cost,
        shaping=config.shaping,
        gamma=config.gamma(),
        max_decisions=config.max_decisions,
        snapshot_window=config.opponents.snapshot_window,
        network=config.network(),
    )
    factories = [factory] * config.n_envs
    if config.vec_env == "batched":
        from fowlplay.training.sb3.vec_env import SelfPlayVecEnv
        from stable_baselines3.common.vec_env import VecMonitor

        kwargs = {k: v for k, v in factory.keywords.items() if k not in ("torch_threads", "pool_factory")}
        vec_env = SelfPlayVecEnv(config.n_envs, **kwargs)
        if pool_factory is not None:
            # One pool per environment, built on that environment's game (a search agent plans on it).
            for env in vec_env.envs:
                env.pool = pool_factory(env.aec)
        vec_env = VecMonitor(vec_env)
    elif config.vec_env == "dummy":
        vec_env = DummyVecEnv(factories)
    else:
        vec_env = subproc_vec_env(factories, config.start_method)
    if config.trainer == "dqn":
        from fowlplay.training.sb3.dqn import MaskedObservations

        # The DQN reads each state's mask from its observation (so the replay buffer keeps it).
        vec_env = MaskedObservations(vec_env)
    return vec_env


# ----- the learner --------------------------------------------------------------------------------
def hyperparameters(config: TrainConfig) -> dict[str, Any]:
    """The learner's hyperparameters of the config (all but the network's shape)."""
    from stable_baselines3.common.utils import LinearSchedule

    if config.trainer == "dqn":
        dqn = config.dqn
        names = (
            "learning_rate",
            "buffer_size",
            "learning_starts",
            "batch_size",
            "gamma",
            "train_freq",
            "gradient_steps",
            "target_update_interval",
            "exploration_fraction",
            "exploration_initial_eps",
            "exploration_final_eps",
            "max_grad_norm",
        )
        return {name: getattr(dqn, name) for name in names}
    ppo = config.ppo
    # SB3 calls a schedule with the fraction of total_timesteps still to go (1 -> 0).
    rate = LinearSchedule(ppo.learning_rate, 0.0, 1.0) if ppo.lr_schedule == "linear" else ppo.learning_rate
    return {
        "learning_rate": rate,
        "n_steps": ppo.n_steps,
        "batch_size": ppo.batch_size,
        "n_epochs": ppo.n_epochs,
        "gamma": ppo.gamma,
        "gae_lambda": ppo.gae_lambda,
        "clip_range": ppo.clip_range,
        "ent_coef": ppo.ent_coef,
        "vf_coef": ppo.vf_coef,
        "max_grad_norm": ppo.max_grad_norm,
        "target_kl": ppo.target_kl,
    }


def torch_device(requested: str) -> str:
    """The torch device to train on: the one asked for, or the CPU (said out loud) when this torch
    or machine does not have it."""
    import torch

    kind, _, index = requested.partition(":")
    if kind == "cuda":
        if not torch.cuda.is_available():
            built = "this torch build has no CUDA" if torch.version.cuda is None else "no CUDA GPU is visible"
            warnings.warn(f"device {requested!r}: {built}; training on the CPU instead", CheckpointWarning, 2)
            return "cpu"
        if index and int(index) >= torch.cuda.device_count():
            raise ConfigError(
                f"device {requested!r}: this machine has {torch.cuda.device_count()} CUDA device(s), "
                f"cuda:0..cuda:{torch.cuda.device_count() - 1}"
            )
    if kind == "mps" and not torch.backends.mps.is_available():
        warnings.warn("device 'mps': not available here; training on the CPU instead", CheckpointWarning, 2)
        return "cpu"
    return requested


def make_model(config: TrainConfig, vec_env, device: str | None = None):
    """A fresh learner for the config: MaskablePPO (ppo, psro) or the masked DQN (dqn)."""
    from fowlplay.training.policy import policy_kwargs
    from sb3_contrib import MaskablePPO

    if config.trainer == "dqn":
        from fowlplay.training.sb3.dqn import MaskedDQN, MaskedDQNPolicy

        kwargs = policy_kwargs(config.dqn.net_arch, config.dqn.activation)
        return MaskedDQN(
            MaskedDQNPolicy,
            vec_env,
            **hyperparameters(config),
            policy_kwargs=kwargs,
            seed=config.seed,
            device=device or config.device,
        )
    ppo = config.ppo
    return MaskablePPO(
        "MlpPolicy",
        vec_env,
        **hyperparameters(config),
        policy_kwargs=policy_kwargs(ppo.net_arch, ppo.activation),
        seed=config.seed,
        device=device or config.device,
    )


def _logger(run_dir: Path, config: TrainConfig, resumed_at: int | None):
    from stable_baselines3.common.logger import CSVOutputFormat, Logger, make_output_format

    logs = run_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    # SB3's CSV writer truncates its file, so a resumed run writes its own next to the first.
    formats = [CSVOutputFormat(str(logs / log_name(resumed_at)))]
    if config.tensorboard:
        formats.append(make_output_format("tensorboard", str(logs)))
    return Logger(folder=str(logs), output_formats=formats)


@contextlib.contextmanager
def unchecked_distributions(torch) -> Iterator[None]:
    """torch's argument checks of every distribution off for the block, and as they were after.

    SB3 builds a masked categorical distribution for every forward pass of the learner, and the
    checks (constraints on the logits, support of the actions) cost a quarter or more of a rollout
    step's forward pass on a batch of 16. They only check: the numbers are the same without them,
    and NaN probabilities still stop a run (torch's sampling refuses them).
    """
    distribution = torch.distributions.Distribution
    before = distribution._validate_args
    distribution.set_default_validate_args(False)
    try:
        yield
    finally:
        distribution.set_default_validate_args(before)


# ----- resuming ---------------------------------------------------------------------------------
def checkpoint_network(stem: Path, trust_checkpoint: bool = False) -> dict[str, Any]:
    """The `net_arch` and `activation` a checkpoint's model really has: its metadata's `policy`, or
    for an older checkpoint without one, with `trust_checkpoint`, the SB3 zip itself (unpickled)."""
    network = read_metadata(stem).get("policy")
    if isinstance(network, dict) and {"net_arch", "activation"} <= set(network):
        return {"net_arch": network["net_arch"], "activation": network["activation"]}
    if not trust_checkpoint:
        raise CheckpointError(
            f"checkpoint {stem} was written by an older fowlplay: only its SB3 zip, whose pickled data "
            "can run any code, describes its network; if you made it yourself, resume with --trust-checkpoint"
        )
    model, _ = load_checkpoint(stem)
    return network_of(model.policy)


def resumed_model(
    config: TrainConfig, vec_env, device: str, checkpoint: Path, trust_checkpoint: bool = False
):
    """The learner of the config with the training state of `checkpoint`, unpickling nothing
    (`restore_training_state`); an older checkpoint, whose metadata has no network, is loaded with
    SB3 (unpickled) only when `trust_checkpoint`."""
    if read_metadata(checkpoint, prefer_best=False).get("policy") is None:
        checkpoint_network(checkpoint, trust_checkpoint)  # refuses unless trusted
        model, _ = load_checkpoint(checkpoint, device=device, env=vec_env, **hyperparameters(config))
        return model
    model = make_model(config, vec_env, device)
    restore_training_state(model, checkpoint, device)
    return model


#: The counters of SB3's `data` a resume restores (plain JSON numbers; nothing there is unpickled).
_COUNTERS = ("num_timesteps", "_n_updates", "_episode_num", "_n_calls")


def restore_training_state(model, stem: str | Path, device: str = "cpu") -> dict[str, Any]:
    """Load a checkpoint's training state into `model`, a fresh learner built from the run's config,
    without unpickling anything; returns the checkpoint's metadata.

    From the SB3 zip it reads the tensors (`policy`, `policy.optimizer`, with torch's `weights_only`
    loader) and the plain counters of `data` (`num_timesteps`, ...); its pickled entries are never
    read. The zip's members are bounded by the network the metadata describes before any is read,
    and the weights it holds must be the ones the metadata's hash names (those of the `.npz`).
    What is pickled in `data` and so not restored is only logging: the last episodes' returns.
    """
    import io

    import torch
    from fowlplay.training.policy import playing_state

    metadata, network, zip_path, limit = training_zip(stem)
    json_path = zip_path.with_suffix(".json")
    try:
        with open_zip(zip_path, limit) as archive:
            check_members(zip_path, archive, limit, limit, allowed=ZIP_MEMBERS)
            names = set(archive.namelist())
            data = parse_json(archive.read("data"), f"{zip_path} entry 'data'") if "data" in names else {}
            tensors = {
                name[: -len(".pth")]: torch.load(
                    io.BytesIO(archive.read(name)), map_location=device, weights_only=True
                )
                for name in sorted(names)
                if name.endswith(".pth") and name != "pytorch_variables.pth"
            }
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint {zip_path} does not exist (its metadata does)") from None
    except (UntrustedFileError, OSError, zipfile.BadZipFile, EOFError, ValueError) as exc:
        raise CheckpointError(f"checkpoint {zip_path} is corrupt: {exc}") from None
    except Exception as exc:  # torch's weights-only unpickler refuses anything but tensors, in many ways
        raise CheckpointError(
            f"checkpoint {zip_path} is corrupt: {type(exc).__name__}: {_first_line(exc)}"
        ) from None
    if not isinstance(data, dict):
        raise CheckpointError(f"checkpoint {zip_path} is corrupt: its 'data' entry is not a JSON object")
    try:
        model.set_parameters(tensors, exact_match=True, device=device)
        _check_optimizer(model)
    except Exception as exc:  # missing or misshapen tensors: torch and SB3 raise several kinds
        raise CheckpointError(
            f"checkpoint {zip_path} does not fit the learner of this run's config: {type(exc).__name__}: "
            f"{_first_line(exc)}"
        ) from None
    if weights_sha256(playing_state(model)) != network["weights_sha256"]:
        raise CheckpointError(
            f"checkpoint {zip_path} holds other weights than {json_path.name} names (their sha256 "
            "differs): one of the two was replaced or damaged"
        )
    for name in _COUNTERS:
        value = data.get(name)
        if hasattr(model, name) and isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            setattr(model, name, value)
    rate = data.get("exploration_rate")  # a DQN's epsilon, until its schedule next sets it
    if hasattr(model, "exploration_rate") and isinstance(rate, float) and 0.0 <= rate <= 1.0:
        model.exploration_rate = rate
    if model.num_timesteps != metadata["timesteps"]:
        raise CheckpointError(
            f"checkpoint {zip_path} was saved at {model.num_timesteps} timesteps, but {json_path.name} "
            f"says {metadata['timesteps']}: one of the two was replaced or damaged"
        )
    return metadata


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else ""


def _check_optimizer(model) -> None:
    """Every optimizer moment has the shape of its parameter (torch checks only their number)."""
    optimizer = model.policy.optimizer
    for group in optimizer.param_groups:
        for parameter in group["params"]:
            for name, value in optimizer.state.get(parameter, {}).items():
                if hasattr(value, "shape") and value.dim() > 0 and value.shape != parameter.shape:
                    raise ValueError(
                        f"optimizer state {name} has shape {tuple(value.shape)}, its parameter {tuple(parameter.shape)}"
                    )


# ----- the run ---------------------------------------------------------------------------------
class _Saving:
    """One SB3 run's checkpoints and evaluations; `model` is the learner once it is built."""

    def __init__(self, config: TrainConfig, run_dir: Path, aec, signals: StopSignals) -> None:
        self.config, self.run_dir, self.aec, self.signals = config, run_dir, aec, signals
        self.config_dict = config.to_dict()
        self.model: Any = None
        self.evaluations = Evaluations(
            run_dir, aec, config, signals, self._save_best, on_scores=self._log_scores
        )

    def save(
        self, kind: str, timesteps: int, extra: dict[str, Any] | None = None, learning: bool = True
    ) -> Path:
        """Save a checkpoint of the learner (`kind`: final, best or periodic)."""
        stems = {"final": self.run_dir / "final", "best": self.run_dir / "best"}
        stem = stems.get(kind, self.run_dir / "checkpoints" / f"step_{timesteps}")
        metadata = {
            **make_metadata(self.aec, self.config_dict, self.config.seed, timesteps, kind),
            **(extra or {}),
        }
        # A stop signal during learning stops after the save (then a periodic checkpoint is saved).
        with self.signals.hold(stop_after=learning and kind != "final"):
            return save_checkpoint(self.model, stem, metadata, run_dir=self.run_dir)

    def _save_best(self, timesteps: int, weights: dict, learning: bool) -> None:
        self.save("best", timesteps, {"evaluation": self.evaluations.best.best}, learning)

    def _log_scores(self, scores: dict[str, float]) -> None:
        for name, score in scores.items():
            self.model.logger.record(f"eval/score_{name}", score)

    def evaluate(self, timesteps: int) -> None:
        """The periodic evaluation: the learner as evaluation will load it (`training.loop.Evaluations`)."""
        from fowlplay.training.policy import playing_state

        self.evaluations.evaluate(timesteps, playing_state(self.model))

    def finish(
        self, timesteps: int, seconds: float, win_rates: dict[str, float], out_of_time: bool
    ) -> RunResult:
        """Evaluate the last weights (unless they were just evaluated), save the final checkpoint."""
        from fowlplay.training.policy import playing_state

        self.evaluations.evaluate_last(timesteps, playing_state(self.model))
        picked = self.evaluations.picked()
        path = self.save("final", timesteps, {"best": picked}, learning=False)
        return RunResult(self.run_dir, path, timesteps, seconds, win_rates, out_of_time, picked)


def run(
    config: TrainConfig,
    run_dir: Path,
    checkpoint: Path | None = None,
    verbose: bool = True,
    pool_factory: PoolFactory | None = None,
    trust_checkpoint: bool = False,
) -> RunResult:
    """Train (or resume from `checkpoint`) up to `total_timesteps` learner decisions; a `RunResult`
    (`pool_factory`: see `make_vec_env`)."""
    import torch

    torch.set_num_threads(config.torch_threads)
    device = torch_device(config.device)
    aec = envs.make(config.game, **config.env_options)
    with StopSignals() as signals:
        saving = _Saving(config, run_dir, aec, signals)
        # --- environments and learner
        vec_env = make_vec_env(config, pool_factory)
        interrupted = False
        try:
            model, resumed_at = _learner(config, vec_env, device, checkpoint, trust_checkpoint)
            saving.model = model
            # Only now that the model exists is the config it was built from written down.
            with signals.hold():
                write_config(config, run_dir)
            model.set_logger(_logger(run_dir, config, resumed_at))
            remaining = config.total_timesteps - model.num_timesteps
            if remaining <= 0:
                return saving.finish(model.num_timesteps, 0.0, {}, False)
            callback = _callback(config, run_dir, aec, vec_env, saving, trust_checkpoint)
            if verbose:
                start = (
                    "starting" if checkpoint is None else f"resuming from {checkpoint} at step {resumed_at}"
                )
                print(
                    f"fowlplay-train: {config.game}, trainer {config.trainer}, {start}; run directory {run_dir}",
                    flush=True,
                )

            # --- learning
            started = time.monotonic()
            try:
                with unchecked_distributions(torch):
                    model.learn(
                        total_timesteps=remaining,
                        callback=callback,
                        reset_num_timesteps=checkpoint is None,
                        progress_bar=config.progress_bar,
                    )
            except KeyboardInterrupt as stop:
                interrupted = True
                signum = signal_of(stop)
                signals.received = signals.received or signum  # later signals are ignored
                raise RunInterrupted(saving.save("periodic", model.num_timesteps), signum) from None
            except (BrokenPipeError, ConnectionResetError, EOFError):
                dead = dead_workers(vec_env)
                if not dead:
                    raise
                interrupted = True
                saved = saving.save("periodic", model.num_timesteps, learning=False)
                raise WorkerDiedError(
                    f"an environment worker died ({', '.join(dead)}); saved {saved}"
                ) from None
            seconds = time.monotonic() - started

            # --- saving
            return saving.finish(model.num_timesteps, seconds, callback.win_rates(), callback.out_of_time)
        finally:
            if interrupted and hasattr(vec_env, "waiting"):
                # A signal may land inside SubprocVecEnv.step_wait after some replies were read;
                # close() would then wait forever for them again. The workers exit on 'close' all the same.
                vec_env.waiting = False
            with signals.hold(stop_after=False):
                close_vec_env(vec_env)


def _learner(config: TrainConfig, vec_env, device: str, checkpoint: Path | None, trust_checkpoint: bool):
    """(the learner, the step it resumed at, or None for a new run)."""
    if checkpoint is None:
        return make_model(config, vec_env, device), None
    # A learner built from the config (whose hyperparameters may have changed) with the
    # checkpoint's weights, optimizer state and counters.
    model = resumed_model(config, vec_env, device, checkpoint, trust_checkpoint)
    resumed_at = model.num_timesteps
    # A resumed run reseeds from where it stopped, so it does not replay its first games.
    model.set_random_seed(config.seed + resumed_at)
    if config.trainer == "dqn":
        # The replay buffer is not saved: refill it before the next update (training.sb3.dqn).
        model.refill_until = resumed_at + config.dqn.learning_starts
    return model, resumed_at


def _callback(config: TrainConfig, run_dir: Path, aec, vec_env, saving: _Saving, trust_checkpoint: bool):
    """The `SelfPlayCallback` of a run: its pool, snapshots (those of the run so far first), cadence
    and budget."""
    from fowlplay.training.policy import playing_state
    from fowlplay.training.sb3.callbacks import SelfPlayCallback
    from fowlplay.training.snapshots import load_snapshots

    shapes = {name: array.shape for name, array in playing_state(saving.model).items()}
    on_snapshot = None
    if config.trainer == "psro":
        on_snapshot = _meta_game(config, aec, run_dir, vec_env)
    return SelfPlayCallback(
        run_dir,
        snapshot_every=config.opponents.snapshot_every,
        checkpoint_every=config.checkpoint_every,
        win_rate_window=config.win_rate_window,
        save_periodic=lambda steps: saving.save("periodic", steps),
        max_minutes=config.max_minutes,
        initial_snapshots=load_snapshots(
            run_dir / "snapshots",
            config.opponents.snapshot_window,
            shapes,
            verify=None if trust_checkpoint else functools.partial(manifest.problem, run_dir),
        ),
        hold=saving.signals.hold,
        latest_every=config.dqn.latest_every if config.trainer == "dqn" else 0,
        on_snapshot=on_snapshot,
        eval_every=config.eval_every,
        evaluate=saving.evaluate,
    )


def _meta_game(config: TrainConfig, aec, run_dir: Path, vec_env):
    """`trainer: psro`: the meta-game, its first weights sent to the pool; returns the snapshot hook."""
    from fowlplay.training.sb3.psro import MetaGame

    weights = config.opponents.weights()
    meta = MetaGame(
        aec,
        network=config.network(),
        games=config.psro.meta_games,
        solver=config.psro.meta_solver,
        window=config.opponents.snapshot_window,
        latest_share=weights["latest"] / sum(weights.values()),
        seed=config.seed,
        log=run_dir / "logs" / "meta_game.jsonl",
    )

    def on_snapshot(name: str, state: dict, timesteps: int) -> None:
        meta.add(name, state, timesteps)
        vec_env.env_method("set_opponent_weights", *meta.weights())

    meta.estimate()
    vec_env.env_method("set_opponent_weights", *meta.weights())
    return on_snapshot
