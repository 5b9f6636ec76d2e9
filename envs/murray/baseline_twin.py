"""Murray's baseline twin: `envs/murray/baseline.py`'s `BaselineAgent.act` as one pure JAX function
(`fowlplay.envs.make_jax_baseline("murray_frog_v0", **options)`).

Every action id is rated at once, block by block in the reference's action layout, and the first
best legal one taken, as the baseline's `max` over its legal ratings takes it. The baseline's
ratings are float64 multiples of 0.1 give or take float64 rounding (a card's usefulness is 3 +
0.5 x value, -0.2 x value, ...; a pass or discard adds 0.1 x value), and the rounding can split
two ratings that are equal in exact arithmetic. So a rating is held as a key (I, d): I = 10 x the
rating rounded to an integer, d = the float64 rating's exact distance from I / 10 as a float32;
the keys of the ratings that involve a usefulness are read from tables of the reference's own
float64 values, the others are whole numbers (d = 0). Comparing keys is comparing the float64
ratings (distinct multiples of 0.1 differ by far more than any rounding, and d orders the rest),
and tests/envs/test_baseline_twin.py holds the twin equal to the baseline decision for decision.
"""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
from fowlplay.envs.core.baseline_twin import BaselineTwin as _Base
from fowlplay.envs.core.baseline_twin import first_best
from fowlplay.envs.murray.baseline import _MEAN_HAND_VALUE, BaselineAgent
from fowlplay.envs.murray.cards import (
    ABILITY_CARDS,
    COMMON_FLIES,
    FLIES,
    HAND_KINDS,
    NUM_INSECTS,
    SWARM_COMBOS,
    VALUE,
    Card,
)
from fowlplay.envs.murray.rules import Decision, swarm_points

_TURN, _ROBBER_SWARM, _ROBBER_TAKE = int(Decision.TURN), int(Decision.ROBBER_SWARM), int(Decision.ROBBER_TAKE)
_HAWK = int(Card.HAWK)
#: `_usefulness` kinds: the Hawk, a value I hold a swarm of, two or more, one, none of that value.
_HAWK_USE, _SWARMED, _PAIR, _SINGLE, _NONE = range(5)


def _use_value(kind: int, value: int) -> float:
    """`BaselineAgent._usefulness`'s float64 result for its kind and the card's value."""
    return (-100.0, 10.0 + value, 8.0 + value, 3.0 + 0.5 * value, -0.2 * value)[kind]


def _keys(ratings) -> tuple[jax.Array, jax.Array]:
    """float64 ratings as keys (I, d): I = round(10 x rating) as float32, d = rating - I / 10 exactly,
    rounded to float32 (which keeps their order: d is tiny, and float32 resolves it)."""
    ratings = np.asarray(ratings, np.float64)
    tens = np.rint(ratings * 10.0)
    rest = [float(Fraction(float(r)) - Fraction(int(t), 10)) for r, t in zip(ratings.flat, tens.flat)]
    return jnp.asarray(tens.astype(np.float32)), jnp.asarray(
        np.reshape(rest, ratings.shape).astype(np.float32)
    )


def _use_id(kind, value):
    """Index of (kind, value) in the usefulness tables."""
    return kind * 6 + value


def _whole(x) -> tuple[jax.Array, jax.Array]:
    """The key (10 x, 0) of a whole-numbered rating."""
    return jnp.asarray(x, jnp.float32) * 10.0, jnp.zeros_like(jnp.asarray(x, jnp.float32))


def _key(table, index) -> tuple[jax.Array, jax.Array]:
    """The keys at `index` of a table of keys."""
    return table[0][index], table[1][index]


class BaselineTwin(_Base):
    """The greedy swarm builder and wrecker of `murray_frog_v0` in JAX."""

    def __init__(self, options, observer, layout) -> None:
        super().__init__(options, observer, layout)
        if _MEAN_HAND_VALUE != 2.6:  # `_leading` below compares 5 x scores, exact for 2.6 = 13 / 5
            raise ValueError("the baseline twin's leading test assumes a mean hand value of 2.6")
        # The reference agent's own observation scales (copies, cards in the game, 2 x Murrays).
        self.unscale = jnp.asarray(BaselineAgent(options)._unscale.astype(np.float32))
        self.value = np.asarray(VALUE, np.int32)
        uses = [_use_value(kind, value) for kind in range(5) for value in range(6)]
        self.use_keys = _keys(uses)
        values = range(6)
        # Swap: 20 + gain if gain >= 2 else -5, gain = usefulness taken - usefulness given (float64).
        swap = [[20.0 + (a - b) if a - b >= 2 else -5.0 for b in uses] for a in uses]
        self.swap_keys = _keys(swap)
        # Pass: -10 - usefulness + 0.1 x value; discard: -usefulness + 0.1 x value (left to right).
        self.pass_keys = _keys([[-10.0 - u + 0.1 * v for v in values] for u in uses])
        self.discard_keys = _keys([[-u + 0.1 * v for v in values] for u in uses])
        # Take: loss + usefulness + 0.1 x value, the loss a whole number in -top..top.
        self.loss_top = options.big_swarm_points + options.perfect_swarm_points + max(VALUE)
        losses = range(-self.loss_top, self.loss_top + 1)
        self.take_keys = _keys(
            [[[float(loss) + u + 0.1 * v for v in values] for u in uses] for loss in losses]
        )
        # Create: fixed per combination.
        create = []
        for combo in SWARM_COMBOS:
            swarm = [combo.count(t) for t in range(NUM_INSECTS)]
            create.append(100.0 + 2 * sum(VALUE[t] for t in combo) + swarm_points(swarm, options))
        self.create_rating = jnp.asarray(np.asarray(create, np.float32))
        self.of_value = np.array([[VALUE[t] == v for t in range(NUM_INSECTS)] for v in range(6)], np.int32)
        self.flies = np.array([t in FLIES for t in range(NUM_INSECTS)])

    def decide(self, observation: jax.Array, legal_action_mask: jax.Array) -> jax.Array:
        """The baseline's int32 action for one observation and its legal mask."""
        seen = self._read(observation)
        mask = jnp.asarray(legal_action_mask).astype(bool)
        turn_keys, target_keys = (
            self._rated(self._turn_ratings(seen), -10.0),
            self._rated(self._target_ratings(seen), 0.0),
        )
        is_turn = seen.decision == _TURN
        hi = jnp.where(is_turn, turn_keys[0], target_keys[0])
        lo = jnp.where(is_turn, turn_keys[1], target_keys[1])
        return first_best(jnp.where(mask, hi, -jnp.inf), jnp.where(mask, lo, 0.0)).astype(jnp.int32)

    def _read(self, observation: jax.Array) -> SimpleNamespace:
        """What the ratings read off the observation, as the reference agent reads it."""
        opts = self.options
        n, s, p, f32, i32 = opts.num_players, opts.max_swarms, opts.pond_size, jnp.float32, jnp.int32
        obs = jnp.asarray(observation, f32)
        counts = jnp.rint(obs * self.unscale).astype(i32)
        at = self.observer.offsets
        value = jnp.asarray(self.value)

        def first_one(piece, missing):
            hit = piece == 1
            return jnp.where(hit.any(), jnp.argmax(hit), missing).astype(i32)

        hand = counts[at["my_hand"]]
        slots = counts[at["swarms"]].reshape(n, s, NUM_INSECTS)
        filled = slots.any(-1)
        swarm_values = value[jnp.argmax(slots > 0, axis=-1)]  # `swarm_value` of each filled slot
        my_values = (jnp.arange(6)[:, None] == swarm_values[0][None, :]) & filled[0][None, :]
        pond = counts[at["pond"]].reshape(p, NUM_INSECTS)
        return SimpleNamespace(
            decision=first_one(counts[at["decision"]], 0),
            value=value,
            hand=hand,
            slots=slots,
            filled=filled,
            my_values=my_values.any(-1) & (jnp.arange(6) > 0),  # (6,): values I hold a swarm of
            by_value=jnp.asarray(self.of_value) @ hand[:NUM_INSECTS],  # (6,) cards in hand per value
            pond=jnp.where((pond == 1).any(-1), jnp.argmax(pond == 1, axis=-1), 0).astype(i32),
            early=obs[at["deck_size"].start] * f32(opts.total_cards) > 25,
            hand_sizes=counts[at["hand_sizes"]],
            tadpoles=counts[at["tadpoles"]],
            chosen=first_one(counts[at["chosen_swarm"]], -1),
        )

    def _use_id(self, seen: SimpleNamespace, card, in_hand):
        """The usefulness table index of holding one more `card` (`_usefulness`)."""
        v = seen.value[card]
        same = seen.by_value[v] - in_hand.astype(jnp.int32)
        kind = jnp.where(
            card == _HAWK,
            _HAWK_USE,
            jnp.where(
                seen.my_values[v], _SWARMED, jnp.where(same >= 2, _PAIR, jnp.where(same == 1, _SINGLE, _NONE))
            ),
        )
        return _use_id(kind, jnp.where(card == _HAWK, 0, v))

    def _points(self, swarm):
        """`swarm_points` over the last axis (counts may dip to -1 where a card is removed)."""
        opts = self.options
        size = swarm.sum(-1)
        big = jnp.where(size >= opts.big_swarm, opts.big_swarm_points, 0)
        perfect = jnp.where((size != 0) & (swarm.max(-1) == size), opts.perfect_swarm_points, 0)
        return big + perfect

    def _worth(self, seen: SimpleNamespace, swarm):
        """Bonus and card points of swarms over the last axis."""
        return self._points(swarm) + (swarm * seen.value[:NUM_INSECTS]).sum(-1)

    def _turn_ratings(self, seen: SimpleNamespace) -> dict:
        """The turn's ratings by block (`_turn_rating`)."""
        i32, p = jnp.int32, self.options.pond_size
        value, hand, slots, filled, by_value = seen.value, seen.hand, seen.slots, seen.filled, seen.by_value
        tadpoles, hand_sizes, pond = seen.tadpoles, seen.hand_sizes, seen.pond
        use_id = lambda card, in_hand: self._use_id(seen, card, in_hand)  # noqa: E731
        cards = jnp.arange(NUM_INSECTS, dtype=i32)
        worths = self._worth(seen, slots)  # (n, s)
        tadpole_points = tadpoles * (tadpoles + 1)
        scores5 = 5 * ((worths * filled).sum(-1) + tadpole_points)  # 5 x score, kept whole: 2.6 = 13 / 5
        mine = scores5[0] - 5 * (hand * value[:HAND_KINDS]).sum()
        theirs = scores5[1:] - 13 * hand_sizes[1:]  # hand_sizes x _MEAN_HAND_VALUE, x 5
        leading = mine > theirs.max()
        turn = {"go_out": _whole(jnp.where(leading, 1000.0, -1000.0)[None])}
        turn["create"] = _whole(self.create_rating)
        grown = slots[0][:, None, :] + jnp.eye(NUM_INSECTS, dtype=i32)[None, :, :]  # (s, card, types)
        gain = 2 * value[:NUM_INSECTS][None, :] + self._points(grown) - self._points(slots[0])[:, None]
        turn["add"] = _whole(jnp.where(gain > 0, 80.0 + gain, -5.0).reshape(-1))
        ability = []
        for card in ABILITY_CARDS:
            v = VALUE[card]
            if card == Card.ROBBER_FLY:
                rating = jnp.where((slots[1:] * self.flies).any(), 40.0, -5.0)
            elif card == Card.FIREFLY:
                rating = jnp.where(filled[1:].any(), 38.0, -5.0)
            elif card in (Card.DEER_FLY, Card.HORNET):
                rating = jnp.where(hand_sizes[1:].max() >= 2, 30.0, -5.0)
            elif card == Card.DRAGONFLY:
                best = self.use_keys[0][use_id(pond, jnp.zeros(p, bool))].max()  # whole + half: I orders
                rating = jnp.where(best >= 80, 25.0, -5.0)
            else:
                rating = jnp.asarray(-5.0)
            ability.append(jnp.where((by_value[v] >= 3) | seen.my_values[v], -5.0, rating))
        turn["ability"] = _whole(jnp.stack(ability))
        given = use_id(jnp.repeat(cards, p), jnp.ones(NUM_INSECTS * p, bool))  # id = card * p + slot
        taken = use_id(jnp.tile(pond, NUM_INSECTS), jnp.zeros(NUM_INSECTS * p, bool))
        turn["swap"] = _key(self.swap_keys, (taken, given))
        flies = jnp.asarray(COMMON_FLIES, i32)
        useless = self.use_keys[0][use_id(flies, jnp.ones(len(COMMON_FLIES), bool))] <= 10  # usefulness <= 1
        turn["fly_draw"] = _whole(jnp.where(seen.early & useless, 10.0, -5.0))
        kinds = jnp.arange(HAND_KINDS, dtype=i32)
        turn["pass"] = _key(self.pass_keys, (use_id(kinds, jnp.ones(HAND_KINDS, bool)), value[:HAND_KINDS]))
        return turn

    def _target_ratings(self, seen: SimpleNamespace) -> dict:
        """The ratings of a target decision by block (`_target_rating`)."""
        n, s, i32 = self.options.num_players, self.options.max_swarms, jnp.int32
        value, slots, tadpoles, chosen = seen.value, seen.slots, seen.tadpoles, seen.chosen
        use_id = lambda card, in_hand: self._use_id(seen, card, in_hand)  # noqa: E731
        cards = jnp.arange(NUM_INSECTS, dtype=i32)
        worths = self._worth(seen, slots)  # (n, s)
        tadpole_points = tadpoles * (tadpoles + 1)
        sign = jnp.where(jnp.arange(n) == 0, -1, 1)[:, None]  # (n, 1) by relative seat
        murray = sign * (worths - ((tadpoles + 1) * (tadpoles + 2) - tadpole_points)[:, None])
        target = {"murray": _whole(murray.reshape(-1))}
        removed = slots[:, :, None, :] - jnp.eye(NUM_INSECTS, dtype=i32)  # (n, s, card, types)
        losses = sign[:, :, None] * (worths[:, :, None] - self._worth(seen, removed))  # (n, s, card)
        robber = seen.decision == _ROBBER_SWARM
        allowed = (slots > 0) & (~robber | jnp.asarray(self.flies))
        target["swarm"] = _whole(jnp.where(allowed, losses, jnp.iinfo(i32).min // 16).max(-1).reshape(-1))
        target["player"] = _whole(seen.hand_sizes[1:])
        target["pond"] = _key(self.use_keys, use_id(seen.pond, jnp.zeros(self.options.pond_size, bool)))
        chosen_loss = jnp.where(chosen >= 0, losses.reshape(n * s, NUM_INSECTS)[jnp.maximum(chosen, 0)], 0)
        loss_id = jnp.clip(chosen_loss + self.loss_top, 0, 2 * self.loss_top)
        plus = _key(
            self.take_keys, (loss_id, use_id(cards, jnp.zeros(NUM_INSECTS, bool)), value[:NUM_INSECTS])
        )
        just = _whole(chosen_loss)
        robber_take = seen.decision == _ROBBER_TAKE
        target["take"] = tuple(jnp.where(robber_take, a, b) for a, b in zip(just, plus))
        target["discard"] = _key(
            self.discard_keys, (use_id(cards, jnp.ones(NUM_INSECTS, bool)), value[:NUM_INSECTS])
        )
        return target

    def _rated(self, ratings: dict, default: float) -> tuple[jax.Array, jax.Array]:
        """Every action id's key in layout order, `default` where the block has no rating."""
        his, los = [], []
        for block in self.layout.blocks:
            hi, lo = ratings.get(block.name, _whole(jnp.full(block.size, default)))
            his.append(jnp.broadcast_to(hi, (block.size,)))
            los.append(jnp.broadcast_to(lo, (block.size,)))
        return jnp.concatenate(his), jnp.concatenate(los)
