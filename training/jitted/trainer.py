"""`trainer: jax`: run the jitted PPO of `training/jitted/ppo.py` as a fowlplay training run.

The same run directory as the other trainers: `final`, `best` and periodic checkpoints as `.npz`
(the network under SB3's names) + `.json` metadata, which every command loads as it loads a
MaskablePPO checkpoint; snapshots of the opponent pool; `logs/progress.csv` and TensorBoard; the
best checkpoint by the same periodic evaluation (the AEC reference games against random and the
baseline). Resuming reads only plain arrays (`<stem>.jax.npz`: the optimizer's state, the key and
the counters) that the run's signed record says it wrote; games in flight when a run stopped are
dealt again.
"""

from __future__ import annotations

import collections
import time
from pathlib import Path
from typing import Any

import numpy as np
from fowlplay import envs
from fowlplay.envs.runtime.files import atomic_write
from fowlplay.training import manifest
from fowlplay.training.checkpoint import CheckpointError, export_checkpoint, read_metadata
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
from fowlplay.training.snapshots import load_snapshots, save_snapshot

#: Columns of logs/progress.csv.
LOG_COLUMNS = (
    "timesteps",
    "iteration",
    "seconds",
    "decisions_per_s",
    "episodes",
    "policy_loss",
    "value_loss",
    "entropy",
    "approx_kl",
    "clip_fraction",
    "explained_variance",
    "win_rate",
    *(f"win_rate_{kind}" for kind in ("latest", "snapshot", "random", "baseline")),
)
_KINDS = ("latest", "snapshot", "random", "baseline")


def _jax():
    try:
        import jax
        import optax  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            f"trainer: jax needs JAX and optax ({exc.name} is missing): pip install 'fowlplay[jax]'"
        ) from None
    return jax


def embedding_of(config: TrainConfig, aec):
    """`jax.cell_embedding`'s `Embedding` of the game's grids piece, or None when it is 0."""
    from fowlplay.training.jitted.ppo import Embedding

    dim = config.jax.cell_embedding
    if not dim:
        return None
    observer = aec.unwrapped.observer
    table = getattr(observer, "table", None)
    if "grids" not in observer.offsets or table is None:
        raise ConfigError(
            f"jax.cell_embedding needs an observation with a grids piece of cells (murder_most_fowl_v0); "
            f"{config.game} has none: set it to 0"
        )
    span, features = observer.offsets["grids"], int(table.shape[1])
    if dim >= features:
        raise ConfigError(
            f"jax.cell_embedding must be smaller than a cell's {features} features (it replaces them by "
            f"fewer); got {dim}"
        )
    return Embedding(start=span.start, items=(span.stop - span.start) // features, features=features, dim=dim)


def settings_of(config: TrainConfig, num_players: int, embedding=None):
    """The jitted functions' `Settings` from a config (`embedding`: `embedding_of`'s)."""
    from fowlplay.training.jitted.ppo import Settings

    ppo, jx, pool = config.ppo, config.jax, config.opponents
    seat = None if config.learner_seat == "random" else int(config.learner_seat)
    baseline = 0.0 if jx.baseline == "off" else pool.baseline
    return Settings(
        num_envs=jx.num_envs,
        num_steps=jx.n_steps,
        net_arch=tuple(ppo.net_arch),
        activation=ppo.activation,
        gamma=ppo.gamma,
        gae_lambda=ppo.gae_lambda,
        clip_range=ppo.clip_range,
        ent_coef=ppo.ent_coef,
        vf_coef=ppo.vf_coef,
        max_grad_norm=ppo.max_grad_norm,
        n_epochs=ppo.n_epochs,
        minibatch_size=jx.num_envs * jx.n_steps // jx.num_minibatches,
        snapshot_slots=pool.snapshot_window,
        truncation_reward=config.truncation_reward,
        max_decisions=config.max_decisions,
        learner_seat=seat,
        opponent_weights=(pool.latest, pool.snapshot, pool.random, baseline),
        embedding=embedding,
        shaping=config.shaping,
        imitate_kl=config.jax.imitate_kl,
    )


def baseline_callback(config: TrainConfig, aec):
    """The game's Python baseline as a traced function (obs, mask, seat, wanted) -> action, through a
    host callback: the baseline's own decisions, at Python speed, for the rows `wanted` (the games
    that seat it, at an opponent's decision); the other rows get 0 without calling it."""
    import jax
    import jax.numpy as jnp

    agent = envs.env_module(config.game).BaselineAgent(aec.unwrapped.options, seed=config.seed)

    def decide(obs, mask, _seat, wanted):
        obs, mask, wanted = np.asarray(obs), np.asarray(mask), np.asarray(wanted)
        flat_obs, flat_mask = obs.reshape(-1, obs.shape[-1]), mask.reshape(-1, mask.shape[-1])
        actions = np.zeros(len(flat_obs), np.int32)
        for i in np.flatnonzero(wanted.reshape(-1)):
            actions[i] = agent.act(flat_obs[i], flat_mask[i].astype(np.int8))
        return actions.reshape(mask.shape[:-1])

    def baseline(obs, mask, seat, wanted):
        shape = jax.ShapeDtypeStruct(mask.shape[:-1], jnp.int32)
        return jax.pure_callback(decide, shape, obs, mask, seat, wanted, vmap_method="expand_dims")

    return baseline


def baseline_twin(config: TrainConfig, _aec=None):
    """The game's baseline as its JAX twin (`envs.make_jax_baseline`), in the trainer's batched
    signature (observations, masks, seats, wanted) -> actions: every row decides (a cheap traced
    function; the rows not wanted are discarded)."""
    import jax

    decide = jax.vmap(envs.make_jax_baseline(config.game, **config.env_options))

    def baseline(obs, mask, _seat, _wanted):
        return decide(obs, mask)

    return baseline


def learner_games(config: TrainConfig):
    """(the reference env, `LearnerGames`) of a config: what `run` trains on."""
    from fowlplay.training.jitted import ppo as J  # noqa: N812 - the module read as one short name

    aec = envs.make(config.game, **config.env_options)
    twin = envs.make_jax(config.game, **config.training_options())
    if config.shaping and not twin.has_potential:
        raise ConfigError(
            f"shaping: {config.game}'s JAX twin defines no potential to shape with; set shaping to 0 "
            "(or use trainer: ppo)"
        )
    s = settings_of(config, twin.num_players, embedding_of(config, aec))
    baseline = None
    if s.opponent_weights[J.BASELINE] > 0:
        make = baseline_twin if config.jax.baseline == "twin" else baseline_callback
        baseline = make(config, aec)
    return aec, J.LearnerGames(twin, s, baseline)


class TwinEvaluations(Evaluations):
    """The periodic evaluation against random and the baseline played on the batched twins: the
    same score as `training.ladder.ladder_scores` (the learner in one seat, the opponent in the
    others, every seat in turn over each deal; a game cut off by its cap lost), on deals of the twin
    fixed by `ladder.EVAL_SEED`, all games of one evaluation in one jitted call (compiled once:
    `compile`). The baseline is played by its twin where the config trains against the twin
    (`jax.baseline: twin`); otherwise (Murder Most Fowl's, whose baseline twin costs milliseconds a
    decision on a CPU) its rung keeps the Python games. It overrides `Evaluations.scores` alone:
    what is done with the scores (evaluation.csv, the best checkpoint) is unchanged."""

    def __init__(self, run_dir: Path, aec, config: TrainConfig, signals: StopSignals, save_best) -> None:
        super().__init__(run_dir, aec, config, signals, save_best)
        import jax
        from fowlplay.training.jitted import duplicate, policies
        from fowlplay.training.jitted.ppo import policy_logits
        from fowlplay.training.ladder import EVAL_SEED, LADDER

        twin = envs.make_jax(config.game, **config.env_options)  # the game's own rewards
        depth, activation = len(config.ppo.net_arch), config.ppo.activation

        def learner(observation, mask, key, weights):
            policy = lambda o, m: policy_logits(weights, o, m, depth, activation)  # noqa: E731
            return policies.sampling(policy)(observation, mask, key)

        actors = {"random": policies.uniform}
        if config.jax.baseline == "twin":
            actors["baseline"] = policies.baseline(config.game, **config.env_options)
        n = twin.num_players
        self.table = duplicate.one_vs_rest(n)
        matches = -(-self.games // n)  # every seat of each deal: at least eval_games games
        self.names = tuple(name for name in LADDER if name in actors)
        self._play = duplicate.make_play(
            twin,
            [learner, *(actors[name] for name in self.names)],
            [np.where(self.table == 0, 0, 1 + i) for i in range(len(self.names))],
            matches,
        )
        self._key = jax.random.PRNGKey(EVAL_SEED)
        self._duplicate = duplicate

    def compile(self, weights: dict[str, np.ndarray]) -> None:
        """Compile the evaluation's games ahead (so a run's `seconds` counts no compiling)."""
        self._play = self._play.lower(self._key, self._args(weights)).compile()

    def _args(self, weights: dict[str, np.ndarray]) -> tuple:
        import jax.numpy as jnp

        return (({name: jnp.asarray(value) for name, value in weights.items()},),) + ((),) * len(self.names)

    def scores(self, weights: dict[str, np.ndarray]) -> dict[str, float]:
        """The learner's score against each cheap rung: the twins' from one batched call, the rest
        from the Python games `ladder.ladder_scores` plays."""
        from fowlplay.training import ladder
        from fowlplay.training.agent import PolicyAgent
        from fowlplay.training.loop import playing_policy

        results = self._duplicate.fetch(self._play(self._key, self._args(weights)))
        scores = {name: self._duplicate.ladder_scores(r, self.table) for name, r in zip(self.names, results)}
        python = [name for name in ladder.LADDER if name not in scores]
        if python:
            policy = playing_policy(self.aec, self.network, weights)
            factories = ladder.ladder_factories(self.aec)
            for name in python:
                learner = lambda seed: PolicyAgent(policy, seed=seed)  # noqa: E731
                scores[name] = ladder.head_to_head(
                    self.aec, learner, factories[name], self.games, ladder.EVAL_SEED, cut_loses=True
                )
        return {name: scores[name] for name in ladder.LADDER}


class _Learner:
    """The jitted learner of a run: its runner (weights, optimizer state, key, counters), the opponents
    it plays (snapshots, the imitated policy) and the compiled update; its checkpoints and snapshots."""

    def __init__(
        self,
        config: TrainConfig,
        run_dir: Path,
        aec,
        games,
        checkpoint: Path | None,
        verbose: bool,
        trust: bool,
    ) -> None:
        import jax
        import jax.numpy as jnp
        from fowlplay.training.jitted import ppo as J  # noqa: N812 - the module read as one short name

        self.config, self.run_dir, self.aec, self.J = config, run_dir, aec, J
        twin, s = games.env, games.s
        self.s = s
        optimizer = J.make_optimizer(_learning_rate(config, s), s.max_grad_norm)
        key = jax.random.PRNGKey(config.seed)
        init_key, key = jax.random.split(key)
        params = J.init_params(
            init_key, twin.observation_shape[0], twin.num_actions, list(s.net_arch), s.embedding
        )
        self.dense = jax.jit(lambda p: J.dense_weights(p, s.embedding))
        reference = None  # the imitated policy, which `jax.imitate_kl` holds the learner near
        if checkpoint is None and config.jax.imitate:  # (a key of its own: runs without it draw as they did)
            imitate_key = jax.random.fold_in(init_key, 0x1417)
            params = self._imitate(params, imitate_key, verbose)
            reference = self.dense(params) if s.imitate_kl else None
        elif s.imitate_kl:  # a resumed run reads it back
            reference = _imitated_weights(run_dir, self.dense(params), trust)
        self.pool = {"snapshots_ready": 0, "snapshots_taken": 0}
        # Snapshots are kept (and saved) dense: an opponent's forward pass on its few rows either way.
        snapshots = J.empty_snapshots(self.dense(params), s.snapshot_slots)
        timesteps, opt_leaves = 0, None
        if checkpoint is not None:
            params, opt_leaves, key, timesteps, self.pool, snapshots = _resume_state(
                checkpoint, run_dir, params, self.dense(params), snapshots, trust
            )
        self.opponents = J.Opponents(
            snapshots=snapshots, ready=jnp.int32(self.pool["snapshots_ready"]), reference=reference
        )
        runner = J.start(games, key, params, optimizer)
        if opt_leaves is not None:
            structure = jax.tree_util.tree_structure(runner.opt_state)
            runner = runner.replace(opt_state=jax.tree_util.tree_unflatten(structure, opt_leaves))
        self.runner = runner.replace(timesteps=jnp.int32(timesteps))
        # Compiled ahead of the loop, so that `seconds` counts learning only (as the other trainers'
        # start-up is left out) and the compile time is reported on its own.
        compiling = time.monotonic()
        self._update = J.make_update(games, optimizer).lower(self.runner, self.opponents).compile()
        J.push_snapshot(snapshots, 0, self.dense(params), s.snapshot_slots)  # compiled here, result unused
        self.compile_seconds = time.monotonic() - compiling

    def _imitate(self, params: dict, key, verbose: bool) -> dict:
        """`jax.imitate`: the start fitted to the baseline's decisions, saved as `imitated` (loadable
        as any checkpoint)."""
        from fowlplay.training.jitted.imitation import warm_start

        config = self.config
        params = warm_start(config, params, self.s, config.ppo.learning_rate, key, self.run_dir, verbose)
        imitated = {name: np.array(value) for name, value in self.dense(params).items()}
        facts = {"imitate": config.jax.imitate, "imitate_epochs": config.jax.imitate_epochs}
        self.export(self.run_dir / IMITATED, imitated, 0, "imitated", facts)
        return params

    @property
    def timesteps(self) -> int:
        """The learner's decisions so far."""
        return int(self.runner.timesteps)

    def update(self) -> dict:
        """One update (`num_envs` x `n_steps` decisions, then the epochs); its metrics on the host."""
        import jax

        self.runner, metrics = self._update(self.runner, self.opponents)
        return jax.device_get(metrics)

    def weights(self) -> dict[str, np.ndarray]:
        """The learner's dense weights, as writable NumPy copies (what a checkpoint holds)."""
        return {name: np.array(value) for name, value in self.dense(self.runner.params).items()}

    def export(
        self, stem: Path, weights: dict, steps: int, kind: str, facts: dict, extra: dict | None = None
    ) -> Path:
        """Write a checkpoint of `weights` that every command loads (no resumable state)."""
        return export_checkpoint(
            self.aec,
            self.config,
            stem,
            weights,
            steps,
            kind,
            facts,
            extra,
            run_dir=self.run_dir,
            trainer="jax",
        )

    def save(self, stem: Path, kind: str, steps: int, extra: dict | None = None) -> Path:
        """A resumable checkpoint: the state a resume needs (`<stem>.jax.npz`), then the checkpoint."""
        import jax

        runner = self.runner
        state_path = stem.with_name(stem.name + ".jax.npz")
        stem.parent.mkdir(parents=True, exist_ok=True)
        opt = jax.tree_util.tree_leaves(runner.opt_state)
        arrays = {f"opt_{i}": np.asarray(leaf) for i, leaf in enumerate(opt)}
        arrays["key"] = np.asarray(jax.random.key_data(runner.key) if _typed(runner.key) else runner.key)
        if self.s.embedding is not None:  # the checkpoint's dense layer cannot be factored back
            arrays.update({f"param_{name}": np.asarray(value) for name, value in runner.params.items()})
        atomic_write(state_path, lambda handle: np.savez(handle, **arrays))
        manifest.record(self.run_dir, [state_path])
        facts = {**self.pool, "state": state_path.name, "num_envs": self.s.num_envs}
        return self.export(stem, self.weights(), steps, kind, facts, extra)

    def save_periodic(self, steps: int, signals: StopSignals) -> None:
        """A periodic checkpoint; a stop signal waits for it, then stops the run."""
        with signals.hold(stop_after=True):
            self.save(self.run_dir / "checkpoints" / f"step_{steps}", "periodic", steps)

    def save_best(self, steps: int, weights: dict, evaluations: Evaluations) -> None:
        """The weights that evaluated best, alone: no state to resume from (a resume goes on from
        the newest checkpoint)."""
        extra = {"evaluation": evaluations.best.best}
        self.export(self.run_dir / "best", weights, steps, "best", dict(self.pool), extra)

    def snapshot(self, timesteps: int, signals: StopSignals) -> None:
        """Save the learner's weights as a snapshot and put them in the opponents' next slot."""
        import jax.numpy as jnp

        weights = self.weights()
        with signals.hold():
            save_snapshot(self.run_dir / "snapshots", timesteps, weights)
        pool, s = self.pool, self.s
        snapshots, ready = self.J.push_snapshot(
            self.opponents.snapshots,
            pool["snapshots_ready"],
            self.dense(self.runner.params),
            s.snapshot_slots,
        )
        pool["snapshots_taken"] += 1
        pool["snapshots_ready"] = ready
        self.opponents = self.opponents._replace(snapshots=snapshots, ready=jnp.int32(ready))


def run(
    config: TrainConfig,
    run_dir: Path,
    checkpoint: Path | None = None,
    verbose: bool = True,
    trust_checkpoint=False,
):
    """Train (or resume from `checkpoint`) up to `total_timesteps` learner decisions; a `RunResult`."""
    jax = _jax()
    aec, games = learner_games(config)
    learner = _Learner(config, run_dir, aec, games, checkpoint, verbose, trust_checkpoint)
    s, timesteps = games.s, learner.timesteps
    write_config(config, run_dir)
    writer = _summary_writer if config.tensorboard else None
    log = RunLog(run_dir, None if checkpoint is None else timesteps, list(LOG_COLUMNS), "jax", writer)
    if verbose:
        start = "starting" if checkpoint is None else f"resuming from {checkpoint} at step {timesteps}"
        print(
            f"fowlplay-train (jax): {config.game}, {start}, {s.num_envs} games x {s.num_steps} decisions "
            f"per update on {jax.default_backend()} (compiled in {learner.compile_seconds:.0f} s); "
            f"run directory {run_dir}"
        )
    # The run's summary: the last `win_rate_window` games of each opponent kind (one update's games
    # end in waves: fresh games started together end together).
    recent = {name: collections.deque(maxlen=config.win_rate_window) for name in ("all", *_KINDS)}

    def update() -> tuple[int, dict]:
        before = learner.timesteps
        metrics = learner.update()
        for won, kind in _ended(metrics["episodes"]):
            recent["all"].append(won)
            recent[_KINDS[kind]].append(won)
        return learner.timesteps - before, _log_values(metrics)

    with StopSignals() as signals:

        def on_stop(stop: KeyboardInterrupt, steps: int) -> Path:
            with signals.hold(stop_after=False):
                return learner.save(run_dir / "checkpoints" / f"step_{steps}", "periodic", steps)

        evaluations = TwinEvaluations(
            run_dir,
            aec,
            config,
            signals,
            lambda steps, weights, _: learner.save_best(steps, weights, evaluations),
        )
        if config.eval_every:  # compiled before the clock starts, as the update is
            compiling = time.monotonic()
            evaluations.compile(learner.weights())
            seconds = time.monotonic() - compiling
            learner.compile_seconds += seconds
            if verbose:
                print(f"fowlplay-train (jax): evaluation games on the twins compiled in {seconds:.0f} s")
        cadence = Cadence(timesteps)
        cadence.every(config.opponents.snapshot_every, lambda steps: learner.snapshot(steps, signals))
        cadence.every(config.eval_every, lambda steps: evaluations.evaluate(steps, learner.weights()))
        cadence.every(config.checkpoint_every, lambda steps: learner.save_periodic(steps, signals))
        timesteps, seconds, out_of_time = drive(config, timesteps, update, cadence, log, signals, on_stop)
        evaluations.evaluate_last(timesteps, learner.weights())
        picked = evaluations.picked()
        with signals.hold(stop_after=False):
            path = learner.save(run_dir / "final", "final", timesteps, {"best": picked})
    summary = {name: float(np.mean(games)) for name, games in recent.items() if games}
    return RunResult(run_dir, path, timesteps, seconds, summary, out_of_time, picked, learner.compile_seconds)


def _summary_writer(folder: str):
    from torch.utils.tensorboard import SummaryWriter

    return SummaryWriter(folder)


def _typed(key) -> bool:
    import jax

    return jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key)


def _learning_rate(config: TrainConfig, s):
    import optax

    ppo = config.ppo
    if ppo.lr_schedule == "linear":
        grad_steps_per_update = s.n_epochs * (s.batch // s.minibatch_size)
        updates = max(1, config.total_timesteps // s.batch)
        return optax.linear_schedule(ppo.learning_rate, 0.0, updates * grad_steps_per_update)
    return ppo.learning_rate


#: Where a run keeps the policy `jax.imitate` fitted (`<run>/imitated.npz` + `.json`).
IMITATED = "imitated"


def _imitated_weights(run_dir: Path, dense_params: dict, trust: bool) -> dict:
    """The run's imitated policy (dense weights), which `jax.imitate_kl` holds the learner near;
    read only if the run's record vouches for it, and only with the network's shapes."""
    import jax.numpy as jnp

    path = run_dir / f"{IMITATED}.npz"
    if not path.is_file():
        raise CheckpointError(
            f"jax.imitate_kl needs the run's imitated policy {path}, which is missing (the run was "
            "started without jax.imitate, or the file was removed); start a new run with both, or set "
            "jax.imitate_kl to 0"
        )
    try:
        manifest.verify(run_dir, [path], trust)
    except manifest.ManifestError as exc:
        raise CheckpointError(str(exc)) from None
    weights, _ = _read_weights(path, dense_params)
    return {name: jnp.asarray(value) for name, value in weights.items()}


def _read_weights(path: Path, dense_params: dict) -> tuple[dict, int]:
    """(the dense weights in `path`, their element count), read only if the file holds exactly the
    network's arrays (names and shapes of `dense_params`), within a bound set by their size."""
    from fowlplay.envs.runtime.untrusted import inspect_npz, read_npz

    shapes = {name: tuple(value.shape) for name, value in dense_params.items()}
    budget = sum(int(np.prod(shape)) for shape in shapes.values())
    headers = inspect_npz(path, max_elements=budget, max_file=budget * 8 + 2**20)
    if {h.name: tuple(h.shape) for h in headers} != shapes:
        raise CheckpointError(f"checkpoint {path}: its weights do not fit the config's network")
    return read_npz(path, headers, max_file=budget * 8 + 2**20), budget


def _resume_state(
    checkpoint: Path, run_dir: Path, params: dict, dense_params: dict, snapshots: dict, trust: bool
):
    """The arrays a jax run needs to go on: weights, optimizer leaves, key, counters, snapshots;
    read only from plain `.npz` files the run's record vouches for. `params` is the network as
    trained (shapes to expect), `dense_params` as its checkpoint holds it (the same without a
    `jax.cell_embedding`; with one, the trained factors come from the state file)."""
    import jax.numpy as jnp
    from fowlplay.envs.runtime.untrusted import inspect_npz, read_npz

    metadata = read_metadata(checkpoint)
    facts = metadata.get("jax")
    if (
        metadata.get("trainer") != "jax"
        or not isinstance(facts, dict)
        or not isinstance(facts.get("state"), str)
    ):
        raise CheckpointError(
            f"checkpoint {checkpoint} was not written by trainer: jax (no jax state to resume)"
        )
    stem = Path(str(checkpoint).removesuffix(".json"))
    weights_path = stem.with_name(stem.name + ".npz")
    state_path = stem.with_name(facts["state"])
    if state_path.parent != weights_path.parent or "/" in facts["state"]:
        raise CheckpointError(
            f"checkpoint {checkpoint}: its jax state must lie beside it; got {facts['state']!r}"
        )
    try:
        manifest.verify(run_dir, [weights_path, state_path], trust)
    except manifest.ManifestError as exc:
        raise CheckpointError(str(exc)) from None
    weights, budget = _read_weights(weights_path, dense_params)
    shapes = {name: tuple(value.shape) for name, value in dense_params.items()}
    state_headers = inspect_npz(state_path, max_elements=4 * budget + 1024, max_file=32 * budget + 2**20)
    state = read_npz(state_path, state_headers, max_file=32 * budget + 2**20)
    count = sum(1 for name in state if name.startswith("opt_"))
    opt_leaves = [jnp.asarray(state[f"opt_{i}"]) for i in range(count)]
    key = jnp.asarray(state["key"])
    pool = {k: int(facts.get(k, 0)) for k in ("snapshots_ready", "snapshots_taken")}
    loaded = load_snapshots(
        run_dir / "snapshots", len(next(iter(snapshots.values()))), shapes,
        verify=None if trust else (lambda path: manifest.problem(run_dir, path)),
    )  # fmt: skip
    for i, (_, snap) in enumerate(loaded):
        snapshots = {n: leaf.at[i].set(jnp.asarray(snap[n])) for n, leaf in snapshots.items()}
    pool["snapshots_ready"] = len(loaded)
    if params.keys() == weights.keys():
        params = {name: jnp.asarray(value) for name, value in weights.items()}
    else:
        trained = {name: state.get(f"param_{name}") for name in params}
        if any(
            value is None or tuple(value.shape) != tuple(params[name].shape)
            for name, value in trained.items()
        ):
            raise CheckpointError(
                f"checkpoint {state_path}: its network does not fit the config's jax.cell_embedding"
            )
        params = {name: jnp.asarray(value) for name, value in trained.items()}
    return params, opt_leaves, key, int(metadata["timesteps"]), pool, snapshots


def _win_rates(episodes: dict) -> dict[str, float]:
    done = np.asarray(episodes["done"], bool)
    outcome = np.asarray(episodes["outcome"])
    kind = np.asarray(episodes["opponent"])
    rates = {}
    if done.any():
        rates["all"] = float((outcome[done] > 0).mean())
    for i, name in enumerate(_KINDS):
        pick = done & (kind == i)
        if pick.any():
            rates[name] = float((outcome[pick] > 0).mean())
    return rates


def _log_values(metrics: dict) -> dict[str, Any]:
    """An update's row of logs/progress.csv after its first columns (`training.loop.RunLog`)."""
    win_rates = _win_rates(metrics["episodes"])
    return {
        "episodes": int(np.asarray(metrics["episodes"]["done"]).sum()),
        **{k: float(metrics[k]) for k in ("policy_loss", "value_loss", "entropy", "approx_kl")},
        "clip_fraction": float(metrics["clip_fraction"]),
        "explained_variance": float(metrics["explained_variance"]),
        "win_rate": win_rates.get("all", ""),
        **{f"win_rate_{k}": win_rates[k] for k in _KINDS if k in win_rates},
    }


def _ended(episodes: dict) -> list[tuple[bool, int]]:
    """(won, opponent kind) of each game that ended in an update, in slot order."""
    done = np.asarray(episodes["done"], bool)
    won = np.asarray(episodes["outcome"])[done] > 0
    return list(zip(won.tolist(), np.asarray(episodes["opponent"])[done].tolist()))
