"""`trainer: jax`: masked PPO whose rollouts and updates run inside one jitted function, on the
batched twins (PureJaxRL's design: no Python between two decisions).

Reads top to bottom: the network (SB3 MaskablePPO's layers, under the names its checkpoints use),
the learner's view of a game (opponents move inside the step until the learner decides again), the
rollout, GAE, the PPO update. `training/jax_train.py` runs it: checkpoints, evaluation, resume.

The network's weights are kept in torch's layout (`weight` is out x in) under the state-dict names
`fowlplay.training.policy.build_policy` gives them, so a checkpoint is written as they are and
every command that loads a checkpoint loads it with no new code path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from fowlplay.envs.core.twin import State, TwinEnv, pytree_dataclass, tree_where

#: SB3's MaskableCategorical gives a masked action this logit: probability exactly 0 in float32.
MASKED_LOGIT = -1e8
ACTIVATIONS = {"tanh": jnp.tanh, "relu": jax.nn.relu}


# ----- the network -------------------------------------------------------------------------------
def init_params(key: jax.Array, obs_size: int, num_actions: int, net_arch: list[int]) -> dict[str, jax.Array]:
    """SB3's initialisation: orthogonal weights (gain sqrt 2 in the hidden layers, 0.01 for the
    action head, 1 for the value head) and zero biases, named as SB3's MaskablePPO policy names them."""
    params: dict[str, jax.Array] = {}
    keys = iter(jax.random.split(key, 2 * len(net_arch) + 2))

    def layer(name: str, fan_in: int, fan_out: int, gain: float) -> None:
        weight = jax.nn.initializers.orthogonal(gain)(next(keys), (fan_out, fan_in), jnp.float32)
        params[f"{name}.weight"] = weight
        params[f"{name}.bias"] = jnp.zeros(fan_out, jnp.float32)

    for net in ("policy_net", "value_net"):
        fan_in = obs_size
        for i, width in enumerate(net_arch):
            layer(f"mlp_extractor.{net}.{2 * i}", fan_in, width, math.sqrt(2))
            fan_in = width
    last = net_arch[-1] if net_arch else obs_size
    layer("action_net", last, num_actions, 0.01)
    layer("value_net", last, 1, 1.0)
    return params


def _mlp(params: dict, net: str, x: jax.Array, depth: int, activation: str) -> jax.Array:
    act = ACTIVATIONS[activation]
    for i in range(depth):
        x = act(
            x @ params[f"mlp_extractor.{net}.{2 * i}.weight"].T + params[f"mlp_extractor.{net}.{2 * i}.bias"]
        )
    return x


def policy_logits(params: dict, obs: jax.Array, mask: jax.Array, depth: int, activation: str) -> jax.Array:
    """Masked logits of one observation or a batch (the policy half alone: what an opponent needs)."""
    pi = _mlp(params, "policy_net", obs, depth, activation)
    logits = pi @ params["action_net.weight"].T + params["action_net.bias"]
    return jnp.where(mask, logits, MASKED_LOGIT)


def forward(params: dict, obs: jax.Array, mask: jax.Array, depth: int, activation: str):
    """(masked logits, value) of one observation or a batch."""
    vf = _mlp(params, "value_net", obs, depth, activation)
    value = (vf @ params["value_net.weight"].T + params["value_net.bias"])[..., 0]
    return policy_logits(params, obs, mask, depth, activation), value


def probabilities(params: dict, obs: jax.Array, mask: jax.Array, depth: int, activation: str) -> jax.Array:
    """The masked action distribution (what the exported checkpoint must reproduce)."""
    return jax.nn.softmax(policy_logits(params, obs, mask, depth, activation), axis=-1)


# ----- settings ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Settings:
    """What the jitted functions are specialised on (each change compiles them again)."""

    num_envs: int  # games stepped side by side
    num_steps: int  # learner decisions per game per update
    net_arch: tuple[int, ...]
    activation: str
    gamma: float
    gae_lambda: float
    clip_range: float
    ent_coef: float
    vf_coef: float
    max_grad_norm: float
    n_epochs: int
    minibatch_size: int
    snapshot_slots: int  # earlier learners kept as opponents
    truncation_reward: float | None  # the learner's reward for a capped game (None: the game's)
    learner_seat: int | None  # None: drawn per game
    #: Weights of the opponent kinds: latest (the current learner), snapshot, random, baseline.
    opponent_weights: tuple[float, float, float, float]
    #: Bound on opponent decisions between two learner decisions (a safety net for while_loop).
    max_opponent_moves: int = 10_000

    @property
    def depth(self) -> int:
        """Hidden layers."""
        return len(self.net_arch)

    @property
    def batch(self) -> int:
        """Learner decisions per update."""
        return self.num_envs * self.num_steps


# ----- the learner's view of a game ----------------------------------------------------------
LATEST, SNAPSHOT, RANDOM, BASELINE = range(4)


@pytree_dataclass
class Seat:
    """One game from the learner's side: the twin's state, its seat, who the others are."""

    state: State
    learner: jax.Array  # int32 seat of the learner
    opponent: jax.Array  # int32 opponent kind (LATEST, SNAPSHOT, RANDOM, BASELINE)
    snapshot: jax.Array  # int32 slot of the snapshot playing (kind SNAPSHOT)
    episode_return: jax.Array  # float32 learner's return so far this game
    episode_length: jax.Array  # int32 learner decisions so far this game


class Opponents(NamedTuple):
    """What the other seats play: the latest learner's weights, the snapshot slots (stacked) and how
    many slots hold a snapshot."""

    latest: dict
    snapshots: dict  # every leaf has a leading axis of `snapshot_slots`
    ready: jax.Array  # int32 snapshots available


#: A baseline as a traced function: (observation, legal mask, seat, wanted) -> action; rows not
#: `wanted` get any action (it is discarded), so a host callback can skip them.
Baseline = Any


class LearnerGames:
    """A batch of twin games seen from the learner's seat; every function is jit- and vmap-safe."""

    def __init__(self, env: TwinEnv, settings: Settings, baseline: Baseline | None = None) -> None:
        self.env, self.s, self.baseline = env, settings, baseline
        weights = np.asarray(settings.opponent_weights, np.float64)
        if baseline is None:
            weights[BASELINE] = 0.0
        self._kind_logits = jnp.log(jnp.asarray(weights / weights.sum(), jnp.float32))

    # -- one game --
    def reset(self, key: jax.Array, opponents: Opponents) -> Seat:
        """A new game with a drawn seat and opponent, stepped to the learner's first decision."""
        deal_key, move_key = jax.random.split(key)
        game, _, _, _ = self._advance(self._deal(deal_key, opponents), None, move_key, opponents)
        return game

    def step(self, game: Seat, action: jax.Array, key: jax.Array, opponents: Opponents):
        """The learner's action, then the others' until the learner decides again; a game that ends
        is dealt again and played up to the learner's first decision. (game, reward, done, info)."""
        return self._advance(game, action, key, opponents)

    def _deal(self, key: jax.Array, opponents: Opponents) -> Seat:
        deal, seat_key, kind_key, slot_key = jax.random.split(key, 4)
        n = self.env.num_players
        learner = (
            jnp.int32(self.s.learner_seat)
            if self.s.learner_seat is not None
            else jax.random.randint(seat_key, (), 0, n, jnp.int32)
        )
        kind_logits = jnp.where(
            (jnp.arange(4) == SNAPSHOT) & (opponents.ready == 0), -jnp.inf, self._kind_logits
        )
        kind = jax.random.categorical(kind_key, kind_logits).astype(jnp.int32)
        slot = jax.random.randint(slot_key, (), 0, jnp.maximum(opponents.ready, 1), jnp.int32)
        return Seat(
            state=self.env.init(deal),
            learner=learner,
            opponent=kind,
            snapshot=slot,
            episode_return=jnp.float32(0.0),
            episode_length=jnp.int32(0),
        )

    def _advance(self, game: Seat, action: jax.Array | None, key: jax.Array, opponents: Opponents):
        """One loop serves every case, so the twin's step is traced once: the learner's `action`
        first (None: none), then opponents until the learner's decision; a game that ends is dealt
        again in place and the loop goes on in the new one."""
        s = self.s
        no_info = {
            "episode_return": jnp.float32(0.0),
            "episode_length": jnp.int32(0),
            "outcome": jnp.float32(0.0),
            "opponent": jnp.int32(0),
            "done": jnp.zeros((), bool),
        }

        def going(carry):
            game, _, first, _, _, moves = carry
            return first | ((game.state.current_player != game.learner) & (moves < s.max_opponent_moves))

        def move(carry):
            game, key, first, reward, info, moves = carry
            key, act_key, step_key, deal_key = jax.random.split(key, 4)
            # Under vmap every row runs this body until the last row is done; only a row still
            # going, past the learner's own action, plays an opponent's decision here.
            deciding = ~first & going((game, key, first, reward, info, moves))
            opponent = self._opponent_action(game, act_key, opponents, deciding)
            chosen = opponent if action is None else jnp.where(first, action, opponent)
            state = self.env.step(game.state, chosen, step_key)
            ended = state.terminated | state.truncated
            gained = jnp.where(info["done"], 0.0, state.rewards[game.learner])
            if s.truncation_reward is not None:
                capped = state.truncated & ~state.terminated
                gained = jnp.where(capped & ~info["done"], jnp.float32(s.truncation_reward), gained)
            reward = reward + gained
            length = game.episode_length + (first & (action is not None))
            game = game.replace(state=state, episode_length=length)
            finishing = ended & ~info["done"]
            info = tree_where(
                finishing,
                {
                    "episode_return": game.episode_return + reward,
                    "episode_length": length,
                    "outcome": jnp.sign(state.rewards[game.learner]).astype(jnp.float32),
                    "opponent": game.opponent,
                    "done": jnp.ones((), bool),
                },
                info,
            )
            game = tree_where(ended, self._deal(deal_key, opponents), game)
            return game, key, jnp.zeros((), bool), reward, info, moves + 1

        first = jnp.asarray(action is not None)
        game, _, _, reward, info, _ = jax.lax.while_loop(
            going, move, (game, key, first, jnp.float32(0.0), no_info, jnp.int32(0))
        )
        game = game.replace(episode_return=jnp.where(info["done"], 0.0, game.episode_return + reward))
        return game, reward.astype(jnp.float32), info["done"], info

    def observe(self, game: Seat) -> tuple[jax.Array, jax.Array]:
        """The learner's observation and legal mask (it is the learner's decision)."""
        return game.state.observation, game.state.legal_action_mask

    def _opponent_action(
        self, game: Seat, key: jax.Array, opponents: Opponents, deciding: jax.Array
    ) -> jax.Array:
        """The opponent's action at `game`'s decision; the baseline is asked only for a game it
        seats whose decision this really is (`deciding`): its host callback skips the others."""
        state = game.state
        obs, mask = state.observation, state.legal_action_mask
        s = self.s
        latest = policy_logits(opponents.latest, obs, mask, s.depth, s.activation)
        # Every slot's logits, then this game's: under vmap that is a few batched matmuls, where
        # indexing the weights by the game's slot would copy a network per game (4x the rollout).
        slots = jax.vmap(lambda p: policy_logits(p, obs, mask, s.depth, s.activation))(opponents.snapshots)
        snapshot = slots[game.snapshot]
        uniform = jnp.where(mask, 0.0, MASKED_LOGIT)
        logits = jnp.select([game.opponent == LATEST, game.opponent == SNAPSHOT], [latest, snapshot], uniform)
        action = jax.random.categorical(key, logits).astype(jnp.int32)
        if self.baseline is not None:
            chosen = self.baseline(obs, mask, state.current_player, deciding & (game.opponent == BASELINE))
            action = jnp.where(game.opponent == BASELINE, chosen, action)
        return action


# ----- rollout, GAE, update ------------------------------------------------------------------
class Transition(NamedTuple):
    obs: jax.Array
    mask: jax.Array
    action: jax.Array
    log_prob: jax.Array
    value: jax.Array
    reward: jax.Array
    done: jax.Array


@pytree_dataclass
class Runner:
    """Everything the jitted update carries from one call to the next."""

    params: dict
    opt_state: Any
    games: Seat  # batched
    key: jax.Array
    timesteps: jax.Array  # int32 learner decisions so far


def make_optimizer(learning_rate, max_grad_norm: float) -> optax.GradientTransformation:
    """Adam with SB3's eps and global-norm clipping; `learning_rate` a float or an optax schedule."""
    return optax.chain(optax.clip_by_global_norm(max_grad_norm), optax.adam(learning_rate, eps=1e-5))


def make_update(games: LearnerGames, optimizer: optax.GradientTransformation):
    """The jitted function: one rollout of `num_steps` decisions in every game, then PPO epochs.

    (Runner, Opponents) -> (Runner, metrics); metrics hold per-step episode ends for the logger.
    """
    s = games.s
    step = jax.vmap(games.step, in_axes=(0, 0, 0, None))

    def rollout(runner: Runner, opponents: Opponents):
        def one(carry, _):
            params, batch, key = carry
            key, act_key, step_key = jax.random.split(key, 3)
            obs, mask = batch.state.observation, batch.state.legal_action_mask
            logits, value = forward(params, obs, mask, s.depth, s.activation)
            action = jax.random.categorical(act_key, logits).astype(jnp.int32)
            log_prob = jax.nn.log_softmax(logits)[jnp.arange(s.num_envs), action]
            batch, reward, done, info = step(batch, action, jax.random.split(step_key, s.num_envs), opponents)
            return (params, batch, key), (Transition(obs, mask, action, log_prob, value, reward, done), info)

        (_, batch, key), (trajectory, infos) = jax.lax.scan(
            one, (runner.params, runner.games, runner.key), None, length=s.num_steps
        )
        return runner.replace(games=batch, key=key), trajectory, infos

    def advantages(trajectory: Transition, last_value: jax.Array):
        def back(carry, t):
            gae, next_value = carry
            delta = t.reward + s.gamma * next_value * (1 - t.done) - t.value
            gae = delta + s.gamma * s.gae_lambda * (1 - t.done) * gae
            return (gae, t.value), gae

        _, adv = jax.lax.scan(back, (jnp.zeros_like(last_value), last_value), trajectory, reverse=True)
        return adv, adv + trajectory.value

    def loss(params, batch: Transition, adv, returns):
        logits, value = forward(params, batch.obs, batch.mask, s.depth, s.activation)
        log_probs = jax.nn.log_softmax(logits)
        new_log_prob = jnp.take_along_axis(log_probs, batch.action[:, None], axis=1)[:, 0]
        ratio = jnp.exp(new_log_prob - batch.log_prob)
        norm = (adv - adv.mean()) / (adv.std() + 1e-8)
        clipped = jnp.clip(ratio, 1 - s.clip_range, 1 + s.clip_range)
        policy_loss = -jnp.minimum(ratio * norm, clipped * norm).mean()
        value_loss = ((returns - value) ** 2).mean()
        probs = jnp.exp(log_probs)
        entropy = -(jnp.where(batch.mask, probs * log_probs, 0.0)).sum(-1).mean()
        total = policy_loss + s.vf_coef * value_loss - s.ent_coef * entropy
        approx_kl = ((ratio - 1) - jnp.log(ratio)).mean()
        clip_fraction = (jnp.abs(ratio - 1) > s.clip_range).mean()
        return total, (policy_loss, value_loss, entropy, approx_kl, clip_fraction)

    grad = jax.value_and_grad(loss, has_aux=True)

    def update(runner: Runner, opponents: Opponents):
        runner, trajectory, infos = rollout(runner, opponents)
        obs, mask = runner.games.state.observation, runner.games.state.legal_action_mask
        _, last_value = forward(runner.params, obs, mask, s.depth, s.activation)
        adv, returns = advantages(trajectory, last_value)
        flat = jax.tree_util.tree_map(
            lambda x: x.reshape((s.batch, *x.shape[2:])), (trajectory, adv, returns)
        )
        minibatches = s.batch // s.minibatch_size

        def epoch(carry, _):
            params, opt_state, key = carry
            key, perm_key = jax.random.split(key)
            order = jax.random.permutation(perm_key, s.batch)[: minibatches * s.minibatch_size]
            shuffled = jax.tree_util.tree_map(
                lambda x: x[order].reshape((minibatches, s.minibatch_size, *x.shape[1:])), flat
            )

            def minibatch(carry, mb):
                params, opt_state = carry
                (_, aux), grads = grad(params, *mb)
                updates, opt_state = optimizer.update(grads, opt_state, params)
                return (optax.apply_updates(params, updates), opt_state), aux

            (params, opt_state), aux = jax.lax.scan(minibatch, (params, opt_state), shuffled)
            return (params, opt_state, key), aux

        (params, opt_state, key), aux = jax.lax.scan(
            epoch, (runner.params, runner.opt_state, runner.key), None, length=s.n_epochs
        )
        explained = 1 - jnp.var(returns - trajectory.value) / (jnp.var(returns) + 1e-8)
        metrics = {
            "policy_loss": aux[0].mean(),
            "value_loss": aux[1].mean(),
            "entropy": aux[2].mean(),
            "approx_kl": aux[3].mean(),
            "clip_fraction": aux[4].mean(),
            "explained_variance": explained,
            "episodes": infos,
        }
        runner = runner.replace(
            params=params, opt_state=opt_state, key=key, timesteps=runner.timesteps + s.batch
        )
        return runner, metrics

    return jax.jit(update)


def start(games: LearnerGames, key: jax.Array, params: dict, optimizer, opponents: Opponents) -> Runner:
    """A Runner with fresh games (each stepped to the learner's first decision)."""
    reset_key, key = jax.random.split(key)
    batch = jax.jit(jax.vmap(games.reset, in_axes=(0, None)))(
        jax.random.split(reset_key, games.s.num_envs), opponents
    )
    return Runner(
        params=params, opt_state=optimizer.init(params), games=batch, key=key, timesteps=jnp.int32(0)
    )


def empty_snapshots(params: dict, slots: int) -> dict:
    """`slots` snapshot slots shaped like `params` (zeros until filled)."""
    return jax.tree_util.tree_map(lambda leaf: jnp.zeros((max(slots, 1), *leaf.shape), leaf.dtype), params)


def push_snapshot(snapshots: dict, ready: int, params: dict, slots: int) -> tuple[dict, int]:
    """Keep `params` as the newest snapshot (the oldest leaves when the window is full)."""
    if ready < slots:
        return jax.tree_util.tree_map(lambda s, p: s.at[ready].set(p), snapshots, params), ready + 1
    rolled = jax.tree_util.tree_map(lambda s, p: jnp.concatenate([s[1:], p[None]]), snapshots, params)
    return rolled, ready
