"""Murder, She Crows' baseline twin: `envs/crows/baseline.py`'s `BaselineAgent.act` as one pure
JAX function (`fowlplay.envs.make_jax_baseline("murder_she_crows_v1", **options)`).

The baseline is a deterministic function of (observation, mask); tests/envs/test_baseline_twin.py
holds this twin equal to it decision for decision. Every candidate (the fallback, each card of the
two card blocks) is valued at once and the first best kept, as the baseline's loop keeps it. The
numbers are the baseline's own: the fit chance is numpy's float32 quotient (`quotient`), the press
test is its float32 arithmetic, and a pile pair's value `length + prestige + 2 * fit` (float64 in
the baseline) is a float32 pair exact to ~2**-46, so candidates whose values differ are ordered as
float64 orders them (distinct values differ by far more); exactly equal values keep the first.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from fowlplay.envs.core.baseline_twin import QUOTIENT_LIMIT, ds_add, ds_table, first_best, quotient
from fowlplay.envs.core.baseline_twin import BaselineTwin as _Base
from fowlplay.envs.crows.baseline import _FIT_WEIGHT
from fowlplay.envs.crows.rules import Decision

_KEEP, _PRESS, _PLACE, _COIN, _CLAIM = (int(d) for d in Decision)


class BaselineTwin(_Base):
    """The greedy pile-builder of `murder_she_crows_v1` in JAX."""

    def __init__(self, options, observer, layout) -> None:
        super().__init__(options, observer, layout)
        v, copies = options.max_value, options.copies_per_value
        if options.deck_size >= QUOTIENT_LIMIT:
            raise ValueError(f"the baseline twin needs a deck below {QUOTIENT_LIMIT} cards")
        self.values = np.arange(1, v + 1, dtype=np.int32)
        # Prestige (sum of both piles' values) / (10 * max_value), the baseline's float64 quotient,
        # for every sum a pile pair plus one card can reach (a SET holds at most the deck's copies).
        top = v * (v + 1) // 2 + v * copies + v
        self.prestige = ds_table(np.arange(top + 1) / (10.0 * v))
        # Per decision kind of the block-pair kinds: the fallback's id, then each card block's ids.
        blocks = {
            _KEEP: ("keep_run", "keep_set", "discard_both"),
            _COIN: ("coin_run", "coin_set", "coin_skip"),
            _CLAIM: ("claim_run", "claim_set", "claim_pass"),
        }
        rows = np.zeros((len(Decision), 1 + 2 * v), np.int32)
        for kind, (run, set_, fallback) in blocks.items():
            rows[kind, : 1 + v] = [layout[fallback].start, *range(layout[run].start, layout[run].start + v)]
            rows[kind, 1 + v :] = range(layout[set_].start, layout[set_].start + v)
        self.candidate_ids = jnp.asarray(rows)

    def decide(self, observation: jax.Array, legal_action_mask: jax.Array) -> jax.Array:
        """The baseline's int32 action for one observation and its legal mask."""
        opts = self.options
        v, copies, f32 = opts.max_value, opts.copies_per_value, jnp.float32
        obs, mask = jnp.asarray(observation, f32), jnp.asarray(legal_action_mask).astype(bool)
        part = lambda name: self.piece(obs, name)  # noqa: E731
        values = jnp.asarray(self.values)
        run = part("run")[:v] != 0
        set_size = jnp.rint(part("set")[:v] * f32(copies)).astype(jnp.int32)
        pile = jnp.where(part("deck_size")[0] > 0, part("deck_counts"), part("discard_pile"))
        draw = jnp.rint(pile * f32(copies)).astype(jnp.int32)
        kind = jnp.argmax(part("decision"))

        # Candidate piles: index 0 as they are, 1..v with card c added to RUN, v+1..2v to SET.
        card = jnp.concatenate([jnp.zeros(1, jnp.int32), values, values])
        slot = jnp.arange(1 + 2 * v)
        to_run, to_set = (slot >= 1) & (slot <= v), slot > v
        run_low, run_high = jnp.where(run, values, v + 2).min(), jnp.where(run, values, 0).max()
        run_len = run.sum() + to_run
        run_min = jnp.where(to_run, jnp.minimum(run_low, card), run_low)
        run_max = jnp.where(to_run, jnp.maximum(run_high, card), run_high)
        set_len = set_size.sum() + to_set
        first = jnp.where(set_size.sum() > 0, jnp.argmax(set_size > 0) + 1, card)
        total_sum = (values * run).sum() + (values * set_size).sum() + card
        fit = self._fit(run_len, run_min, run_max, set_len, first, draw)
        murder = opts.min_murder
        length = (jnp.minimum(run_len, murder) + jnp.minimum(set_len, murder)).astype(f32)
        # The baseline's float64 `length + prestige + 2 * fit`, summed in that order, as a pair.
        prestige = tuple(table[jnp.clip(total_sum, 0, table.shape[0] - 1)] for table in self.prestige)
        value = ds_add(
            ds_add((length, jnp.zeros_like(length)), prestige), (f32(_FIT_WEIGHT) * fit, jnp.zeros_like(fit))
        )

        # KEEP, COIN, CLAIM: the first best legal candidate (the fallback first, illegal ones never).
        ids = self.candidate_ids[kind]
        legal = mask[ids]
        hi = jnp.where(legal, value[0], -jnp.inf)
        lo = jnp.where(legal, value[1], 0.0)
        pick = ids[first_best(hi, lo)]

        # PLACE: max over (legal, value), RUN first on ties.
        to_place = jnp.argmax(part("to_place"))
        place_run, place_set = self.start("place_run"), self.start("place_set")
        r, s = 1 + to_place, 1 + v + to_place
        run_key = (mask[place_run], value[0][r], value[1][r])
        set_key = (mask[place_set], value[0][s], value[1][s])
        set_better = (set_key[0] & ~run_key[0]) | (
            (set_key[0] == run_key[0])
            & ((set_key[1] > run_key[1]) | ((set_key[1] == run_key[1]) & (set_key[2] > run_key[2])))
        )
        place = jnp.where(set_better, place_set, place_run)

        # PRESS: reveal while (1 - fit) * at_stake < fit, in the baseline's float32.
        at_stake = part("provisional_run").sum() + part("provisional_set").sum() * f32(copies)
        reveal_id, stop_id = self.start("reveal"), self.start("stop")
        reveal = mask[reveal_id] & ((f32(1.0) - fit[0]) * at_stake < fit[0])
        press = jnp.where(reveal, reveal_id, stop_id)

        action = jnp.where(kind == _PRESS, press, jnp.where(kind == _PLACE, place, pick))
        score_run, score_set = self.start("score_run"), self.start("score_set")
        scored = jnp.where(mask[score_run], score_run, score_set)
        may_score = (kind != _CLAIM) & (mask[score_run] | mask[score_set])
        return jnp.where(may_score, scored, action).astype(jnp.int32)

    def _fit(self, run_len, run_min, run_max, set_len, first, draw) -> jax.Array:
        """`_fit_chance` of each candidate: the float32 share of `draw` that fits either pile."""
        values = jnp.asarray(self.values)[None, :]
        total = draw.sum()
        fits = (
            (values == (run_min - 1)[:, None])
            | (values == (run_max + 1)[:, None])
            | (values == jnp.broadcast_to(first, run_len.shape)[:, None])
        )
        fitting = (fits * draw[None, :]).sum(axis=1)
        sure = (total == 0) | (run_len == 0) | (set_len == 0)
        return jnp.where(sure, jnp.float32(1.0), quotient(fitting, total))
