"""`trainer: jax`: masked PPO whose rollouts and updates run inside one jitted function, on the
batched twins (PureJaxRL's design: no Python between two decisions).

Reads top to bottom: the network (SB3 MaskablePPO's layers, under the names its checkpoints use),
the learner's view of a game (opponents move inside the step until the learner decides again), the
rollout, GAE, the PPO update. `training/jitted/trainer.py` runs it: checkpoints, evaluation, resume.

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
from fowlplay.envs.core.twin import State, TwinEnv, pytree_dataclass

#: SB3's MaskableCategorical gives a masked action this logit: probability exactly 0 in float32.
MASKED_LOGIT = -1e8
ACTIVATIONS = {"tanh": jnp.tanh, "relu": jax.nn.relu}


# ----- the network -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Embedding:
    """An observation piece laid out as [items][features] (Murder Most Fowl's grids: [seat x cell]
    [cell features]) that reaches each network's first hidden layer through one `features -> dim`
    linear map shared by all its items, then the layer's weights on the items' `dim`-wide codes.
    The composition is linear, so it is exactly a dense first layer (`dense_weights`): checkpoints
    hold that layer and load as any other. It costs the first layer `items x dim` inputs where the
    dense layer has `items x features`, and every item learns from what the others teach the map."""

    start: int  # the piece's first entry in the observation
    items: int
    features: int
    dim: int

    @property
    def stop(self) -> int:
        return self.start + self.items * self.features

    @property
    def codes_stop(self) -> int:
        """End of the codes' columns in the first layer's (reduced) input."""
        return self.start + self.items * self.dim

    def reduced(self, obs_size: int) -> int:
        """The first layer's inputs: the observation with the piece replaced by its codes."""
        return obs_size - self.items * (self.features - self.dim)


def _embedding_name(net: str) -> str:
    return f"mlp_extractor.{net}.0.embedding"


def init_params(
    key: jax.Array, obs_size: int, num_actions: int, net_arch: list[int], embedding: Embedding | None = None
) -> dict[str, jax.Array]:
    """SB3's initialisation: orthogonal weights (gain sqrt 2 in the hidden layers, 0.01 for the
    action head, 1 for the value head) and zero biases, named as SB3's MaskablePPO policy names them
    (with `embedding`, each network's first layer reads the reduced input and its map is an extra
    `<first layer>.embedding`, orthogonal with gain 1)."""
    params: dict[str, jax.Array] = {}
    keys = iter(jax.random.split(key, 2 * len(net_arch) + 4))

    def layer(name: str, fan_in: int, fan_out: int, gain: float) -> None:
        weight = jax.nn.initializers.orthogonal(gain)(next(keys), (fan_out, fan_in), jnp.float32)
        params[f"{name}.weight"] = weight
        params[f"{name}.bias"] = jnp.zeros(fan_out, jnp.float32)

    for net in ("policy_net", "value_net"):
        fan_in = obs_size
        if embedding is not None and net_arch:
            fan_in = embedding.reduced(obs_size)
            params[_embedding_name(net)] = jax.nn.initializers.orthogonal(1.0)(
                next(keys), (embedding.dim, embedding.features), jnp.float32
            )
        for i, width in enumerate(net_arch):
            layer(f"mlp_extractor.{net}.{2 * i}", fan_in, width, math.sqrt(2))
            fan_in = width
    last = net_arch[-1] if net_arch else obs_size
    layer("action_net", last, num_actions, 0.01)
    layer("value_net", last, 1, 1.0)
    return params


def dense_weights(params: dict, embedding: Embedding | None) -> dict[str, jax.Array]:
    """The same network with each embedded first layer multiplied out into the dense layer it
    equals, under SB3's names alone: what a checkpoint holds (identity without an embedding)."""
    out = dict(params)
    for net in ("policy_net", "value_net"):
        code = out.pop(_embedding_name(net), None)
        if code is None:
            continue
        name = f"mlp_extractor.{net}.0.weight"
        w, e = out[name], embedding
        lo, hi = e.start, e.codes_stop
        grid = jnp.einsum("hid,df->hif", w[:, lo:hi].reshape(-1, e.items, e.dim), code)
        out[name] = jnp.concatenate([w[:, :lo], grid.reshape(w.shape[0], -1), w[:, hi:]], axis=1)
    return out


def _first_layer(params: dict, net: str, x: jax.Array, embedding: Embedding | None) -> jax.Array:
    w, b = params[f"mlp_extractor.{net}.0.weight"], params[f"mlp_extractor.{net}.0.bias"]
    code = params.get(_embedding_name(net))
    if code is None:  # a dense layer (also a snapshot's: snapshots are kept dense)
        return x @ w.T + b
    e = embedding
    lo, hi = e.start, e.codes_stop
    items = x[..., lo : e.stop].reshape(*x.shape[:-1], e.items, e.features)
    codes = (items @ code.T).reshape(*x.shape[:-1], hi - lo)
    return x[..., :lo] @ w[:, :lo].T + codes @ w[:, lo:hi].T + x[..., e.stop :] @ w[:, hi:].T + b


def _mlp(params: dict, net: str, x: jax.Array, depth: int, activation: str, embedding=None) -> jax.Array:
    act = ACTIVATIONS[activation]
    if depth:
        x = act(_first_layer(params, net, x, embedding))
    for i in range(1, depth):
        x = act(
            x @ params[f"mlp_extractor.{net}.{2 * i}.weight"].T + params[f"mlp_extractor.{net}.{2 * i}.bias"]
        )
    return x


def policy_logits(
    params: dict,
    obs: jax.Array,
    mask: jax.Array,
    depth: int,
    activation: str,
    embedding: Embedding | None = None,
) -> jax.Array:
    """Masked logits of one observation or a batch (the policy half alone: what an opponent needs)."""
    pi = _mlp(params, "policy_net", obs, depth, activation, embedding)
    logits = pi @ params["action_net.weight"].T + params["action_net.bias"]
    return jnp.where(mask, logits, MASKED_LOGIT)


def forward(
    params: dict,
    obs: jax.Array,
    mask: jax.Array,
    depth: int,
    activation: str,
    embedding: Embedding | None = None,
):
    """(masked logits, value) of one observation or a batch."""
    vf = _mlp(params, "value_net", obs, depth, activation, embedding)
    value = (vf @ params["value_net.weight"].T + params["value_net.bias"])[..., 0]
    return policy_logits(params, obs, mask, depth, activation, embedding), value


def probabilities(
    params: dict,
    obs: jax.Array,
    mask: jax.Array,
    depth: int,
    activation: str,
    embedding: Embedding | None = None,
) -> jax.Array:
    """The masked action distribution (what the exported checkpoint must reproduce)."""
    return jax.nn.softmax(policy_logits(params, obs, mask, depth, activation, embedding), axis=-1)


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
    #: Cut a game off (truncated, paying `truncation_reward`) at the learner's turn once it has made
    #: this many decisions in it, as the other trainers' `max_decisions` (None: no cut).
    max_decisions: int | None = None
    #: Bound on a rollout's loop passes per learner decision (a safety net for while_loop; a slot
    #: it leaves empty is left out of the update).
    max_moves_per_decision: int = 1_000
    #: A piece of the observation read through a shared per-item map (`Embedding`; None: dense).
    embedding: Embedding | None = None
    #: Weight of potential-based shaping from the twin's `potential` of the learner's seat (0: off):
    #: each slot gains `shaping * (gamma * phi(next) - phi(now))`, phi 0 once the game is over.
    shaping: float = 0.0
    #: Weight of KL(learner || `Opponents.reference`) in the loss (0: off; `jax.imitate_kl`).
    imitate_kl: float = 0.0

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
    episode_return: jax.Array  # float32 learner's return so far this game
    episode_length: jax.Array  # int32 learner decisions so far this game


class Opponents(NamedTuple):
    """What the other seats play: the snapshot slots (stacked) and how many hold a snapshot. The
    latest learner is the rollout's own network (`Runner.params`), so it is not kept twice."""

    snapshots: dict  # every leaf has a leading axis of `snapshot_slots`
    ready: jax.Array  # int32 snapshots available
    #: The imitated policy's dense weights, which `Settings.imitate_kl` holds the learner near (None: off).
    reference: dict | None = None


#: A baseline as a traced function of a batch: (observations, legal masks, seats, wanted) ->
#: actions; rows not `wanted` get any action (it is discarded), so a host callback can skip them.
Baseline = Any


def rows_where(condition: jax.Array, on_true: Any, on_false: Any) -> Any:
    """Leaf-wise `jnp.where` of two batched pytrees, row by row (`condition` has one flag per row)."""

    def pick(a, b):
        return jnp.where(condition.reshape(condition.shape + (1,) * (a.ndim - condition.ndim)), a, b)

    return jax.tree_util.tree_map(pick, on_true, on_false)


def opponent_rows(weights: tuple[float, ...], num_envs: int) -> np.ndarray:
    """Each game row's opponent kind, rows of one kind side by side in kind order: the pool's
    weights times `num_envs` rounded by largest remainder, every kind of positive weight at least
    one row. Stratified where a draw per game would vary, and it lets each kind's network (or
    baseline) run on its own rows alone."""
    weights = np.asarray(weights, np.float64)
    share = weights / weights.sum() * num_envs
    rows = np.floor(share).astype(int)
    rows[(weights > 0) & (rows == 0)] = 1
    while rows.sum() < num_envs:
        rows[np.argmax(np.where(weights > 0, share - rows, -np.inf))] += 1
    while rows.sum() > num_envs:
        rows[np.argmax(np.where(rows > 1, rows - share, -np.inf))] -= 1
    return np.repeat(np.arange(len(weights)), rows).astype(np.int32)


class LearnerGames:
    """Games seen from the learner's seat: each dealt with a drawn seat, against its row's
    opponent kind (`opponent_rows`)."""

    def __init__(self, env: TwinEnv, settings: Settings, baseline: Baseline | None = None) -> None:
        self.env, self.s, self.baseline = env, settings, baseline
        weights = np.asarray(settings.opponent_weights, np.float64)
        if baseline is None:
            weights[BASELINE] = 0.0
        if settings.num_envs < np.count_nonzero(weights):
            raise ValueError(
                f"jax.num_envs ({settings.num_envs}) must give each opponent kind of the pool a game "
                f"(at least {np.count_nonzero(weights)})"
            )
        self.kinds = opponent_rows(tuple(weights), settings.num_envs)
        #: Each kind's rows, as a slice of the batch.
        self.rows = {
            kind: slice(
                int(np.searchsorted(self.kinds, kind)), int(np.searchsorted(self.kinds, kind, "right"))
            )
            for kind in (LATEST, SNAPSHOT, RANDOM, BASELINE)
        }

    def reset(self, key: jax.Array, kind: jax.Array) -> Seat:
        """A new game against an opponent of `kind` (one, unbatched: vmap it with the rows' kinds)
        with a drawn seat; it may be an opponent's decision first (the rollout plays it)."""
        deal, seat_key = jax.random.split(key)
        n = self.env.num_players
        learner = (
            jnp.int32(self.s.learner_seat)
            if self.s.learner_seat is not None
            else jax.random.randint(seat_key, (), 0, n, jnp.int32)
        )
        return Seat(
            state=self.env.init(deal),
            learner=learner,
            opponent=jnp.int32(kind),
            episode_return=jnp.float32(0.0),
            episode_length=jnp.int32(0),
        )


# ----- rollout, GAE, update ------------------------------------------------------------------
class Transition(NamedTuple):
    obs: jax.Array
    mask: jax.Array
    action: jax.Array
    log_prob: jax.Array
    value: jax.Array
    reward: jax.Array  # the learner's rewards from its decision up to its next one
    done: jax.Array  # the game ended before the learner's next decision
    valid: jax.Array  # the slot holds a decision (False only if the safety bound cut a rollout)


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


def make_rollout(games: LearnerGames):
    """(params, batch of Seat, key, Opponents) -> (batch, key, Transition [T, N], episodes [T, N]).

    Every game moves one decision per loop pass, whoever's it is: the learner's own (recorded in
    the game's next slot) or an opponent's (its reward goes to the learner's last slot). A game
    whose `num_steps` slots are full plays on to the learner's next decision and waits there, so
    every game ends the rollout at a learner's decision (its value bootstraps GAE) and the next
    rollout starts with it. The loop runs until the last game waits: about `num_steps` times the
    decisions per learner decision, where stepping all games until each reached the learner again
    cost the slowest game's count at every learner decision.
    """
    # Kept whole (`rollout` most of it): `rollout` is one jitted while-loop whose body `move` takes
    # every game one decision on, threading a seven-part carry (games, slots filled, gathering flags,
    # trajectory, episodes, key, passes); `due` and `waiting` close over the same static settings.
    # Split, each piece would take and hand back that carry; whole, one decision reads top to bottom
    # as the step it traces, and the traced program is the one the fingerprints were taken from.
    s, env = games.s, games.env
    n, t_max = s.num_envs, s.num_steps
    rows = jnp.arange(n)
    deal = jax.vmap(games.reset)
    kinds = jnp.asarray(games.kinds)
    step = jax.vmap(env.step)

    def due(batch: Seat) -> jax.Array:
        """At the learner's turn in a game that `max_decisions` cuts off there."""
        if s.max_decisions is None:
            return jnp.zeros(n, bool)
        return (batch.state.current_player == batch.learner) & (batch.episode_length >= s.max_decisions)

    def waiting(batch: Seat, count: jax.Array) -> jax.Array:
        # A game due for its cut is cut in this rollout, whose last slot its truncation reward is.
        learners_turn = batch.state.current_player == batch.learner
        return (count == t_max) & learners_turn & ~due(batch)

    def rollout(params: dict, batch: Seat, key: jax.Array, opponents: Opponents):
        # Kept whole, as the comment at the top of `make_rollout` says: the loop and its carry.
        key, slot_key = jax.random.split(key)
        # One snapshot per rollout for every game that seats one: one network's cost a decision,
        # where each game's own slot costs every slot's (the pool's law over rollouts is the same).
        slot = jax.random.randint(slot_key, (), 0, jnp.maximum(opponents.ready, 1), jnp.int32)
        snapshot = jax.tree_util.tree_map(lambda leaf: leaf[slot], opponents.snapshots)
        obs_size, num_actions = env.observation_shape[0], env.num_actions
        trajectory = Transition(
            obs=jnp.zeros((t_max, n, obs_size), jnp.float32),
            mask=jnp.zeros((t_max, n, num_actions), bool),
            action=jnp.zeros((t_max, n), jnp.int32),
            log_prob=jnp.zeros((t_max, n), jnp.float32),
            value=jnp.zeros((t_max, n), jnp.float32),
            reward=jnp.zeros((t_max, n), jnp.float32),
            done=jnp.zeros((t_max, n), bool),
            valid=jnp.zeros((t_max, n), bool),
        )
        episodes = {
            "episode_return": jnp.zeros((t_max, n), jnp.float32),
            "episode_length": jnp.zeros((t_max, n), jnp.int32),
            "outcome": jnp.zeros((t_max, n), jnp.float32),
            "opponent": jnp.zeros((t_max, n), jnp.int32),
            "done": jnp.zeros((t_max, n), bool),
        }
        count = jnp.zeros(n, jnp.int32)  # slots filled
        # The learner's last slot still gathers rewards (False before its first slot this rollout
        # and once that slot's game has ended: a new game's opening moves reward nobody).
        gathering = jnp.zeros(n, bool)
        bound = t_max * s.max_moves_per_decision

        def going(carry):
            batch, count, *_, passes = carry
            return ~waiting(batch, count).all() & (passes < bound)

        def move(carry):
            batch, count, gathering, trajectory, episodes, key, passes = carry
            key, act_key, opp_key, step_key, deal_key = jax.random.split(key, 5)
            state = batch.state
            obs, mask = state.observation, state.legal_action_mask
            active = ~waiting(batch, count)
            cut = active & due(batch)  # ends here instead of deciding
            own = active & (state.current_player == batch.learner) & ~cut
            # The learner's network on every row: its action where the decision is the learner's
            # (or the latest learner's, an opponent of kind LATEST), its value for the slot.
            logits, value = forward(params, obs, mask, s.depth, s.activation, s.embedding)
            sampled = jax.random.categorical(act_key, logits).astype(jnp.int32)
            log_prob = jax.nn.log_softmax(logits)[rows, sampled]
            deciding = active & ~own & ~cut
            other = _opponent_actions(
                games, batch, obs, mask, sampled, opponents, snapshot, opp_key, deciding
            )
            action = jnp.where(own, sampled, other)
            slot = _slots(jnp.where(own, count, t_max), t_max)  # t_max: none
            trajectory = trajectory._replace(
                obs=_put(trajectory.obs, slot, obs),
                mask=_put(trajectory.mask, slot, mask),
                action=_put(trajectory.action, slot, action),
                log_prob=_put(trajectory.log_prob, slot, log_prob),
                value=_put(trajectory.value, slot, value),
                valid=trajectory.valid | slot,
            )
            count = count + own
            gathering = gathering | own
            stepped = step(state, action, jax.random.split(step_key, n))
            ended = stepped.terminated | stepped.truncated | cut
            gained = stepped.rewards[rows, batch.learner]
            scoring = active & gathering
            last = _slots(jnp.where(scoring, count - 1, t_max), t_max)
            if s.truncation_reward is not None:
                capped = stepped.truncated & ~stepped.terminated
                gained = jnp.where(capped, jnp.float32(s.truncation_reward), gained)
                # A cut game's last slot is paid the truncation reward in place of what it gathered
                # since the learner's decision (as the other trainers' cut replaces the step's reward).
                so_far = jnp.where(last, trajectory.reward, 0.0).sum(0)
                gained = jnp.where(cut, jnp.float32(s.truncation_reward) - so_far, gained)
            else:
                gained = jnp.where(cut, 0.0, gained)
            episode_return = batch.episode_return + jnp.where(scoring, gained, 0.0)
            pay = gained
            if s.shaping:
                # Into the slots only (the episode's return stays the game's): -phi where the learner
                # decides, +gamma phi where its game comes back to its turn; nothing once it ended.
                phi = jax.vmap(env.potential)
                back = scoring & ~ended & (stepped.current_player == batch.learner)
                bonus = jnp.where(back, s.gamma * phi(stepped, batch.learner), 0.0)
                # A cut game's last slot still ends at the truncation reward alone (`gained` above
                # makes up what the slot holds, shaping terms included, and a cut pays no bonus).
                pay = gained + s.shaping * (bonus - jnp.where(own, phi(state, batch.learner), 0.0))
            finishing = scoring & ended
            trajectory = trajectory._replace(
                reward=trajectory.reward + jnp.where(last, pay, 0.0),
                done=_put(trajectory.done, last, ended),
            )
            ending = _slots(jnp.where(finishing, count - 1, t_max), t_max)
            outcome = jnp.where(cut, 0.0, jnp.sign(stepped.rewards[rows, batch.learner]))
            length = batch.episode_length + own
            episodes = {
                "episode_return": _put(episodes["episode_return"], ending, episode_return),
                "episode_length": _put(episodes["episode_length"], ending, length),
                "outcome": _put(episodes["outcome"], ending, outcome),
                "opponent": _put(episodes["opponent"], ending, batch.opponent),
                "done": episodes["done"] | ending,
            }
            moved = batch.replace(state=stepped, episode_return=episode_return, episode_length=length)
            moved = rows_where(ended, deal(jax.random.split(deal_key, n), kinds), moved)
            batch = rows_where(active, moved, batch)
            gathering = gathering & ~(active & ended)
            return batch, count, gathering, trajectory, episodes, key, passes + 1

        carry = (batch, count, gathering, trajectory, episodes, key, jnp.int32(0))
        batch, count, _, trajectory, episodes, key, _ = jax.lax.while_loop(going, move, carry)
        return batch, key, trajectory, episodes

    return rollout


def _slots(slot: jax.Array, t_max: int) -> jax.Array:
    """[T, N] flags of each game's slot `slot` (one per game; `t_max` flags none)."""
    return jnp.arange(t_max)[:, None] == slot[None, :]


def _put(buffer: jax.Array, slots: jax.Array, values: jax.Array) -> jax.Array:
    """`buffer` [T, N, ...] with each game's flagged slot set to its row of `values` [N, ...]: a
    select over the whole buffer, which XLA on a CPU runs far faster than a scatter."""
    flags = slots.reshape(slots.shape + (1,) * (buffer.ndim - 2))
    return jnp.where(flags, values[None].astype(buffer.dtype), buffer)


def _opponent_actions(
    games: LearnerGames,
    batch: Seat,
    obs: jax.Array,
    mask: jax.Array,
    latest: jax.Array,
    opponents: Opponents,
    snapshot: dict,
    key: jax.Array,
    deciding: jax.Array,
) -> jax.Array:
    """Each row's opponent action at its decision, each kind computed on its own rows only:
    `latest` (the learner's sampled action), the rollout's snapshot (the latest until the first
    snapshot is taken), uniform random, or the baseline, asked only for the decisions that really
    are an opponent's (`deciding`: its host callback skips the others)."""
    s, rows = games.s, games.rows
    snap_key, random_key = jax.random.split(key)
    pieces = [latest[rows[LATEST]]]
    snap = rows[SNAPSHOT]
    if snap.stop > snap.start:
        logits = policy_logits(snapshot, obs[snap], mask[snap], s.depth, s.activation)
        drawn = jax.random.categorical(snap_key, logits).astype(jnp.int32)
        pieces.append(jnp.where(opponents.ready > 0, drawn, latest[snap]))
    some = rows[RANDOM]
    pieces.append(
        jax.random.categorical(random_key, jnp.where(mask[some], 0.0, MASKED_LOGIT)).astype(jnp.int32)
    )
    base = rows[BASELINE]
    if base.stop > base.start:
        seats = batch.state.current_player[base]
        pieces.append(games.baseline(obs[base], mask[base], seats, deciding[base]).astype(jnp.int32))
    return jnp.concatenate(pieces)


def _variance(x: jax.Array, where: jax.Array) -> jax.Array:
    """The variance of `x` over the entries `where` holds."""
    count = jnp.maximum(where.sum(), 1)
    mean = jnp.where(where, x, 0.0).sum() / count
    return jnp.where(where, (x - mean) ** 2, 0.0).sum() / count


def _advantages(s: Settings, trajectory: Transition, last_value: jax.Array):
    """GAE over a rollout's slots, backwards from `last_value`: (advantages, returns)."""

    def back(carry, t):
        gae, next_value = carry
        delta = t.reward + s.gamma * next_value * (1 - t.done) - t.value
        gae = delta + s.gamma * s.gae_lambda * (1 - t.done) * gae
        return (gae, t.value), gae

    _, adv = jax.lax.scan(back, (jnp.zeros_like(last_value), last_value), trajectory, reverse=True)
    return adv, adv + trajectory.value


def _loss(s: Settings, params, batch: Transition, adv, returns, reference):
    """PPO's clipped loss of a minibatch (SB3's: advantages normalised over the valid slots, value
    and entropy terms), plus `imitate_kl` times the KL from the imitated policy; (total, parts)."""
    logits, value = forward(params, batch.obs, batch.mask, s.depth, s.activation, s.embedding)
    log_probs = jax.nn.log_softmax(logits)
    new_log_prob = jnp.take_along_axis(log_probs, batch.action[:, None], axis=1)[:, 0]
    ratio = jnp.exp(new_log_prob - batch.log_prob)
    weight = batch.valid.astype(jnp.float32)
    total_weight = jnp.maximum(weight.sum(), 1.0)

    def mean(x):
        return (x * weight).sum() / total_weight

    centred = adv - mean(adv)
    norm = centred / (jnp.sqrt(mean(centred**2)) + 1e-8)
    clipped = jnp.clip(ratio, 1 - s.clip_range, 1 + s.clip_range)
    policy_loss = -mean(jnp.minimum(ratio * norm, clipped * norm))
    value_loss = mean((returns - value) ** 2)
    probs = jnp.exp(log_probs)
    entropy = mean(-(jnp.where(batch.mask, probs * log_probs, 0.0)).sum(-1))
    total = policy_loss + s.vf_coef * value_loss - s.ent_coef * entropy
    if s.imitate_kl:
        ref = jax.nn.log_softmax(policy_logits(reference, batch.obs, batch.mask, s.depth, s.activation))
        kl = (jnp.where(batch.mask, probs * (log_probs - ref), 0.0)).sum(-1)
        total = total + s.imitate_kl * mean(kl)
    approx_kl = mean((ratio - 1) - jnp.log(ratio))
    clip_fraction = mean((jnp.abs(ratio - 1) > s.clip_range).astype(jnp.float32))
    return total, (policy_loss, value_loss, entropy, approx_kl, clip_fraction)


def make_update(games: LearnerGames, optimizer: optax.GradientTransformation):
    """The jitted function: one rollout of `num_steps` learner decisions in every game, then PPO
    epochs. (Runner, Opponents) -> (Runner, metrics); metrics hold each slot's episode end."""
    s = games.s
    rollout = make_rollout(games)

    grad = jax.value_and_grad(lambda *args: _loss(s, *args), has_aux=True)

    def update(runner: Runner, opponents: Opponents):
        games_after, key, trajectory, episodes = rollout(runner.params, runner.games, runner.key, opponents)
        obs, mask = games_after.state.observation, games_after.state.legal_action_mask
        _, last_value = forward(runner.params, obs, mask, s.depth, s.activation, s.embedding)
        adv, returns = _advantages(s, trajectory, last_value)
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
                (_, aux), grads = grad(params, *mb, opponents.reference)
                updates, opt_state = optimizer.update(grads, opt_state, params)
                return (optax.apply_updates(params, updates), opt_state), aux

            (params, opt_state), aux = jax.lax.scan(minibatch, (params, opt_state), shuffled)
            return (params, opt_state, key), aux

        (params, opt_state, key), aux = jax.lax.scan(
            epoch, (runner.params, runner.opt_state, key), None, length=s.n_epochs
        )
        valid = trajectory.valid
        explained = 1 - _variance(returns - trajectory.value, valid) / (_variance(returns, valid) + 1e-8)
        metrics = {
            "policy_loss": aux[0].mean(),
            "value_loss": aux[1].mean(),
            "entropy": aux[2].mean(),
            "approx_kl": aux[3].mean(),
            "clip_fraction": aux[4].mean(),
            "explained_variance": explained,
            "episodes": episodes,
        }
        runner = runner.replace(
            params=params,
            opt_state=opt_state,
            games=games_after,
            key=key,
            timesteps=runner.timesteps + valid.sum().astype(jnp.int32),
        )
        return runner, metrics

    return jax.jit(update)


def start(games: LearnerGames, key: jax.Array, params: dict, optimizer) -> Runner:
    """A Runner with fresh games (the first rollout plays any opponents' decisions before the
    learner's first)."""
    reset_key, key = jax.random.split(key)
    batch = jax.jit(jax.vmap(games.reset))(
        jax.random.split(reset_key, games.s.num_envs), jnp.asarray(games.kinds)
    )
    return Runner(
        params=params, opt_state=optimizer.init(params), games=batch, key=key, timesteps=jnp.int32(0)
    )


def empty_snapshots(params: dict, slots: int) -> dict:
    """`slots` snapshot slots shaped like `params` (zeros until filled)."""
    return jax.tree_util.tree_map(lambda leaf: jnp.zeros((max(slots, 1), *leaf.shape), leaf.dtype), params)


@jax.jit
def _pushed(snapshots: dict, ready: jax.Array, params: dict) -> dict:
    # One compiled program for every count (a Python index would compile one per slot and leaf).
    slots = jax.tree_util.tree_leaves(snapshots)[0].shape[0]

    def one(stack, leaf):
        rolled = jnp.concatenate([stack[1:], leaf[None]])
        placed = jax.lax.dynamic_update_index_in_dim(stack, leaf, jnp.minimum(ready, slots - 1), 0)
        return jnp.where(ready < slots, placed, rolled)

    return jax.tree_util.tree_map(one, snapshots, params)


def push_snapshot(snapshots: dict, ready: int, params: dict, slots: int) -> tuple[dict, int]:
    """Keep `params` as the newest snapshot (the oldest leaves when the window is full)."""
    return _pushed(snapshots, jnp.int32(ready), params), min(ready + 1, slots)
