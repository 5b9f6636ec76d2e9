"""One self-play training run, top to bottom: run directory, environments, learner, learning,
saving. `train(config)` starts a run; `resume(run_dir)` continues one.

`config.trainer` picks the learner: `ppo` (MaskablePPO against the pool), `psro` (the same, the
pool's weights set by a meta-solver, `training.psro`) or `dqn` (SB3's DQN with the action mask,
`training.dqn`). Every trainer writes the same checkpoints and keeps the best one (`training.ladder`).
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import shutil
import signal
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fowlplay import envs
from fowlplay.envs.runtime.files import atomic_write
from fowlplay.envs.runtime.lock import hold_folder
from fowlplay.envs.runtime.stopping import STOP_SIGNALS, Stop, signal_of
from fowlplay.envs.runtime.untrusted import UntrustedFileError, read_bytes
from fowlplay.training import manifest
from fowlplay.training.checkpoint import (
    CheckpointError,
    CheckpointWarning,
    checkpoint_files,
    load_checkpoint,
    make_metadata,
    network_of,
    read_metadata,
    resolve,
    restore_training_state,
    save_checkpoint,
    weights_sha256,
)
from fowlplay.training.config import ConfigError, TrainConfig, from_dict

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
#: Builds the opponent pool of one SelfPlayEnv from its AEC env (anything with the pool's
#: `draw(rng)`, `set_latest`, `add_snapshot` and `snapshot_names`); `fowlplay-exploit` seats a fixed agent.
PoolFactory = Callable[[Any], Any]


class RunInterrupted(KeyboardInterrupt):
    """A stop signal during training; `checkpoint` is the checkpoint saved before stopping."""

    def __init__(self, checkpoint: Path, signum: int = signal.SIGINT) -> None:
        super().__init__(f"training interrupted by {signal.Signals(signum).name}; saved {checkpoint}")
        self.checkpoint = checkpoint
        self.signum = signum


class StopSignals:
    """SIGINT and SIGTERM raise `Stop` in the trainer, but never in the middle of writing a file.

    Inside `hold()` a signal waits until the write is done; after the first signal every further one
    is ignored, so pressing Ctrl-C twice cannot cut the checkpoint being saved short. Handlers are
    only installed from the main thread (Python allows no other).
    """

    def __init__(self) -> None:
        self.received: int | None = None
        self._holding = 0
        self._pending = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            if handler is not None:  # None: a handler set outside Python, which cannot be restored
                signal.signal(signum, handler)

    def _handle(self, signum: int, frame: object) -> None:
        if self.received is not None:
            return  # already stopping: the checkpoint being written is finished first
        self.received = signum
        if self._holding:
            self._pending = True
        else:
            raise Stop(signum)

    @contextlib.contextmanager
    def hold(self, stop_after: bool = True) -> Iterator[None]:
        """Defer a stop signal until the body (a file write) is done; then stop if `stop_after`."""
        self._holding += 1
        try:
            yield
        finally:
            self._holding -= 1
        if stop_after and not self._holding and self._pending:
            self._pending = False
            raise Stop(self.received)


@dataclass
class RunResult:
    """What a finished run produced."""

    run_dir: Path
    checkpoint: Path
    timesteps: int
    seconds: float
    win_rates: dict[str, float]
    stopped_by_time: bool
    #: The best evaluation (timesteps, scores, score, checkpoint) when the run evaluated, else None.
    best: dict | None = None
    #: Seconds spent compiling before the first decision (trainer: jax), not counted in `seconds`.
    compile_seconds: float | None = None


# ----- environments ---------------------------------------------------------------------------
def _worker_env(torch_threads: int, pool_factory: PoolFactory | None = None, **kwargs: Any):
    """Build one SelfPlayEnv (in a subprocess worker, or in-process for 'dummy')."""
    from fowlplay.training.selfplay import SelfPlayEnv
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
        from fowlplay.training.vec_env import SelfPlayVecEnv
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
        from fowlplay.training.dqn import MaskedObservations

        # The DQN reads each state's mask from its observation (so the replay buffer keeps it).
        vec_env = MaskedObservations(vec_env)
    return vec_env


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
        from fowlplay.training.dqn import MaskedDQN, MaskedDQNPolicy

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
    """Save the resolved config as `<run_dir>/config.yaml` (whole or not at all)."""
    import yaml

    text = yaml.safe_dump(config.to_dict(), sort_keys=False).encode()
    atomic_write(run_dir / "config.yaml", lambda handle: handle.write(text))


def read_run_config(run_dir: Path, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """The config a run directory was started with, with `overrides` applied."""
    import yaml
    from fowlplay.training.config import apply_overrides

    path = run_dir / "config.yaml"
    if not path.exists():
        raise CheckpointError(f"{run_dir} is not a run directory: {path} does not exist")
    try:
        data = yaml.safe_load(read_bytes(path, MAX_CONFIG_BYTES).decode("utf-8"))
        if not isinstance(data, dict):
            raise ConfigError(f"expected a mapping of config keys, got {type(data).__name__}")
        return from_dict(apply_overrides(data, overrides or {}))
    except (yaml.YAMLError, ConfigError, UntrustedFileError, UnicodeDecodeError, RecursionError) as exc:
        raise CheckpointError(f"run config {path} is corrupt: {_first_line(exc)}") from None
    except OSError as exc:
        raise CheckpointError(f"run config {path} is unreadable: {exc.strerror or exc}") from None


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


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
def train(
    config: TrainConfig,
    overwrite: bool = False,
    verbose: bool = True,
    pool_factory: PoolFactory | None = None,
) -> RunResult:
    """Start a new run in `config.run_dir()` (`pool_factory`: see `make_vec_env`); the run holds the
    folder's lock (`training.lock`) until it ends."""
    run_dir = config.run_dir()
    with hold_folder(run_dir):
        prepare_run_dir(run_dir, overwrite)
        return _run(config, run_dir, checkpoint=None, verbose=verbose, pool_factory=pool_factory)


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


def resume(
    run_dir: str | Path,
    overrides: dict[str, Any] | None = None,
    verbose: bool = True,
    pool_factory: PoolFactory | None = None,
    trust_checkpoint: bool = False,
) -> RunResult:
    """Continue a run from its newest checkpoint up to its (possibly raised) total_timesteps.

    Any config key may change but the game, the seed and the network's shape (`NETWORK_KEYS`), which
    the checkpoint fixes; config.yaml is rewritten only once the checkpoint has loaded.
    `pool_factory` (see `make_vec_env`) must be the one the run started with. The checkpoint is
    loaded without unpickling anything, and only when the run's record (`training.manifest`) says
    this user's fowlplay wrote it, unless `trust_checkpoint`. The run holds the folder's lock.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise CheckpointError(f"run directory {run_dir} does not exist")
    with hold_folder(run_dir):
        return _resume(run_dir, overrides or {}, verbose, pool_factory, trust_checkpoint)


def _resume(
    run_dir: Path,
    overrides: dict[str, Any],
    verbose: bool,
    pool_factory: PoolFactory | None,
    trust_checkpoint: bool,
) -> RunResult:
    from fowlplay.training.config import NETWORK_KEYS

    config = read_run_config(run_dir, overrides)
    if config.run_dir().resolve() != run_dir.resolve():
        # The run may have been moved or copied: it continues where it is now.
        config.out = str(run_dir)
    checkpoint = resolve(run_dir, prefer_best=False)
    try:
        manifest.verify(run_dir, checkpoint_files(checkpoint), trust_checkpoint)
    except manifest.ManifestError as exc:
        raise CheckpointError(str(exc)) from None
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
    _warn_stretched_schedule(run_dir, config, trained_with.get("total_timesteps"))
    return _run(
        config,
        run_dir,
        checkpoint=checkpoint,
        verbose=verbose,
        pool_factory=pool_factory,
        trust_checkpoint=trust_checkpoint,
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


def _run(
    config: TrainConfig,
    run_dir: Path,
    checkpoint: Path | None,
    verbose: bool,
    pool_factory: PoolFactory | None = None,
    trust_checkpoint: bool = False,
) -> RunResult:
    if config.trainer == "rllib":
        if pool_factory is not None:
            raise ConfigError(
                "trainer rllib has no pool hook; fowlplay-exploit trains its best response with MaskablePPO"
            )
        # Ray RLlib's PPO (the rllib extra), imported only when asked for.
        from fowlplay.training.rllib.run import run

        return run(config, run_dir, checkpoint, verbose, trust_checkpoint=trust_checkpoint)
    if config.trainer == "jax":
        if pool_factory is not None:
            raise ConfigError(
                "trainer jax has no pool hook; fowlplay-exploit trains its best response with MaskablePPO"
            )
        # Masked PPO jitted on the batched twins (the jax extra), imported only when asked for.
        from fowlplay.training.jax_train import run as run_jax

        return run_jax(config, run_dir, checkpoint, verbose, trust_checkpoint=trust_checkpoint)
    import torch
    from fowlplay.training.callbacks import SelfPlayCallback, load_snapshots
    from fowlplay.training.ladder import BestCheckpoint, ladder_scores
    from fowlplay.training.policy import build_policy, load_policy_state, playing_state

    torch.set_num_threads(config.torch_threads)
    device = torch_device(config.device)
    aec = envs.make(config.game, **config.env_options)
    config_dict = config.to_dict()
    best = BestCheckpoint.of_run(run_dir)
    evaluated: list[str] = []  # the weights hash of each evaluation of this session

    with StopSignals() as signals:

        def save(
            kind: str, timesteps: int, extra: dict[str, Any] | None = None, learning: bool = True
        ) -> Path:
            stems = {"final": run_dir / "final", "best": run_dir / "best"}
            stem = stems.get(kind, run_dir / "checkpoints" / f"step_{timesteps}")
            metadata = {**make_metadata(aec, config_dict, config.seed, timesteps, kind), **(extra or {})}
            # A stop signal during learning stops after the save (then a periodic checkpoint is saved).
            with signals.hold(stop_after=learning and kind != "final"):
                return save_checkpoint(model, stem, metadata, run_dir=run_dir)

        def evaluate(timesteps: int, learning: bool = True) -> None:
            # The learner as evaluation will load it: its weights in a fresh CPU network.
            agent = aec.possible_agents[0]
            policy = build_policy(
                aec.observation_space(agent)["observation"], aec.action_space(agent), **config.network()
            )
            state = playing_state(model)
            load_policy_state(policy, state)
            evaluated.append(weights_sha256(state))
            scores = ladder_scores(aec, policy, config.eval_games)
            with signals.hold(stop_after=learning):
                better = best.record(timesteps, scores, config.eval_games)
            for name, score in scores.items():
                model.logger.record(f"eval/score_{name}", score)
            if better:
                save("best", timesteps, {"evaluation": best.best}, learning)

        def finish(
            timesteps: int, seconds: float, win_rates: dict[str, float], out_of_time: bool
        ) -> RunResult:
            # The last weights are evaluated too, so a final better than every earlier one is kept.
            # (A learner may take one more update after the last in-training evaluation.)
            # A stop signal now waits for it and the final save (learning is over: nothing is lost).
            if config.eval_every and (evaluated or [None])[-1] != weights_sha256(playing_state(model)):
                with signals.hold(stop_after=False):
                    evaluate(timesteps, learning=False)
            picked = None
            if best.best is not None and (run_dir / "best.json").exists():
                picked = {**best.best, "checkpoint": str(run_dir / "best")}
            path = save("final", timesteps, {"best": picked}, learning=False)
            return RunResult(run_dir, path, timesteps, seconds, win_rates, out_of_time, picked)

        # --- environments and learner
        vec_env = make_vec_env(config, pool_factory)
        interrupted = False
        try:
            if checkpoint is None:
                model, resumed_at = make_model(config, vec_env, device), None
            else:
                # A learner built from the config (whose hyperparameters may have changed) with the
                # checkpoint's weights, optimizer state and counters.
                model = resumed_model(config, vec_env, device, checkpoint, trust_checkpoint)
                resumed_at = model.num_timesteps
                # A resumed run reseeds from where it stopped, so it does not replay its first games.
                model.set_random_seed(config.seed + resumed_at)
                if config.trainer == "dqn":
                    # The replay buffer is not saved: refill it before the next update (training.dqn).
                    model.refill_until = resumed_at + config.dqn.learning_starts
            # Only now that the model exists is the config it was built from written down.
            with signals.hold():
                write_config(config, run_dir)
            model.set_logger(_logger(run_dir, config, resumed_at))
            remaining = config.total_timesteps - model.num_timesteps
            if remaining <= 0:
                return finish(model.num_timesteps, 0.0, {}, False)

            shapes = {name: array.shape for name, array in playing_state(model).items()}
            on_snapshot = None
            if config.trainer == "psro":
                on_snapshot = _meta_game(config, aec, run_dir, vec_env)
            callback = SelfPlayCallback(
                run_dir,
                snapshot_every=config.opponents.snapshot_every,
                checkpoint_every=config.checkpoint_every,
                win_rate_window=config.win_rate_window,
                save_periodic=lambda steps: save("periodic", steps),
                max_minutes=config.max_minutes,
                initial_snapshots=load_snapshots(
                    run_dir / "snapshots",
                    config.opponents.snapshot_window,
                    shapes,
                    verify=None if trust_checkpoint else functools.partial(manifest.problem, run_dir),
                ),
                hold=signals.hold,
                latest_every=config.dqn.latest_every if config.trainer == "dqn" else 0,
                on_snapshot=on_snapshot,
                eval_every=config.eval_every,
                evaluate=evaluate,
            )
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
                raise RunInterrupted(save("periodic", model.num_timesteps), signum) from None
            except (BrokenPipeError, ConnectionResetError, EOFError):
                dead = dead_workers(vec_env)
                if not dead:
                    raise
                interrupted = True
                saved = save("periodic", model.num_timesteps, learning=False)
                raise WorkerDiedError(
                    f"an environment worker died ({', '.join(dead)}); saved {saved}"
                ) from None
            seconds = time.monotonic() - started

            # --- saving
            return finish(model.num_timesteps, seconds, callback.win_rates(), callback.out_of_time)
        finally:
            if interrupted and hasattr(vec_env, "waiting"):
                # A signal may land inside SubprocVecEnv.step_wait after some replies were read;
                # close() would then wait forever for them again. The workers exit on 'close' all the same.
                vec_env.waiting = False
            with signals.hold(stop_after=False):
                close_vec_env(vec_env)


def _meta_game(config: TrainConfig, aec, run_dir: Path, vec_env):
    """`trainer: psro`: the meta-game, its first weights sent to the pool; returns the snapshot hook."""
    from fowlplay.training.psro import MetaGame

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
