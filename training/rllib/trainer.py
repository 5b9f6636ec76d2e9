"""One self-play run on Ray RLlib (`trainer: rllib`), top to bottom: Ray, the algorithm, the pool,
learning, saving. `run(config, run_dir, checkpoint)` starts or resumes one; `fowlplay.training.train`
calls it when the config says `trainer: rllib`. The run's scaffolding (stop signals, progress, logs,
the cadence of snapshots, evaluations and checkpoints, the best checkpoint) is `training.loop`'s.

Multi-agent PPO on RLlib's current API stack: one trained module (`learner`, masked logits) and
frozen ones (`random`, `baseline`, `latest`, `snapshot_<i>`) that a policy-mapping function seats per
episode (env.py). After every iteration `latest` takes the learner's weights, as SB3's pool refreshes
it every rollout; every `opponents.snapshot_every` decisions a snapshot slot does. Budgets count the
learner's decisions, as the SB3 trainer does.

A checkpoint is ours (`<stem>.npz` + `<stem>.json`, what `fowlplay-eval` loads) plus RLlib's whole
state (`rllib/<name>/`, what `--resume` loads); the `.json` is written last and names the state.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from fowlplay import envs
from fowlplay.envs.runtime.stopping import signal_of
from fowlplay.training import manifest
from fowlplay.training.checkpoint import CheckpointError, CheckpointWarning, export_checkpoint, read_metadata
from fowlplay.training.config import ConfigError, TrainConfig
from fowlplay.training.loop import (
    Cadence,
    Evaluations,
    RunLog,
    RunResult,
    StopSignals,
    drive,
    write_config,
)
from fowlplay.training.snapshots import save_snapshot

#: Logged per iteration in logs/progress*.csv (and TensorBoard), besides the win rates.
LOG_COLUMNS = (
    "timesteps",
    "iteration",
    "seconds",
    "decisions_per_s",
    "episodes",
    "policy_loss",
    "vf_loss",
    "entropy",
)
OPPONENT_LABELS = ("random", "baseline", "latest", "snapshot", "mixed")
LOG_COLUMNS_ALL = [*LOG_COLUMNS, *(f"win_rate_{label}" for label in OPPONENT_LABELS)]


def _ray():
    try:
        import ray
        from ray.rllib.algorithms.ppo import PPOConfig  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            f"trainer: rllib needs Ray RLlib ({exc.name} is missing): pip install 'fowlplay[rllib]'"
        ) from None
    return ray


# ----- Ray and the algorithm -------------------------------------------------------------------
def start_ray(config: TrainConfig) -> bool:
    """Join the cluster at `rllib.address`, or start Ray on this machine; True if started here."""
    ray = _ray()
    if ray.is_initialized():
        return False
    settings: dict[str, Any] = {
        "include_dashboard": False,
        "logging_level": "WARNING",
        "log_to_driver": False,
    }
    if config.rllib.address:
        join_cluster(ray, config.rllib.address, settings)
    else:
        # Workers use one torch thread each: OpenMP threads waiting on busy cores cost an order of
        # magnitude (docs/training.md, Speed).
        # Ray's CPU count is a budget for placing actors, not a limit on threads: the trainer
        # process and each env runner and learner actor take one, or Ray waits forever for them.
        needed = 1 + config.rllib.num_env_runners + config.rllib.num_learners
        if config.rllib.num_cpus is not None and config.rllib.num_cpus < needed:
            raise ConfigError(
                f"rllib.num_cpus {config.rllib.num_cpus} is too few for the trainer, "
                f"{config.rllib.num_env_runners} env runner(s) and {config.rllib.num_learners} "
                f"learner(s): they need {needed}"
            )
        ray.init(
            num_cpus=config.rllib.num_cpus or max(os.cpu_count() or 1, needed),
            runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}},
            **settings,
        )
    return True


def join_cluster(ray, address: str, settings: dict[str, Any]) -> None:
    """`ray.init(address=...)`, with one line for a wrong address, a missing or wrong token, or a node
    that cannot import fowlplay (Ray's own messages are pages of logs)."""
    unreachable = _unreachable(address)
    if unreachable:
        raise ConfigError(
            f"cannot join a Ray cluster at {address} ({unreachable}); start one with `ray start --head` "
            "and pass the address it prints (HOST:PORT), or 'auto' on a node of the cluster"
        )
    try:
        ray.init(address=address, **settings)
    except Exception as exc:  # Ray raises ConnectionError, AuthenticationError, RuntimeError, ...
        text = f"{type(exc).__name__}: {exc}"
        if "auth" in text.lower() or "token" in text.lower():
            raise ConfigError(
                f"the Ray cluster at {address} refused this client's authentication token (or it has "
                "none): copy the head node's token (ray get-auth-token, or its ~/.ray/auth_token) to "
                "~/.ray/auth_token here, or set RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH, with "
                "RAY_AUTH_MODE=token (docs/scaling.md)"
            ) from None
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(
            f"cannot join a Ray cluster at {address} ({first}); start one with `ray start --head` "
            "and pass the address it prints (HOST:PORT), or 'auto' on a node of the cluster"
        ) from None
    missing = nodes_without_fowlplay(ray)
    if missing:
        ray.shutdown()
        where = "; ".join(f"{ip}: {why}" for ip, why in missing)
        raise ConfigError(
            f"Ray cluster at {address}: node(s) cannot import fowlplay ({where}); install the same "
            "fowlplay[train,rllib] in the Python that runs `ray start` on every node (docs/scaling.md)"
        )


def _unreachable(address: str, timeout: float = 10.0) -> str | None:
    """Why nothing answers at HOST:PORT (Ray itself retries a dead address for minutes); None if
    something does, or for 'auto'."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    if address == "auto" or not host or not port.isdigit():
        return None
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__


def nodes_without_fowlplay(ray, timeout: float = 120.0) -> list[tuple[str, str]]:
    """(node address, error) of every live node where a worker cannot import fowlplay's games and
    trainer: a zero-CPU task pinned to each node tries."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    @ray.remote(num_cpus=0, max_retries=0)
    def probe() -> str:
        import fowlplay.envs

        # What an env runner imports.
        import fowlplay.training.rllib.env

        return fowlplay.envs.__version__

    nodes = [node for node in ray.nodes() if node.get("Alive")]
    tasks = {
        node["NodeManagerAddress"]: probe.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)
        ).remote()
        for node in nodes
    }
    missing = []
    for address, task in tasks.items():
        try:
            ray.get(task, timeout=timeout)
        except Exception as exc:  # the task's ImportError arrives wrapped in a RayTaskError
            cause = getattr(exc, "cause", None) or exc
            lines = str(cause).strip().splitlines()
            missing.append((address, f"{type(cause).__name__}: {lines[-1] if lines else ''}"))
    return missing


def env_runner_nodes(algo) -> list[str]:
    """The node address of every remote env runner, as Ray reports it inside each runner."""
    import ray

    if not algo.config.num_env_runners:
        return []
    return sorted(
        algo.env_runner_group.foreach_env_runner(
            lambda runner: ray.util.get_node_ip_address(), local_env_runner=False
        )
    )


def module_specs(config: TrainConfig, aec) -> dict[str, Any]:
    """Module id -> RLModuleSpec of every seat kind: the learner, its frozen copies, random, baseline."""
    from fowlplay.training.rllib.env import LEARNER, snapshot_module
    from fowlplay.training.rllib.modules import BaselineModule, MaskedMLPModule, RandomModule
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    agent = aec.possible_agents[0]
    spaces = {"observation_space": aec.observation_space(agent), "action_space": aec.action_space(agent)}
    network = {"net_arch": list(config.ppo.net_arch), "activation": config.ppo.activation}
    masked = [LEARNER, "latest", *(snapshot_module(i) for i in range(config.opponents.snapshot_window))]
    specs = {
        mid: RLModuleSpec(module_class=MaskedMLPModule, model_config=network, **spaces) for mid in masked
    }
    specs["random"] = RLModuleSpec(module_class=RandomModule, model_config={}, **spaces)
    specs["baseline"] = RLModuleSpec(
        module_class=BaselineModule,
        model_config={"game": config.game, "env_options": dict(config.env_options)},
        **spaces,
    )
    return specs


def decisions_per_batch(config: TrainConfig, seats: int) -> int:
    """Env steps per update: `ppo.n_steps * n_envs` learner decisions, as in the SB3 trainer."""
    return config.ppo.n_steps * config.n_envs * seats


def algorithm_config(config: TrainConfig, aec):
    """The RLlib PPOConfig of a run (new API stack, one trained module)."""
    from fowlplay.training.rllib.env import LEARNER, FowlplayMultiAgentEnv, PolicyMapping
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    ppo, ray = config.ppo, config.rllib
    seats = len(aec.possible_agents)
    batch = decisions_per_batch(config, seats)
    learners = max(1, ray.num_learners)
    lr: Any = ppo.learning_rate
    if ppo.lr_schedule == "linear":
        # RLlib's schedules count env steps, every seat's: the learner makes about 1/seats of them.
        lr = [[0, ppo.learning_rate], [config.total_timesteps * seats, 0.0]]
    specs = module_specs(config, aec)
    mapping = PolicyMapping(aec.possible_agents, config.seed, config.learner_seat, config.opponents.weights())
    return (
        PPOConfig()
        .environment(
            FowlplayMultiAgentEnv,
            env_config={
                "game": config.game,
                "env_options": config.training_options(),
                "truncation_reward": config.truncation_reward,
            },
        )
        .framework("torch")
        .env_runners(
            num_env_runners=ray.num_env_runners,
            num_envs_per_env_runner=ray.envs_per_env_runner,
            custom_resources_per_env_runner=dict(ray.env_runner_resources),
            rollout_fragment_length="auto",
        )
        .learners(num_learners=ray.num_learners)
        .multi_agent(policies=set(specs), policy_mapping_fn=mapping, policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(
            lr=lr,
            gamma=ppo.gamma,
            lambda_=ppo.gae_lambda,
            clip_param=ppo.clip_range,
            entropy_coeff=ppo.ent_coef,
            vf_loss_coeff=ppo.vf_coef,
            grad_clip=ppo.max_grad_norm,
            grad_clip_by="global_norm",
            num_epochs=ppo.n_epochs,
            minibatch_size=ppo.batch_size,
            train_batch_size_per_learner=max(ppo.batch_size, batch // learners),
            use_kl_loss=False,  # SB3's PPO has no KL penalty, only the clipped ratio
            vf_clip_param=float("inf"),
        )
        .callbacks(on_episode_end=_EpisodeOutcome(config.win_rate_window))
        .debugging(seed=config.seed, log_level="ERROR")
    )


class _EpisodeOutcome:
    """`on_episode_end`: logs whether the learner won, keyed by the kind of opponents it met."""

    def __init__(self, window: int) -> None:
        self.window = window

    def __call__(self, *, episode, metrics_logger=None, **kwargs: Any) -> None:
        from fowlplay.training.rllib.env import LEARNER

        if metrics_logger is None:
            return
        modules = {agent: episode.module_for(agent) for agent in episode.agent_episodes}
        learner = [agent for agent, module in modules.items() if module == LEARNER]
        if not learner:
            return
        kinds = {module.split("_")[0] for agent, module in modules.items() if agent != learner[0]}
        label = kinds.pop() if len(kinds) == 1 else "mixed"
        won = episode.agent_episodes[learner[0]].get_return() > 0
        metrics_logger.log_value(f"win_rate_{label}", float(won), window=self.window)


# ----- moving weights between modules ----------------------------------------------------------
def learner_weights(algo) -> dict[str, np.ndarray]:
    """The learner module's weights (numpy), named as our checkpoint's weights file names them."""
    from fowlplay.training.rllib.env import LEARNER

    state = algo.learner_group.get_weights([LEARNER])[LEARNER]
    return {name: np.asarray(value).copy() for name, value in state.items()}


def set_frozen(algo, module_id: str, weights: dict[str, np.ndarray]) -> None:
    """Give the frozen module `module_id` these weights, on the learners and on every env runner."""
    algo.learner_group.set_weights({module_id: weights})
    algo.env_runner_group.foreach_env_runner(
        lambda runner, mid=module_id, w=weights: runner.module[mid].set_state(w)
    )


def announce_snapshots(algo, ready: int) -> None:
    """Tell every env runner's policy-mapping function how many snapshot slots hold a learner."""
    from fowlplay.training.rllib.env import set_snapshots_ready

    algo.env_runner_group.foreach_env_runner(lambda runner, n=ready: set_snapshots_ready(n))


# ----- checkpoints -----------------------------------------------------------------------------
def save(
    algo,
    aec,
    config: TrainConfig,
    run_dir: Path,
    stem: Path,
    timesteps: int,
    kind: str,
    pool: dict,
    extra: dict | None = None,
) -> Path:
    """Write RLlib's state, then our weights file, then the metadata (last: the checkpoint is complete)."""
    import shutil

    from fowlplay.training.rllib.env import LEARNER

    state_dir = run_dir / "rllib" / stem.name
    tmp = state_dir.with_name(state_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    algo.save_to_path(str(tmp.resolve()))
    shutil.rmtree(state_dir, ignore_errors=True)
    os.replace(tmp, state_dir)
    # RLlib's state is pickled: a resume restores only files the run's record says it wrote.
    manifest.record(run_dir, sorted(p for p in state_dir.rglob("*") if p.is_file()))

    facts = {"state": str(state_dir.relative_to(run_dir)), "module": LEARNER, **pool}
    weights = learner_weights(algo)
    return export_checkpoint(aec, config, stem, weights, timesteps, kind, facts, extra, run_dir=run_dir)


# ----- the run ---------------------------------------------------------------------------------
def run(
    config: TrainConfig,
    run_dir: Path,
    checkpoint: Path | None = None,
    verbose: bool = True,
    trust_checkpoint: bool = False,
):
    """Train (or resume from `checkpoint`) up to `total_timesteps` learner decisions; a `RunResult`.

    RLlib's state is pickled, so a resume restores it only when the run's record
    (`training.manifest`) says this user's fowlplay wrote every file of it, unless `trust_checkpoint`.
    """
    import torch

    ray = _ray()
    if config.max_decisions is not None:
        warnings.warn(
            f"max_decisions {config.max_decisions} is not applied with trainer: rllib; games end by "
            "their own caps (set max_decisions: null to silence this)",
            CheckpointWarning,
            stacklevel=2,
        )
    torch.set_num_threads(config.torch_threads)
    aec = envs.make(config.game, **config.env_options)
    pool = {"snapshots_ready": 0, "snapshots_taken": 0}
    timesteps, state = 0, None
    if checkpoint is not None:
        timesteps, pool, state = _resume_state(checkpoint, run_dir, pool, trust_checkpoint)

    started_ray = start_ray(config)
    algo = None
    with StopSignals() as signals:
        try:
            algo = _algorithm(config, aec, run_dir, pool, state)
            runner_nodes = env_runner_nodes(algo)
            with signals.hold():
                write_config(config, run_dir)
            if verbose:
                start = (
                    "starting" if checkpoint is None else f"resuming from {checkpoint} at step {timesteps}"
                )
                where = config.rllib.address or "a local Ray"
                print(f"fowlplay-train (rllib): {config.game}, {start} on {where}; run directory {run_dir}")
                if runner_nodes:
                    print(f"fowlplay-train (rllib): env runners on node(s) {', '.join(runner_nodes)}")
            return _learn(config, run_dir, aec, algo, pool, timesteps, signals, checkpoint, runner_nodes)
        finally:
            with signals.hold(stop_after=False):
                if algo is not None:
                    algo.stop()
                if started_ray:
                    ray.shutdown()


def _resume_state(checkpoint: Path, run_dir: Path, pool: dict, trust_checkpoint: bool):
    """(timesteps, pool counters, RLlib state folder) of the checkpoint a run resumes from, whose
    state files the run's record must vouch for (unless `trust_checkpoint`)."""
    metadata = read_metadata(checkpoint)
    state = metadata.get("rllib", {}).get("state")
    if metadata.get("trainer") != "rllib" or not state or not (run_dir / state).is_dir():
        raise CheckpointError(
            f"checkpoint {checkpoint} holds no RLlib state (rllib/<name>/) to resume from; it was "
            "not written by trainer: rllib, or its rllib folder is gone"
        )
    state_files = sorted(p for p in (run_dir / state).rglob("*") if p.is_file() or p.is_symlink())
    try:
        manifest.verify(run_dir, state_files, trust_checkpoint)
    except manifest.ManifestError as exc:
        raise CheckpointError(str(exc)) from None
    timesteps = int(metadata["timesteps"])
    pool = {key: int(metadata["rllib"].get(key, 0)) for key in pool}
    return timesteps, pool, metadata["rllib"]["state"]


def _algorithm(config: TrainConfig, aec, run_dir: Path, pool: dict, state: str | None):
    """The algorithm, built and (given a resumed run's `state` folder) restored, its frozen modules
    on every env runner."""
    from fowlplay.training.rllib.env import snapshot_module

    algo = algorithm_config(config, aec).build_algo()
    if state is not None:
        algo.restore_from_path(str((run_dir / state).resolve()))
        # Frozen modules are not synced by PPO: send the restored ones to every env runner.
        for mid in ["latest", *(snapshot_module(i) for i in range(pool["snapshots_ready"]))]:
            set_frozen(algo, mid, algo.learner_group.get_weights([mid])[mid])
    else:
        set_frozen(algo, "latest", learner_weights(algo))
    announce_snapshots(algo, pool["snapshots_ready"])
    return algo


def _learn(
    config: TrainConfig,
    run_dir: Path,
    aec,
    algo,
    pool: dict,
    timesteps: int,
    signals: StopSignals,
    checkpoint: Path | None,
    runner_nodes: list[str],
) -> RunResult:
    """Learning, on the run's cadence, then the final evaluation and checkpoint."""

    def checkpoint_now(kind: str, steps: int, extra: dict | None = None) -> Path:
        stem = run_dir / "final" if kind == "final" else run_dir / "checkpoints" / f"step_{steps}"
        with signals.hold(stop_after=kind == "periodic"):
            return save(algo, aec, config, run_dir, stem, steps, kind, pool, extra)

    def save_best(steps: int, weights: dict, learning: bool) -> None:
        # The best weights only (RLlib's state stays with the periodic checkpoints).
        extra = {"evaluation": evaluations.best.best}
        export_checkpoint(aec, config, run_dir / "best", weights, steps, "best", {}, extra, run_dir=run_dir)

    evaluations = Evaluations(run_dir, aec, config, signals, save_best)
    cadence = Cadence(timesteps)
    # Snapshots and periodic checkpoints fall due one period after the last (an iteration's size varies).
    cadence.every(
        config.opponents.snapshot_every,
        lambda steps: _snapshot(algo, config, run_dir, pool, steps, signals),
        catch_up=False,
    )
    cadence.every(config.eval_every, lambda steps: evaluations.evaluate(steps, learner_weights(algo)))
    cadence.every(config.checkpoint_every, lambda steps: checkpoint_now("periodic", steps), catch_up=False)
    writer = _summary_writer if config.tensorboard else None
    log = RunLog(run_dir, None if checkpoint is None else timesteps, LOG_COLUMNS_ALL, "rllib", writer)
    win_rates: dict[str, float] = {}

    def update() -> tuple[int, dict]:
        nonlocal win_rates
        result = algo.train()
        runners = result.get("env_runners", {})
        steps = int(_finite(runners.get("num_module_steps_sampled", {}).get("learner"), 0))
        set_frozen(algo, "latest", learner_weights(algo))
        # The iteration's episodes (RLlib reduces its metrics per iteration); NaN: none.
        win_rates = {
            label: float(runners[f"win_rate_{label}"])
            for label in OPPONENT_LABELS
            if not np.isnan(float(runners.get(f"win_rate_{label}", np.nan)))
        }
        return steps, _log_values(result, win_rates)

    def on_stop(stop: KeyboardInterrupt, steps: int) -> Path:
        signals.received = signals.received or signal_of(stop)
        return checkpoint_now("periodic", steps)

    timesteps, seconds, out_of_time = drive(config, timesteps, update, cadence, log, signals, on_stop)
    evaluations.evaluate_last(timesteps, learner_weights(algo))
    picked = evaluations.picked()
    path = checkpoint_now("final", timesteps, {"best": picked, "env_runner_nodes": runner_nodes})
    return RunResult(run_dir, path, timesteps, seconds, win_rates, out_of_time, picked)


def _snapshot(
    algo, config: TrainConfig, run_dir: Path, pool: dict, timesteps: int, signals: StopSignals
) -> None:
    """The learner's weights into the next snapshot slot (round robin), saved, and announced."""
    from fowlplay.training.rllib.env import snapshot_module

    slot = pool["snapshots_taken"] % config.opponents.snapshot_window
    weights = learner_weights(algo)
    set_frozen(algo, snapshot_module(slot), weights)
    with signals.hold():
        save_snapshot(run_dir / "snapshots", timesteps, weights)
    pool["snapshots_taken"] += 1
    pool["snapshots_ready"] = min(pool["snapshots_taken"], config.opponents.snapshot_window)
    announce_snapshots(algo, pool["snapshots_ready"])


def _finite(value: Any, default: Any) -> Any:
    """`value` as a float, or `default` when RLlib reports none (missing, or NaN: no data this iteration)."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return default
    return value if np.isfinite(value) else default


def _log_values(result: dict, win_rates: dict[str, float]) -> dict[str, Any]:
    """An iteration's row of logs/progress.csv after its first columns (`training.loop.RunLog`)."""
    learner = result.get("learners", {}).get("learner", {})
    return {
        "episodes": int(_finite(result.get("env_runners", {}).get("num_episodes"), 0)),
        **{key: _finite(learner.get(key), "") for key in ("policy_loss", "vf_loss", "entropy")},
        **{f"win_rate_{label}": rate for label, rate in win_rates.items()},
    }


def _summary_writer(folder: str):
    from tensorboardX import SummaryWriter

    return SummaryWriter(folder)
