"""The training settings: one typed object per YAML section, a line of help per field.

`configs/<game>.yaml` holds a `TrainConfig`; every key is checked, and an unknown or mistyped key
is an error that lists the valid ones (with the closest match).
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from fowlplay import envs

#: Opponent kinds of the self-play pool, in the order the weights are listed.
OPPONENT_KINDS = ("random", "baseline", "latest", "snapshot")
ACTIVATIONS = ("tanh", "relu")
LR_SCHEDULES = ("constant", "linear")
VEC_ENVS = ("subproc", "dummy", "batched")
#: Training algorithms (`trainer:`): MaskablePPO against the pool, the same with the pool's sampling
#: weights from a meta-solver over the snapshots' payoff matrix, a masked DQN, and Ray RLlib's
#: multi-agent PPO (the `rllib` extra).
TRAINERS = ("ppo", "psro", "dqn", "rllib", "jax")
META_SOLVERS = ("nash", "uniform")
START_METHODS = ("forkserver", "spawn", "fork")
#: Torch devices a run may ask for ('auto': CUDA when torch has it, else the CPU).
DEVICES = ("auto", "cpu", "cuda", "cuda:N", "mps")
_DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?|mps")
#: Config keys that shape the network: a resumed run keeps them (its weights have that shape).
NETWORK_KEYS = ("ppo.net_arch", "ppo.activation", "dqn.net_arch", "dqn.activation")
#: Largest seed: NumPy's legacy seeding (which SB3 calls) takes 32 bits, and a resumed run adds its timesteps.
MAX_SEED = 2**31 - 1


class ConfigError(ValueError):
    """A config file or override that cannot be used; the message says what is allowed."""


@dataclass
class PPOConfig:
    """MaskablePPO hyperparameters (names as in stable-baselines3)."""

    learning_rate: Annotated[float, "Adam step size"] = 3e-4
    lr_schedule: Annotated[
        str,
        f"one of {list(LR_SCHEDULES)}: keep learning_rate, or decay it linearly to 0 at total_timesteps",
    ] = "constant"
    n_steps: Annotated[int, "steps collected per environment between updates"] = 512
    batch_size: Annotated[int, "minibatch size of an update"] = 256
    n_epochs: Annotated[int, "passes over each rollout"] = 4
    gamma: Annotated[float, "discount factor per learner decision"] = 0.995
    gae_lambda: Annotated[float, "GAE lambda"] = 0.95
    clip_range: Annotated[float, "PPO clipping of the probability ratio"] = 0.2
    ent_coef: Annotated[float, "entropy bonus"] = 0.01
    vf_coef: Annotated[float, "value loss weight"] = 0.5
    max_grad_norm: Annotated[float, "gradient norm clip"] = 0.5
    target_kl: Annotated[float | None, "stop an update early beyond this KL (null: never)"] = None
    net_arch: Annotated[list[int], "hidden layer sizes of the policy and of the value network"] = field(
        default_factory=lambda: [128, 128]
    )
    activation: Annotated[str, f"hidden activation, one of {list(ACTIVATIONS)}"] = "tanh"


@dataclass
class DQNConfig:
    """The masked DQN of `trainer: dqn` (stable-baselines3's DQN; names as there)."""

    learning_rate: Annotated[float, "Adam step size"] = 5e-4
    buffer_size: Annotated[int, "transitions kept in the replay buffer"] = 100_000
    learning_starts: Annotated[int, "decisions played (uniformly among legal actions) before learning"] = (
        5_000
    )
    batch_size: Annotated[int, "minibatch size of an update"] = 128
    gamma: Annotated[float, "discount factor per learner decision"] = 0.995
    train_freq: Annotated[int, "steps per environment between updates"] = 1
    gradient_steps: Annotated[int, "gradient steps per update"] = 1
    target_update_interval: Annotated[int, "decisions between copies of the Q-network to its target"] = 2_000
    exploration_fraction: Annotated[float, "fraction of total_timesteps over which epsilon decays"] = 0.2
    exploration_initial_eps: Annotated[float, "epsilon of epsilon-greedy at the start"] = 1.0
    exploration_final_eps: Annotated[float, "epsilon after the decay"] = 0.05
    max_grad_norm: Annotated[float, "gradient norm clip"] = 10.0
    latest_every: Annotated[int, "decisions between refreshes of the `latest` opponent's weights"] = 2_048
    net_arch: Annotated[list[int], "hidden layer sizes of the Q-network"] = field(
        default_factory=lambda: [128, 128]
    )
    activation: Annotated[str, f"hidden activation, one of {list(ACTIVATIONS)}"] = "relu"


@dataclass
class PSROConfig:
    """`trainer: psro`: MaskablePPO best responses to a meta-strategy over the population."""

    meta_solver: Annotated[
        str,
        f"one of {list(META_SOLVERS)}: Nash of the empirical meta-game (PSRO), or uniform over the "
        "population (fictitious self-play)",
    ] = "nash"
    meta_games: Annotated[int, "games per pair of population members to estimate their payoff"] = 20


@dataclass
class OpponentConfig:
    """Who plays the other seats: weights of each kind (renormalised over the kinds available)."""

    random: Annotated[float, "weight of the uniformly random agent"] = 0.2
    baseline: Annotated[float, "weight of the game's rule-based BaselineAgent"] = 0.3
    latest: Annotated[float, "weight of the current learner (refreshed every rollout)"] = 0.3
    snapshot: Annotated[float, "weight of an earlier learner, drawn uniformly from the window"] = 0.2
    snapshot_every: Annotated[int, "timesteps between snapshots of the learner"] = 25_000
    snapshot_window: Annotated[int, "most recent snapshots kept in the pool"] = 5

    def weights(self) -> dict[str, float]:
        """The weight of each opponent kind."""
        return {kind: float(getattr(self, kind)) for kind in OPPONENT_KINDS}


@dataclass
class RLlibConfig:
    """Ray RLlib settings (`trainer: rllib`); PPO's hyperparameters and the network come from `ppo`."""

    address: Annotated[
        str | None,
        "an existing Ray cluster to join ('auto', 'HOST:6379' or 'ray://HOST:10001'); null: start Ray here",
    ] = None
    num_cpus: Annotated[int | None, "CPUs a Ray started here may use (null: all of this machine's)"] = None
    num_env_runners: Annotated[
        int, "env runner actors playing games (0: play them in the trainer's process)"
    ] = 0
    envs_per_env_runner: Annotated[int, "games each env runner steps side by side"] = 16
    num_learners: Annotated[
        int, "learner actors, each updating on its share of a batch (0: update in the trainer's process)"
    ] = 0
    env_runner_resources: Annotated[
        dict[str, float],
        "Ray custom resources each env runner needs, e.g. {game_node: 1} to place env runners only on "
        "nodes started with `ray start --resources '{\"game_node\": 4}'` ({}: anywhere)",
    ] = field(default_factory=dict)


#: How `trainer: jax` seats the rule-based baseline when `opponents.baseline` > 0.
JAX_BASELINES = ("twin", "callback", "off")


@dataclass
class JaxConfig:
    """`trainer: jax` settings; PPO's hyperparameters and the network come from `ppo`."""

    num_envs: Annotated[int, "games stepped side by side on the batched twin (one jitted batch)"] = 128
    n_steps: Annotated[int, "learner decisions per game per update (num_envs x n_steps per update)"] = 16
    num_minibatches: Annotated[int, "minibatches per epoch of an update (replaces ppo.batch_size)"] = 8
    baseline: Annotated[
        str,
        f"one of {list(JAX_BASELINES)}: 'twin' seats the baseline's JAX twin (envs.make_jax_baseline: "
        "the baseline's decisions, held equal by tests, at batched speed), 'callback' the Python "
        "baseline through a host callback (exact, slower), 'off' drops it from the pool (its weight "
        "goes to the other kinds)",
    ] = "twin"
    cell_embedding: Annotated[
        int,
        "0: a plain dense first layer; d > 0 (murder_most_fowl_v0 only): each grid cell's features reach "
        "the first layer through one shared features -> d linear map per network (fewer inputs, "
        "weights shared by every cell); checkpoints hold the dense layer it equals",
    ] = 0
    imitate: Annotated[
        int,
        "decisions of the rule-based baseline (every seat, games seeded from the run's seed) that a "
        "fresh run fits its policy and value to before PPO starts (behaviour cloning, logged in "
        "logs/imitation.json; not counted in total_timesteps); 0: off",
    ] = 0
    imitate_epochs: Annotated[int, "passes over the jax.imitate decisions, in minibatches of 256"] = 10
    imitate_kl: Annotated[
        float,
        "weight of KL(learner || imitated policy) on the learner's decisions in the PPO loss, holding "
        "the learner near the policy jax.imitate fitted (needs jax.imitate); 0: off",
    ] = 0.0


@dataclass
class TrainConfig:
    """Everything one training run needs; `configs/<game>.yaml` sets it, the CLI overrides it."""

    game: Annotated[str, f"registered game to train on, one of {list(envs.ENV_NAMES)}"] = "chicken_v1"
    trainer: Annotated[
        str,
        f"training algorithm, one of {list(TRAINERS)}: MaskablePPO against the pool, PSRO-style "
        "MaskablePPO (pool weights from a meta-solver), masked DQN, Ray RLlib's PPO (rllib extra), "
        "masked PPO jitted on the batched JAX twins (jax extra)",
    ] = "ppo"
    env_options: Annotated[dict[str, Any], "rule options passed to the game (num_players, ...)"] = field(
        default_factory=dict
    )
    reward_options: Annotated[
        dict[str, Any],
        "game options that change only the rewards, used while training (e.g. reward_mode: score); "
        "checkpoints are for the game of env_options",
    ] = field(default_factory=dict)
    truncation_reward: Annotated[
        float | None, "the learner's reward when a game is cut off by its cap (null: the game's, 0)"
    ] = None
    decision_cost: Annotated[float, "subtracted from the learner's reward at every decision (0: none)"] = 0.0
    max_decisions: Annotated[
        int | None, "cut an episode off after this many learner decisions, as truncated (null: never)"
    ] = None
    shaping: Annotated[
        float,
        "weight of potential-based reward shaping from the game's public Game.potential (e.g. the "
        "learner's lead), with ppo.gamma so the best policy is unchanged (0: none)",
    ] = 0.0
    seed: Annotated[int, "seeds the learner, the environments and the opponents"] = 0
    total_timesteps: Annotated[
        int, "learner decisions to train for, in all (a resumed run counts from 0)"
    ] = 200_000
    max_minutes: Annotated[float | None, "also stop after this much wall time (null: no time limit)"] = None
    n_envs: Annotated[int, "parallel environments"] = 4
    vec_env: Annotated[str, f"how the environments run, one of {list(VEC_ENVS)}"] = "subproc"
    start_method: Annotated[str, f"subprocess start method, one of {list(START_METHODS)}"] = "forkserver"
    learner_seat: Annotated[int | str, "the learner's seat: an int, or 'random' to draw it per episode"] = (
        "random"
    )
    checkpoint_every: Annotated[int, "timesteps between periodic checkpoints (0: none)"] = 50_000
    out: Annotated[str, "run directory ('{game}' is replaced by the game name)"] = "runs/{game}"
    device: Annotated[str, f"torch device of the learner, one of {list(DEVICES)}"] = "cpu"
    torch_threads: Annotated[int, "torch threads of the learner process (workers use 1)"] = 1
    win_rate_window: Annotated[int, "episodes per opponent kind averaged in the logged win rates"] = 200
    progress_bar: Annotated[bool, "show a progress bar"] = True
    tensorboard: Annotated[bool, "write TensorBoard event files to <out>/logs"] = True
    eval_every: Annotated[
        int,
        "decisions between evaluations against random and baseline that keep the best checkpoint (0: none)",
    ] = 25_000
    eval_games: Annotated[int, "games against each of random and baseline per evaluation (seats rotated)"] = (
        100
    )
    ppo: Annotated[PPOConfig, "MaskablePPO hyperparameters (trainers ppo and psro)"] = field(
        default_factory=PPOConfig
    )
    dqn: Annotated[DQNConfig, "masked DQN hyperparameters (trainer dqn)"] = field(default_factory=DQNConfig)
    psro: Annotated[PSROConfig, "the meta-game of trainer psro"] = field(default_factory=PSROConfig)
    opponents: Annotated[OpponentConfig, "the opponent pool"] = field(default_factory=OpponentConfig)
    rllib: Annotated[RLlibConfig, "Ray RLlib settings (trainer: rllib)"] = field(default_factory=RLlibConfig)
    jax: Annotated[JaxConfig, "batched JAX settings (trainer: jax)"] = field(default_factory=JaxConfig)

    def training_options(self) -> dict[str, Any]:
        """The game options the learner trains on: env_options with reward_options on top."""
        return {**self.env_options, **self.reward_options}

    def gamma(self) -> float:
        """The learner's discount (the one potential-based shaping must use)."""
        return self.dqn.gamma if self.trainer == "dqn" else self.ppo.gamma

    def network(self) -> dict[str, Any]:
        """The learner's network as the opponent pool rebuilds it: net_arch, activation and head."""
        if self.trainer == "dqn":
            return {
                "net_arch": list(self.dqn.net_arch),
                "activation": self.dqn.activation,
                "head": "q_values",
            }
        return {
            "net_arch": list(self.ppo.net_arch),
            "activation": self.ppo.activation,
            "head": "actor_critic",
        }

    def run_dir(self) -> Path:
        """The run directory with `{game}` filled in."""
        return Path(self.out.replace("{game}", self.game))

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict (what config.yaml and checkpoint metadata hold)."""
        return dataclasses.asdict(self)

    def validate(self) -> None:
        """Raise ConfigError on a value no run could use (the first, checked in a fixed order)."""
        _finite(self, "")
        _choice("trainer", self.trainer, TRAINERS)
        aec = self._validate_game()
        self._validate_run(aec)
        self._validate_ppo()
        self._validate_opponents()
        self._validate_dqn()
        _choice("psro.meta_solver", self.psro.meta_solver, META_SOLVERS)
        _positive("psro.meta_games", self.psro.meta_games, allow_zero=False)
        self._validate_rllib()

    def _validate_game(self):
        """The game's AEC env with `env_options`; ConfigError on an unknown game, bad options, or
        reward options that change more than the rewards."""
        if self.game not in envs.ENV_NAMES:
            raise ConfigError(f"game: unknown game {self.game!r}; registered games: {list(envs.ENV_NAMES)}")
        try:
            aec = envs.make(self.game, **self.env_options)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"env_options: {exc}") from exc
        try:
            rewarded = envs.make(self.game, **self.training_options())
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"reward_options: {exc}") from exc
        agent = aec.possible_agents[0]
        if rewarded.observation_space(agent) != aec.observation_space(agent) or rewarded.action_space(
            agent
        ) != aec.action_space(agent):
            raise ConfigError(
                f"reward_options {self.reward_options} change the observation or action space; "
                "they may change only the rewards"
            )
        return aec

    def _validate_run(self, aec) -> None:
        """Raise ConfigError on a setting of the run itself (budget, seed, device, seats, ...)."""
        _positive("total_timesteps", self.total_timesteps, allow_zero=False)
        if not 0 <= self.seed <= MAX_SEED:
            raise ConfigError(f"seed must be an int in 0..{MAX_SEED}; got {self.seed!r}")
        if not _DEVICE.fullmatch(self.device):
            raise ConfigError(f"device must be one of {list(DEVICES)}; got {self.device!r}")
        check_shaping(self.shaping, aec)
        if self.max_decisions is not None:
            _positive("max_decisions", self.max_decisions, allow_zero=False)
        _positive("n_envs", self.n_envs, allow_zero=False)
        _positive("checkpoint_every", self.checkpoint_every)
        _positive("torch_threads", self.torch_threads, allow_zero=False)
        _positive("win_rate_window", self.win_rate_window, allow_zero=False)
        _positive("eval_every", self.eval_every)
        _positive("eval_games", self.eval_games, allow_zero=False)
        if self.max_minutes is not None and self.max_minutes <= 0:
            raise ConfigError(f"max_minutes must be > 0 or null; got {self.max_minutes!r}")
        _choice("vec_env", self.vec_env, VEC_ENVS)
        _choice("start_method", self.start_method, START_METHODS)
        seats = len(aec.possible_agents)
        if self.learner_seat != "random" and not (
            isinstance(self.learner_seat, int) and 0 <= self.learner_seat < seats
        ):
            raise ConfigError(
                f"learner_seat must be 'random' or an int 0..{seats - 1}; got {self.learner_seat!r}"
            )

    def _validate_ppo(self) -> None:
        """Raise ConfigError on a `ppo` setting."""
        ppo = self.ppo
        for name in ("n_steps", "batch_size", "n_epochs"):
            _positive(f"ppo.{name}", getattr(ppo, name), allow_zero=False)
        for name in ("learning_rate", "clip_range", "max_grad_norm"):
            _positive(f"ppo.{name}", getattr(ppo, name), allow_zero=False)
        for name in ("ent_coef", "vf_coef"):
            _positive(f"ppo.{name}", getattr(ppo, name))
        if ppo.target_kl is not None:
            _positive("ppo.target_kl", ppo.target_kl, allow_zero=False)
        if not ppo.net_arch or any(size < 1 for size in ppo.net_arch):
            raise ConfigError(f"ppo.net_arch must list positive layer sizes; got {ppo.net_arch!r}")
        _choice("ppo.activation", ppo.activation, ACTIVATIONS)
        _choice("ppo.lr_schedule", ppo.lr_schedule, LR_SCHEDULES)
        if not 0 < ppo.gamma <= 1 or not 0 <= ppo.gae_lambda <= 1:
            raise ConfigError(
                f"ppo.gamma must be in (0, 1] and gae_lambda in [0, 1]; got {ppo.gamma}, {ppo.gae_lambda}"
            )

    def _validate_opponents(self) -> None:
        """Raise ConfigError on an `opponents` setting."""
        opp = self.opponents
        weights = opp.weights()
        if any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
            raise ConfigError(f"opponents: weights must be >= 0 and not all 0; got {weights}")
        if weights["random"] + weights["baseline"] + weights["latest"] <= 0:
            raise ConfigError(
                "opponents: random, baseline or latest needs a weight; snapshots do not exist at the start"
            )
        _positive("opponents.snapshot_every", opp.snapshot_every, allow_zero=False)
        _positive("opponents.snapshot_window", opp.snapshot_window, allow_zero=False)
        if self.trainer == "psro" and weights["latest"] >= sum(weights.values()):
            raise ConfigError("trainer psro: opponents.latest must leave a share to the meta-strategy")

    def _validate_dqn(self) -> None:
        """Raise ConfigError on a `dqn` setting."""
        dqn = self.dqn
        for name in ("buffer_size", "batch_size", "train_freq", "gradient_steps", "target_update_interval"):
            _positive(f"dqn.{name}", getattr(dqn, name), allow_zero=False)
        for name in ("learning_rate", "max_grad_norm", "latest_every"):
            _positive(f"dqn.{name}", getattr(dqn, name), allow_zero=False)
        _positive("dqn.learning_starts", dqn.learning_starts)
        if not 0 < dqn.gamma <= 1:
            raise ConfigError(f"dqn.gamma must be in (0, 1]; got {dqn.gamma}")
        for name in ("exploration_fraction", "exploration_initial_eps", "exploration_final_eps"):
            if not 0 <= getattr(dqn, name) <= 1:
                raise ConfigError(f"dqn.{name} must be in [0, 1]; got {getattr(dqn, name)!r}")
        if not dqn.net_arch or any(size < 1 for size in dqn.net_arch):
            raise ConfigError(f"dqn.net_arch must list positive layer sizes; got {dqn.net_arch!r}")
        _choice("dqn.activation", dqn.activation, ACTIVATIONS)

    def _validate_rllib(self) -> None:
        """Raise ConfigError on an `rllib` setting, or a key RLlib's trainer cannot honour."""
        ray = self.rllib
        if ray.num_cpus is not None:
            _positive("rllib.num_cpus", ray.num_cpus, allow_zero=False)
        _positive("rllib.num_env_runners", ray.num_env_runners)
        _positive("rllib.envs_per_env_runner", ray.envs_per_env_runner, allow_zero=False)
        _positive("rllib.num_learners", ray.num_learners)
        for name, amount in ray.env_runner_resources.items():
            if not isinstance(name, str) or not name or isinstance(amount, bool):
                raise ConfigError(
                    f"rllib.env_runner_resources must map resource names to numbers; got {name!r}"
                )
            if not isinstance(amount, (int, float)) or not 0 < amount < 1e9:
                raise ConfigError(
                    f"rllib.env_runner_resources.{name} must be a positive number; got {amount!r}"
                )
        jx = self.jax
        _positive("jax.num_envs", jx.num_envs, allow_zero=False)
        _positive("jax.n_steps", jx.n_steps, allow_zero=False)
        _positive("jax.num_minibatches", jx.num_minibatches, allow_zero=False)
        _choice("jax.baseline", jx.baseline, JAX_BASELINES)
        _positive("jax.cell_embedding", jx.cell_embedding)
        _positive("jax.imitate", jx.imitate)
        _positive("jax.imitate_epochs", jx.imitate_epochs, allow_zero=False)
        _positive("jax.imitate_kl", jx.imitate_kl)
        if jx.imitate_kl and not jx.imitate:
            raise ConfigError(
                f"jax.imitate_kl {jx.imitate_kl!r} needs a policy to stay near: set jax.imitate to the "
                "baseline decisions to imitate, or jax.imitate_kl to 0"
            )
        if 0 < jx.imitate < 2:
            raise ConfigError(f"jax.imitate must be 0 (off) or at least 2 decisions; got {jx.imitate}")
        if jx.num_envs * jx.n_steps % jx.num_minibatches:
            raise ConfigError(
                f"jax.num_envs x jax.n_steps ({jx.num_envs * jx.n_steps}) must divide into "
                f"jax.num_minibatches ({jx.num_minibatches}) equal minibatches"
            )
        pool = self.opponents
        weights = (pool.latest, pool.snapshot, pool.random, 0.0 if jx.baseline == "off" else pool.baseline)
        kinds = sum(1 for weight in weights if weight > 0)
        if self.trainer == "jax" and jx.num_envs < kinds:
            raise ConfigError(
                f"jax.num_envs ({jx.num_envs}) must give each of the pool's {kinds} opponent kinds "
                f"of positive weight a game of its own; set it to at least {kinds}"
            )
        if self.trainer not in ("rllib", "jax"):
            return
        unsupported = {
            "decision_cost": (self.decision_cost, 0.0),
            "ppo.target_kl": (self.ppo.target_kl, None),
        }
        if self.trainer == "rllib":
            unsupported["shaping"] = (self.shaping, 0.0)
        for key, (value, default) in unsupported.items():
            if value != default:
                raise ConfigError(
                    f"{key} {value!r} is not supported with trainer: {self.trainer}; set it to "
                    f"{default!r} (or use trainer: ppo)"
                )


def check_shaping(shaping: float, aec) -> None:
    """Raise ConfigError unless `shaping` is >= 0 and, when above 0, the AEC env's game has a potential."""
    _positive("shaping", shaping)
    if shaping and not aec.unwrapped.has_potential():
        games = [name for name in envs.ENV_NAMES if envs.make(name).unwrapped.has_potential()]
        raise ConfigError(
            f"shaping: {aec.metadata['name']} defines no potential (Game.potential) to shape with; "
            f"use 0, or one of {games}"
        )


def _finite(node: Any, where: str) -> None:
    """Raise ConfigError on a NaN or infinite number anywhere in a config (YAML reads .nan and .inf)."""
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if dataclasses.is_dataclass(value):
            _finite(value, f"{where}{f.name}.")
        elif isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{where}{f.name} must be a finite number; got {value!r}")


def _positive(name: str, value: Any, allow_zero: bool = True) -> None:
    if value < 0 or (value == 0 and not allow_zero):
        raise ConfigError(f"{name} must be {'>= 0' if allow_zero else '> 0'}; got {value!r}")


def _choice(name: str, value: Any, allowed: tuple) -> None:
    if value not in allowed:
        raise ConfigError(f"{name} must be one of {list(allowed)}; got {value!r}")


# ----- building a config from plain data --------------------------------------------------------
def from_dict(data: dict[str, Any]) -> TrainConfig:
    """Build and validate a TrainConfig from a nested dict (an unknown key lists the valid ones)."""
    config = _build(TrainConfig, data, "")
    config.validate()
    return config


def _build(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"{where[:-1] or 'config'} must be a mapping of keys to values; got {data!r}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = [key for key in data if key not in fields]
    if unknown:
        key = unknown[0]
        close = difflib.get_close_matches(str(key), list(fields), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(
            f"unknown key {where + str(key)!r}{hint}; valid keys{' in ' + where[:-1] if where else ''}: "
            f"{list(fields)}"
        )
    kwargs = {}
    for name, value in data.items():
        kwargs[name] = _convert(hints[name], value, where + name)
    return cls(**kwargs)


def _convert(hint: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if dataclasses.is_dataclass(hint):
        return _build(hint, value if value is not None else {}, where + ".")
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        for option in options:
            if option is type(None):
                continue
            try:
                return _convert(option, value, where)
            except ConfigError:
                continue
        names = " or ".join("null" if o is type(None) else getattr(o, "__name__", str(o)) for o in options)
        raise ConfigError(f"{where} must be {names}; got {value!r}")
    if origin is list:
        (item,) = typing.get_args(hint)
        if not isinstance(value, list):
            raise ConfigError(f"{where} must be a list; got {value!r}")
        return [_convert(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where} must be a mapping; got {value!r}")
        return dict(value)
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false; got {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where} must be an int; got {value!r}")
        return value
    if hint is float:
        # YAML reads 3e-4 (no dot) as a string; accept it as the number it means.
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise ConfigError(f"{where} must be a number; got {value!r}") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where} must be a number; got {value!r}")
        return float(value)
    if hint is str:
        # YAML reads an unquoted off / no (on / yes) as false (true); read it back as the word a
        # choice such as `jax.baseline: off` means (any other choice's check names what is allowed).
        if isinstance(value, bool):
            value = "on" if value else "off"
        if not isinstance(value, str):
            raise ConfigError(f"{where} must be a string; got {value!r}")
        return value
    raise TypeError(f"config field {where} has an unsupported type {hint!r}")


def load_config(
    path: str | Path, overrides: dict[str, Any] | None = None, given: dict[str, str] | None = None
) -> TrainConfig:
    """Read a YAML config, apply `overrides` (dotted keys allowed: 'ppo.n_steps') and validate it;
    a mistake in an override names it as the user `given` it (see `with_overrides`)."""
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror}") from exc
    except UnicodeDecodeError:
        raise ConfigError(
            f"config {path} is not a text file; it must be YAML (see configs/<game>.yaml)"
        ) from None
    except yaml.YAMLError as exc:
        problem = " ".join(str(exc).split())
        raise ConfigError(f"config {path} is not valid YAML: {problem}") from None
    if data is None:
        raise ConfigError(
            f"config {path} is empty; it must set at least the game (copy configs/<game>.yaml, or see "
            "fowlplay-train --list-keys)"
        )
    if not isinstance(data, dict):
        raise ConfigError(f"config {path} must be a mapping of keys to values; got {type(data).__name__}")
    return with_overrides(data, overrides or {}, str(path), given)


def with_overrides(
    data: dict[str, Any], overrides: dict[str, Any], source: str, given: dict[str, str] | None = None
) -> TrainConfig:
    """The validated config of `data` (read from `source`, a file) with `overrides` applied.

    A mistake names where it came from: the override whose key the message names first, as the
    user gave it (`given[key]`, such as '--set ppo.n_steps=abc' or '--total-timesteps -5'; else
    '--set KEY=VALUE'), every override when the file alone is valid, else `source`.
    """
    try:
        return from_dict(apply_overrides(data, overrides))
    except ConfigError as exc:
        labels = {key: (given or {}).get(key) or _as_set(key, value) for key, value in overrides.items()}
        named = {key: at for key in overrides if (at := _named_at(str(exc), key)) is not None}
        blamed = [labels[min(named, key=named.__getitem__)]] if named else []
        if not blamed and overrides:
            try:
                from_dict(data)
            except ConfigError:
                pass  # the file's own mistake
            else:
                blamed = list(labels.values())
        raise ConfigError(f"{', '.join(blamed) or source}: {exc}") from None


def _as_set(key: str, value: Any) -> str:
    import json

    return f"--set {key}={value if isinstance(value, str) else json.dumps(value)}"


def _named_at(message: str, key: str) -> int | None:
    """Where `message` first names config key `key` (or a key of its section: 'ppo' in 'ppo.n_steps');
    None if nowhere. A message names the key it is about first, then perhaps the valid keys."""
    found = re.search(rf"(?<![\w.]){re.escape(key)}(?!\w)", message)
    return None if found is None else found.start()


def apply_overrides(data: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """A copy of `data` with each dotted key of `overrides` set."""
    import copy

    data = copy.deepcopy(data)
    for key, value in overrides.items():
        node = data
        *parents, leaf = key.split(".")
        for depth, parent in enumerate(parents):
            if node.get(parent) is None:
                node[parent] = {}
            node = node[parent]
            if not isinstance(node, dict):
                section = ".".join(parents[: depth + 1])
                raise ConfigError(
                    f"--set {key}: {section} is a value ({node!r}), not a section, so it has no key "
                    f"{'.'.join([*parents[depth + 1 :], leaf])!r}; set it with --set {section}=VALUE "
                    f"(dotted keys go into sections such as ppo, opponents, env_options)"
                )
        node[leaf] = value
    return data


def help_table() -> str:
    """Every config key with its default and help line (for `fowlplay-train --list-keys`)."""
    lines = []

    def walk(cls: type, prefix: str) -> None:
        hints = typing.get_type_hints(cls, include_extras=True)
        for f in dataclasses.fields(cls):
            default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
            if dataclasses.is_dataclass(default):
                walk(type(default), prefix + f.name + ".")
            else:
                lines.append(f"{prefix + f.name:<28} {default!r:<14} {hints[f.name].__metadata__[0]}")

    walk(TrainConfig, "")
    return "\n".join(lines)
