"""Chicken's baseline twin: `envs/chicken/baseline.py`'s `BaselineAgent.act` as one pure JAX
function (`fowlplay.envs.make_jax_baseline("chicken_v1", **options)`).

The baseline values each bid in a small Markov chain that depends only on (feet left, deck size);
this twin tables the reference's own `_chain` and `_feet_law` for every such pair once, in float64
cast to float32, and values every bid at once from them. The rest of the baseline's arithmetic is
float64 and this twin's float32, so a decision whose two best values lie within float32's rounding
of each other (or of `BID_MARGIN`) could go the other way; tests/envs/test_baseline_twin.py holds the
twin equal to the baseline, decision for decision, on the golden games and on masked-random games.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from fowlplay.envs.chicken.baseline import BID_MARGIN, SAFE_LEAD, _chain, _feet_law
from fowlplay.envs.core.baseline_twin import BaselineTwin as _Base

#: Table entries (float32) a twin may hold: its options' chains for every deck and feet count.
TABLE_LIMIT = 1 << 24


class BaselineTwin(_Base):
    """The chain-valued bidder of `chicken_v1` in JAX."""

    def __init__(self, options, observer, layout) -> None:
        super().__init__(options, observer, layout)
        n, deck, feet, cap = options.num_players, options.deck_size, options.feet, options.bid_cap
        steps = deck // n + 1  # the chain's cycles (`_chain`'s table length) for a full deck
        if (feet + 1) * (deck + 1) * (steps * 2 * n * 3 * 2 + (cap + 1) * (feet + 1)) > TABLE_LIMIT:
            raise ValueError("the baseline twin's tables would be too large for these options")
        # V and W of `_chain` for every (feet left, deck), cycles past a deck's own length padded
        # with its last (never read: the baseline clips t to its table's end, and so does `decide`).
        chains = np.zeros((2, feet + 1, deck + 1, steps, 2, n, 3))
        for left in range(feet + 1):
            for cards in range(left, deck + 1):
                for which, table in enumerate(_chain(n, left, cards, options.foot_bonus)):
                    rows = np.asarray(table, np.float64)
                    chains[which, left, cards, : len(rows)] = rows
                    chains[which, left, cards, len(rows) :] = rows[-1]
        self.before, self.after = (jnp.asarray(c.astype(np.float32)) for c in chains)
        # P(f feet among `bid` cards) for every deck, feet left and bid (0 where a bid exceeds the deck).
        law = np.zeros((deck + 1, feet + 1, cap + 1, feet + 1))
        for cards in range(deck + 1):
            for left in range(min(feet, cards) + 1):
                for bid in range(1, min(cap, cards) + 1):
                    p = _feet_law(cards, left, bid)
                    law[cards, left, bid, : len(p)] = p
        self.law = jnp.asarray(law.astype(np.float32))

    def decide(self, observation: jax.Array, legal_action_mask: jax.Array) -> jax.Array:
        """The baseline's int32 action for one observation and its legal mask."""
        opts = self.options
        n, bonus, target, f32, i32 = opts.num_players, opts.foot_bonus, opts.target, jnp.float32, jnp.int32
        cap, feet_total = opts.bid_cap, opts.feet
        obs, mask = jnp.asarray(observation, f32), jnp.asarray(legal_action_mask).astype(bool)
        part = lambda name: self.piece(obs, name)  # noqa: E731
        legal = mask[1 : 1 + cap]
        deck = jnp.clip(jnp.rint(part("deck_size")[0] * f32(opts.deck_size)).astype(i32), 0, opts.deck_size)
        feet = jnp.clip(jnp.rint(part("feet") * f32(2)).astype(i32), 0, 1)  # a bust seat never decides
        my_feet, their_feet = feet[0], feet[1:]
        my_sum = jnp.rint(part("my_round_points")[0] * f32(target))
        feet_left = jnp.clip(jnp.rint(part("feet_in_deck")[0] * f32(feet_total)).astype(i32), 0, feet_total)
        unseen = part("unseen_numbers") * f32(opts.copies_per_value)
        values = jnp.arange(1, opts.max_value + 1, dtype=f32)
        unseen_total = unseen.sum()
        mean = jnp.where(unseen_total > 0, (unseen * values).sum() / jnp.maximum(unseen_total, 1e-30), 0.0)
        # float32 in the baseline too (numpy scales a float32 row by a Python float in float32).
        their_sums = jnp.rint(part("number_cards_held")[1:] * f32(opts.deck_size)) * mean
        last = deck // n
        footed = (their_feet == 1).sum()
        rest = footed - (their_feet == 1)
        standing = (their_sums + jnp.where(their_feet == 1, f32(bonus), 0.0)).sum() / f32(n - 1)
        after = self.after[feet_left, deck]
        before = self.before[feet_left, deck]

        def outlook(t, f, points):
            """My expected final tally less the others' mean (`outlook`), over arrays of (t, f, points)."""
            t = jnp.clip(t, 0, last)
            a, c, d = (after[t, f, footed, k] for k in range(3))
            seat = before[t[..., None], their_feet, rest + f[..., None]]  # (..., others, 3)
            theirs = (seat[..., 0] * their_sums + seat[..., 1] + seat[..., 2] * mean).sum(-1)
            return a * (my_sum + points) + c + d * mean - theirs / f32(n - 1)

        bids = jnp.arange(1, cap + 1, dtype=i32)[:, None]  # (cap, 1) against feet drawn (1, feet + 1)
        drawn = jnp.arange(feet_total + 1, dtype=i32)[None, :]
        law = self.law[deck, feet_left, 1:]  # (cap, feet + 1)
        points = (bids - drawn).astype(f32) * mean
        bust = my_feet + drawn >= 2
        goes_on = outlook(
            jnp.broadcast_to((deck - bids) // n, points.shape),
            jnp.broadcast_to(jnp.minimum(my_feet + drawn, 1), points.shape),
            points,
        )
        bid_values = (law * jnp.where(bust, -(my_sum + points + standing), goes_on)).sum(-1)

        # Far ahead: the bid most likely to end the game now, if it gains anything (`_finish`).
        scores = jnp.rint(part("scores") * f32(target)).astype(i32)
        need = f32(target) - scores[0]
        held = my_sum + jnp.where(my_feet == 1, f32(bonus), 0.0)
        feet_after = my_feet + drawn
        tally = jnp.where(
            feet_after >= 2, -(my_sum + points), my_sum + points + jnp.where(feet_after == 1, f32(bonus), 0.0)
        )
        reached = (tally >= need).astype(f32) - (held >= need).astype(f32)
        gains = jnp.where(legal, (law * (tally - held + f32(target) * reached)).sum(-1), -jnp.inf)
        finish = jnp.where(gains.max() > 0, jnp.argmax(gains) + 1, 0)
        far_ahead = scores[0] - scores[1:].max() >= SAFE_LEAD * target

        # Otherwise the first legal bid that beats passing by the margin, then each better one.
        starter = (part("phase_starter")[0] > 0.5) & (part("current_bid")[0] == 0)
        best_value = jnp.where(starter, bid_values[0], outlook((deck - 1) // n, my_feet, jnp.zeros((), f32)))
        best_action = jnp.zeros((), i32)
        for bid in range(cap):
            margin = jnp.where(best_action == 0, f32(BID_MARGIN), 0.0)
            better = legal[bid] & (bid_values[bid] > best_value + margin)
            best_action = jnp.where(better, bid + 1, best_action)
            best_value = jnp.where(better, bid_values[bid], best_value)

        action = jnp.where(far_ahead, finish, best_action)
        return jnp.where((deck == 0) | ~legal.any(), 0, action).astype(i32)
