"""Murder Most Fowl's baseline twin: `envs/fowl/baseline.py`'s `BaselineAgent.act` as one pure JAX
function (`fowlplay.envs.make_jax_baseline("murder_most_fowl_v0", **options)`).

The baseline values a grid as its best route score plus half its best partial route, and tries
every bird on every frontier cell, and every removal of an opponent's bird. Here a grid's routes
are a dynamic programme over values in bird-rank space (rank = (value - 1) x types + type): per
bird, the longest route start-to-here by start type (`plain`), and per start type s, majority type
t and count m of other birds, the most birds of type t (`double`; a route doubles when count(t) >
m). A programme run upwards gives the routes ending at a bird, one run downwards those starting
there; a bird added on an empty cell joins a route only through that cell, so its value is the
grid's plus the best route that comes up from a lower neighbour, through it, and on from a higher
one: every (cell, card) at once, without rerunning the programme. A removal reruns it.

The baseline's floats: values and gains are multiples of 0.5 (exact); an attack's value adds
0.1 x the victim's score, and card values and swap plans add and subtract those in float64, so
they are held as keys (10 x value rounded, the float64 value's exact remainder as a float32) read
from tables of the baseline's own float64 sums, as in Murray's twin. The arrest risk (a product of
float64 ratios) is float32 here, compared with `MAX_ARREST_RISK`: where it lies within float32's
rounding of the bound the twin could decide otherwise. tests/envs/test_baseline_twin.py holds the
twin equal to the baseline decision for decision.
"""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from fowlplay.envs.core.baseline_twin import BaselineTwin as _Base
from fowlplay.envs.fowl.baseline import (
    ARMING_PENALTY,
    KEEP_BLOCKING,
    KEEP_MURDER,
    MAX_ARREST_RISK,
    PARTIAL_WEIGHT,
    PILE_GAIN,
    WINNING_MURDER,
)
from fowlplay.envs.fowl.rules import Decision, Wile, full_deck, grid_neighbours
from fowlplay.envs.fowl.twin import route_programme

_D = Decision
_NONE = -1
_LOW = -(1 << 20)  # below every value key (x 10) the baseline can reach
#: Hidden hand cards the arrest risk's product runs over at most (a hand holds a few cards).
_MOST_HIDDEN = 12


def _keys(values) -> tuple[np.ndarray, np.ndarray]:
    """float64 values as keys (10 x value rounded, as float32; the exact remainder, as float32)."""
    values = np.asarray(values, np.float64)
    tens = np.rint(values * 10.0)
    rest = [float(Fraction(float(v)) - Fraction(int(t), 10)) for v, t in zip(values.flat, tens.flat)]
    return tens.astype(np.float32), np.reshape(rest, values.shape).astype(np.float32)


def _greater(a, b):
    """Key a > key b (lexicographic pairs)."""
    return (a[0] > b[0]) | ((a[0] == b[0]) & (a[1] > b[1]))


class _Seen(NamedTuple):
    """What the baseline reads from an observation (`_read`), seats relative to me."""

    grids: jax.Array  # int32 [n, cells] card id per cell of each grid, -1 empty
    tops: jax.Array  # int32 [n] each discard pile's top card, -1 none
    known: jax.Array  # int32 [n, K] copies of each card seen in each hand
    hand: jax.Array  # int32 [K] copies of each card in my hand
    unseen: jax.Array  # int32 [K] copies of each card nowhere in sight (the deck, unseen hand cards)
    decision: jax.Array  # int32 `Decision`
    pending_card: jax.Array  # int32 the card waiting for its target, -1 none
    pending_cell: jax.Array  # int32 my cell where a Swap or Murder wile waits, -1 none
    playing: jax.Array  # bool [n]
    barred: jax.Array  # bool [n, types] types recorded against each seat
    scores: jax.Array  # int32 [n]
    hidden: jax.Array  # int32 [n] hand cards nobody has seen
    escalation: jax.Array  # bool
    in_grids: jax.Array  # bool [3] a Blocking / Discard / Swap wile lies in some grid


class _Board(NamedTuple):
    """The grids as the baseline values them (`_board`)."""

    taken: jax.Array  # bool [n, cells] cells holding a card
    frontier: jax.Array  # bool [n, cells] empty cells a card may go on
    birds: jax.Array  # bool [n, cells] cells holding a bird
    beside: jax.Array  # int32 [n, cells] birds beside each cell
    spaces: list  # per seat, `_rank_space` of its grid
    values: list  # per seat, `_value` of its grid
    up: jax.Array  # int32 [birds, width] my grid's upward route tables
    gains: jax.Array  # int32 [cells, birds] gain in halves of each bird on each cell of mine


class _Attacks(NamedTuple):
    """Every removal of an opponent's bird (`_attacks`), one per opponent cell, seat-major."""

    loss: jax.Array  # int32 [(n - 1) x cells] the victim's loss in halves
    card: jax.Array  # int32 [(n - 1) x cells] the card on the cell
    ok: jax.Array  # bool [(n - 1) x cells] a bird of a living opponent lies there
    seat: jax.Array  # int32 [(n - 1) x cells] the victim's relative seat
    cell: jax.Array  # int32 [(n - 1) x cells]
    exists: jax.Array  # bool: some attack is possible
    best: jax.Array  # int32 index of max(attacks)


class _SwapPlan(NamedTuple):
    """The swap plan (`_swap_plan`): an opponent's bird for a cell of mine."""

    found: jax.Array  # bool: a plan worth more than -1.0
    at: jax.Array  # int32 the attack it swaps in
    gain: jax.Array  # int32 [(n - 1) x cells] my gain in halves from each attack's bird
    cell: jax.Array  # int32 my cell (-1 none)
    seat: jax.Array  # int32 the victim's seat (-1 none)
    their: jax.Array  # int32 the victim's cell (-1 none)


class BaselineTwin(_Base):
    """The greedy route builder with safe murders of `murder_most_fowl_v0` in JAX."""

    def __init__(self, options, observer, layout) -> None:
        super().__init__(options, observer, layout)
        o = options
        if PARTIAL_WEIGHT != 0.5:
            raise ValueError("the baseline twin counts values in halves: PARTIAL_WEIGHT must be 0.5")
        self.t, self.v = t_, v_ = o.types, o.max_value
        self.b, self.k, self.c = o.num_birds, o.num_kinds, o.cells
        self.m = m_ = (v_ - 1) // 2
        self.w = t_ + t_ * t_ * (m_ + 1)
        grows, shifts, base = route_programme(t_, m_)
        self.grows, self.shifts, self.base = grows, shifts, base.astype(np.int32)
        nbs = grid_neighbours(o.grid_size)
        sides = np.full((o.cells, 4), -1, np.int32)
        for cell, around in enumerate(nbs):
            sides[cell, : len(around)] = around
        self.sides = sides
        self.full_counts = np.bincount(full_deck(o), minlength=o.num_kinds).astype(np.int32)
        # Card id of each rank and rank of each bird card.
        ranks = np.arange(self.b)
        self.card_of_rank = (ranks % t_) * v_ + ranks // t_
        # Key tables in half units: a value h / 2, an attack value h / 2 + 0.1 x score.
        top = 5 * v_ + 2  # values reach 2.5 x max_value, in halves
        self.top = top
        scores = range(o.max_score + 1)
        attack = [[h / 2 + 0.1 * s for s in scores] for h in range(-top, top + 1)]
        self.attack_keys = _keys(attack)
        pens = (0.0, ARMING_PENALTY)
        self.attack_pen_keys = _keys([[[a - p for p in pens] for a in row] for row in attack])
        gains = [g / 2 for g in range(-2, top + 1)]  # -1.0 (no cell) and every gain
        swap = [[[g + a for a in row] for row in attack] for g in gains]
        self.swap_keys = _keys(swap)
        self.swap_pen_keys = _keys(
            [[[[max(x, 0.0) - p for p in pens] for x in row] for row in plane] for plane in swap]
        )
        self.blocking_keys = _keys([KEEP_BLOCKING - p for p in pens])
        self.start = {block.name: block.start for block in layout.blocks}

    # ----- routes ------------------------------------------------------------------------------------
    def _programme(self, placed, sides, upwards: bool):
        """int32 [birds, width] route tables by rank: routes ending at each bird (upwards) or
        starting there (downwards); _NONE where none."""
        t_, v_, b = self.t, self.v, self.b
        grows, shifts, base = (jnp.asarray(x) for x in (self.grows, self.shifts, self.base))
        table = jnp.full((b + 1, self.w), _NONE, jnp.int32)
        order = range(v_) if upwards else range(v_ - 1, -1, -1)
        for step, level in enumerate(order):
            here = placed[level * t_ : (level + 1) * t_]
            if step == 0:
                new = jnp.where(here[:, None], base, _NONE)
            else:
                nb = sides[level * t_ : (level + 1) * t_]
                near = (nb >= 0) & (nb < level * t_) if upwards else nb >= (level + 1) * t_
                got = table[jnp.where(near, nb, b)]  # (types, 4, width)
                best = got.max(axis=1)
                grown = jnp.where(best >= 0, best + 1, _NONE)
                shifted = jnp.pad(best[:, :-1], ((0, 0), (1, 0)), constant_values=_NONE)
                extended = jnp.where(grows, grown, jnp.where(shifts, shifted, _NONE))
                new = jnp.where(here[:, None], jnp.maximum(extended, base), _NONE)
            table = table.at[level * t_ : (level + 1) * t_].set(new)
        return table[:b]

    def _points(self, table):
        """(route points, partial length) by rank, from upward tables: own-type routes only."""
        t_, m_ = self.t, self.m
        kinds = np.arange(self.b) % t_
        plain = table[np.arange(self.b), kinds]
        span = t_ * (m_ + 1)
        idx = t_ + kinds[:, None] * span + np.arange(span)[None, :]
        count = jnp.take_along_axis(table, jnp.asarray(idx), axis=1)
        others = jnp.asarray(np.tile(np.arange(m_ + 1), t_))
        length = count + others
        doubled = (count > others) & (length >= self.options.min_route)
        best = jnp.where(doubled, 2 * length, 0).max(axis=1)
        best = jnp.maximum(best, jnp.where(plain >= self.options.min_route, plain, 0))
        return best, jnp.maximum(plain, 0)

    def _value(self, placed, sides, barred):
        """(value in halves, route score, partial) of a grid: 2 x best route + best partial."""
        points, partial = self._points(self._programme(placed, sides, True))
        ok = placed & ~barred[jnp.arange(self.b) % self.t]
        score = jnp.where(ok, points, 0).max()
        part = jnp.where(ok, partial, 0).max()
        return 2 * score + part, score, part

    def _rank_space(self, grid):
        """(placed [birds], sides [birds, 4] as ranks) of a grid of card ids."""
        t_, v_, b = self.t, self.v, self.b
        bird = (grid >= 0) & (grid < b)
        rank = jnp.where(bird, (grid % v_) * t_ + grid // v_, -1)  # per cell
        sides = jnp.asarray(self.sides)
        side_rank = jnp.where(sides >= 0, rank[jnp.maximum(sides, 0)], -1)  # per cell, (cells, 4)
        cell_of = jnp.zeros(b + 1, jnp.int32).at[jnp.where(bird, rank, b)].set(jnp.arange(self.c))[:b]
        placed = jnp.zeros(b + 1, bool).at[jnp.where(bird, rank, b)].set(True)[:b]
        return placed, side_rank[cell_of], rank, side_rank

    # ----- deciding ------------------------------------------------------------------------------------
    def decide(self, observation: jax.Array, legal_action_mask: jax.Array) -> jax.Array:
        """The baseline's int32 action for one observation and its legal mask.

        `BaselineAgent.act` in its phases, each a pure function of the ones before: read the
        observation, value the grids, list the attacks, plan a swap, choose a murder's target, value
        every card for playing and for keeping; then every decision's action is computed (under
        vmap both sides of a branch run anyway) and the one asked for is selected."""
        obs, mask = jnp.asarray(observation, jnp.float32), jnp.asarray(legal_action_mask).astype(bool)
        seen = self._read(obs)
        board = self._board(seen)
        attacks = self._attacks(seen, board)
        plan = self._swap_plan(seen, board, attacks)
        target = self._murder_target(seen, board)
        has_target = target >= 0
        play, keep = self._card_keys(seen, board, attacks, plan, has_target)
        place_action, murder_cell_action, swap_cell_action = self._own_cell_actions(seen, board, plan, mask)
        target_action, blocking_action, murder_action = self._opponent_actions(
            seen, board, attacks, plan, target, mask
        )
        decision = seen.decision
        action = jnp.select(
            [
                (decision == _D.FIRST_DRAW) | (decision == _D.SECOND_DRAW),
                (decision == _D.DISCARD) | (decision == _D.EXTRA_DISCARD),
                decision == _D.PLAY,
                decision == _D.PLACE_BIRD,
                decision == _D.MURDER_CELL,
                decision == _D.SWAP_CELL,
                (decision == _D.DISCARD_TARGET) | (decision == _D.SWAP_TARGET),
                decision == _D.PLACE_BLOCKING,
            ],
            [
                self._draw(seen, board, has_target, mask),
                self._discard_action(seen, board, keep, has_target, mask),
                self._play_action(play, mask),
                place_action,
                murder_cell_action,
                swap_cell_action,
                target_action,
                blocking_action,
            ],
            murder_action,
        )
        return action.astype(jnp.int32)

    # ----- reading the observation (`_read`) -------------------------------------------------------
    def _read(self, obs: jax.Array) -> _Seen:
        """What the baseline reads from an observation, as card ids and counts."""
        o = self.options
        n, t_, v_, b, k, c = o.num_players, self.t, self.v, self.b, self.k, self.c
        i32 = jnp.int32
        part = lambda name: self.piece(obs, name)  # noqa: E731
        feats = part("grids").reshape(n, c, -1)
        is_bird = feats[:, :, :t_].sum(axis=2) > 0
        bird_ids = jnp.argmax(feats[:, :, :t_], axis=2) * v_ + jnp.rint(feats[:, :, t_] * v_).astype(i32) - 1
        wile = feats[:, :, t_ + 1 :]
        grids = jnp.where(is_bird, bird_ids, -1)
        grids = jnp.where(wile.sum(axis=2) > 0, b + jnp.argmax(wile, axis=2), grids).astype(i32)
        tops_hot = part("pile_tops").reshape(n, k)
        known = jnp.rint(part("known_hands").reshape(n, k)).astype(i32)
        hand = jnp.rint(part("my_hand")).astype(i32)  # counts per card id
        placed_counts = jnp.zeros(k + 1, i32).at[jnp.where(grids >= 0, grids, k)].add(1)[:k]
        piles = jnp.rint(part("pile_contents").reshape(n, k)).astype(i32).sum(axis=0)
        return _Seen(
            grids=grids,
            tops=jnp.where(tops_hot.any(axis=1), jnp.argmax(tops_hot, axis=1), -1),
            known=known,
            hand=hand,
            unseen=jnp.asarray(self.full_counts) - hand - known.sum(axis=0) - piles - placed_counts,
            decision=jnp.argmax(part("decision")),
            pending_card=jnp.where(part("pending_card").any(), jnp.argmax(part("pending_card")), -1),
            pending_cell=jnp.where(part("pending_cell").any(), jnp.argmax(part("pending_cell")), -1),
            playing=part("playing") > 0.5,
            barred=part("recorded_types").reshape(n, t_) > 0.5,
            scores=jnp.rint(part("scores") * o.max_score).astype(i32),
            hidden=jnp.rint(part("hand_sizes") * 4).astype(i32) - known.sum(axis=1),
            escalation=part("escalation")[0] > 0.5,
            in_grids=part("wiles_in_grids") > 0.5,
        )

    # ----- the grids, and every bird on every cell of mine (`_best_cell`'s gains) -------------------
    def _board(self, seen: _Seen) -> _Board:
        """Every grid's frontier, birds and value, and the gain of each bird on each cell of mine."""
        n, b, c = self.options.num_players, self.b, self.c
        grids = seen.grids
        sides = jnp.asarray(self.sides)
        taken = grids >= 0
        near_taken = jnp.where(sides >= 0, taken[:, jnp.maximum(sides, 0)], False).any(-1)  # (n, cells)
        centre = jnp.arange(c) == c // 2
        frontier = jnp.where(taken.any(axis=1, keepdims=True), near_taken & ~taken, centre[None, :])
        is_bird_cell = (grids >= 0) & (grids < b)
        bird_beside = jnp.where(sides >= 0, is_bird_cell[:, jnp.maximum(sides, 0)], False).sum(
            -1
        )  # (n, cells)
        spaces = [self._rank_space(grids[j]) for j in range(n)]
        values = [self._value(spaces[j][0], spaces[j][1], seen.barred[j]) for j in range(n)]
        placed0, sides0, _, side_rank0 = spaces[0]
        up = self._programme(placed0, sides0, True)
        down = self._programme(placed0, sides0, False)
        base_h, base_score, base_part = values[0]
        gains = self._gains(up, down, side_rank0, seen.barred[0], base_score, base_part, base_h)
        return _Board(
            taken=taken,
            frontier=frontier,
            birds=is_bird_cell,
            beside=bird_beside,
            spaces=spaces,
            values=values,
            up=up,
            gains=gains,
        )

    def _best_cell(self, board: _Board, card: jax.Array, cells: jax.Array) -> tuple[jax.Array, jax.Array]:
        """(gain in halves, cell) of `_best_cell` for `card` (a bird) over the candidate `cells`."""
        c = self.c
        gains = board.gains[:, jnp.clip(card, 0, self.b - 1)]
        lonely = board.beside[0] == 0
        first = jnp.argmax(cells)
        first_value = jnp.where(lonely[first], 0, gains[first])
        later = cells & ~lonely & (jnp.arange(c) > first)
        val = jnp.where(later, gains, _LOW).at[first].set(first_value)
        val = jnp.where(cells.any(), val, _LOW)
        cell = jnp.argmax(val)
        return jnp.where(cells.any(), val[cell], -2), jnp.where(cells.any(), cell, -1)

    def _gains(self, up, down, side_rank, barred, base_score, base_part, base_h):
        """int32 [cells, birds]: gain in halves of each bird (by card id) on each cell of my grid.

        A new bird of type k extends its lower neighbours' best tables (`prefix`) by growing the
        type-k counts and shifting the others' m, or starts a route alone; each of those is then
        joined to the higher neighbours' tables (`suffix`). The join is computed once for grown and
        once for shifted entries, and each type k reads the grown join at t = k, the shifted one
        elsewhere (joining keeps maxima: a larger count never joins worse)."""
        t_, v_, m_ = self.t, self.v, self.m
        c, k1 = self.c, m_ + 1
        min_route = self.options.min_route
        prefix, suffix = self._beside_tables(up, down, side_rank)
        pp, sp = prefix[..., :t_], suffix[..., :t_]  # plain by start (end) type s
        pd = prefix[..., t_:].reshape(c, v_, t_, t_, k1)  # double [s, t, m]
        sd = suffix[..., t_:].reshape(c, v_, t_, t_, k1)
        grown = jnp.where(pd >= 0, pd + 1, _NONE)
        shifted = jnp.pad(pd[..., :-1], ((0, 0),) * 4 + ((1, 0),), constant_values=_NONE)
        ms = np.arange(k1)
        eye = jnp.eye(t_, dtype=bool)  # [kind, t]
        # Joined on into a suffix, by (kind, s).
        join_grown, join_shifted = self._join(grown, sd), self._join(shifted, sd)  # (cells, values, s, t)
        on_dbl = jnp.maximum(
            jnp.where(eye[None, None, :, None, :], join_grown[:, :, None], 0).max(-1),
            jnp.where(~eye[None, None, :, None, :], join_shifted[:, :, None], 0).max(-1),
        )  # (cells, values, kind, s)
        # The new bird alone starts a route of its own type: counts 1 of t = k at m = 0, 0 of t != k at m = 1.
        sd_own = sd[:, :, np.arange(t_)]  # (cells, values, kind = s, t, m2)
        lone = jnp.full((t_, t_, k1), _NONE, jnp.int32)
        lone = jnp.where(eye[:, :, None] & (ms == 0), 1, jnp.where(~eye[:, :, None] & (ms == 1), 0, lone))
        own_join = self._join(jnp.broadcast_to(lone, sd_own.shape), sd_own).max(-1)  # (cells, values, kind)
        on_dbl = jnp.maximum(on_dbl, jnp.where(eye[None, None], own_join[..., None], 0))
        xp = jnp.where(pp >= 0, pp + 1, _NONE)[:, :, None, :]  # (cells, values, 1, s)
        xp = jnp.maximum(xp, jnp.where(eye, 1, _NONE))  # the bird alone, for s = k
        plain_on = jnp.where((xp >= 0) & (sp[:, :, None, :] >= 0), xp + sp[:, :, None, :], _NONE)
        on_points = jnp.maximum(on_dbl, jnp.where(plain_on >= min_route, plain_on, 0))
        ok_start = ~barred
        on_points = jnp.where(ok_start, on_points, 0).max(-1)  # (cells, values, kind)
        on_partial = jnp.where(ok_start, jnp.maximum(plain_on, 0), 0).max(-1)
        # Routes ending at the new bird (start type = its type k).
        diag = np.arange(t_)
        end_counts = jnp.where(
            eye[None, None, :, :, None],
            jnp.maximum(grown[:, :, diag], jnp.where(ms == 0, 1, _NONE)),
            jnp.maximum(shifted[:, :, diag], jnp.where(ms == 1, 0, _NONE)),
        )  # (cells, values, kind, t, m)
        end_dbl = self._alone(end_counts).max(-1)
        plain_end = jnp.maximum(xp[..., diag, diag], 1)  # (cells, values, kind)
        end_points = jnp.maximum(end_dbl, jnp.where(plain_end >= min_route, plain_end, 0))
        end_points = jnp.where(ok_start, end_points, 0)
        end_partial = jnp.where(ok_start, plain_end, 0)
        through = jnp.maximum(end_points, on_points)  # (cells, values, kind)
        partial = jnp.maximum(end_partial, on_partial)
        new_h = 2 * jnp.maximum(base_score, through) + jnp.maximum(base_part, partial)
        gain = new_h - base_h
        # Card id = kind * max_value + value - 1.
        return jnp.transpose(gain, (0, 2, 1)).reshape(c, t_ * v_)

    def _beside_tables(self, up, down, side_rank):
        """(prefix, suffix) int32 [cells, values, width]: for a new bird of each value on each cell
        of my grid, the best of its lower neighbours' upward tables and of its higher ones' downward."""
        t_, v_, b = self.t, self.v, self.b
        none_row = jnp.full((1, self.w), _NONE, jnp.int32)
        up_rows = jnp.concatenate([up, none_row])
        down_rows = jnp.concatenate([down, none_row])
        nb = side_rank  # (cells, 4) ranks beside each cell, -1 none
        level = jnp.where(nb >= 0, nb // t_, -1)
        levels = jnp.arange(v_)
        lower = (nb[:, None, :] >= 0) & (level[:, None, :] < levels[None, :, None])  # (cells, values, 4)
        higher = (nb[:, None, :] >= 0) & (level[:, None, :] > levels[None, :, None])
        safe = jnp.where(nb >= 0, nb, b)
        prefix = jnp.where(lower[..., None], up_rows[safe][:, None], _NONE).max(
            axis=2
        )  # (cells, values, width)
        suffix = jnp.where(higher[..., None], down_rows[safe][:, None], _NONE).max(axis=2)
        return prefix, suffix

    def _join(self, c1, c2):
        """Best doubled points of a prefix count c1[..., m1] joined to a suffix count c2[..., m2]."""
        ms = np.arange(self.m + 1)
        m_sum = jnp.asarray(ms[:, None] + ms[None, :])
        a, z = c1[..., :, None], c2[..., None, :]
        total = a + z
        length = total + m_sum
        ok = (a >= 0) & (z >= 0) & (total > m_sum) & (length >= self.options.min_route)
        return jnp.where(ok, 2 * length, 0).max(axis=(-1, -2))

    def _alone(self, c1):
        """Best doubled points of a route ending at the new bird, from counts c1[..., m]."""
        ms = np.arange(self.m + 1)
        length = c1 + jnp.asarray(ms)
        ok = (c1 > jnp.asarray(ms)) & (length >= self.options.min_route)
        return jnp.where(ok, 2 * length, 0).max(axis=-1)

    # ----- attacks: every bird of a living opponent (`_attacks`), and the swap plan ------------------
    def _attacks(self, seen: _Seen, board: _Board) -> _Attacks:
        """Every removal of a living opponent's bird, valued as keys, and the largest of them."""
        o = self.options
        n, b, c = o.num_players, self.b, self.c
        attack_keys = tuple(jnp.asarray(x) for x in self.attack_keys)
        atk_hi, atk_lo, atk_loss, atk_card, atk_ok = [], [], [], [], []
        for j in range(1, n):
            placed_j, sides_j, rank_j, _ = board.spaces[j]
            base_j = board.values[j][0]
            removed = jax.vmap(
                lambda y, p=placed_j, s=sides_j, bar=seen.barred[j]: self._value(
                    p & (jnp.arange(b) != y), s, bar
                )[0]
            )(jnp.arange(b))
            loss = base_j - removed  # halves, per rank
            # In cell order, as the baseline lists a grid's birds.
            cell_rank = rank_j  # per cell
            ok = (cell_rank >= 0) & seen.playing[j]
            loss_c = jnp.where(ok, loss[jnp.maximum(cell_rank, 0)], 0)
            idx = (jnp.clip(loss_c + self.top, 0, 2 * self.top), jnp.clip(seen.scores[j], 0, o.max_score))
            atk_hi.append(jnp.where(ok, attack_keys[0][idx], -jnp.inf))
            atk_lo.append(jnp.where(ok, attack_keys[1][idx], 0.0))
            atk_loss.append(loss_c)
            atk_card.append(seen.grids[j])
            atk_ok.append(ok)
        atk_hi, atk_lo = jnp.concatenate(atk_hi), jnp.concatenate(atk_lo)
        atk_ok = jnp.concatenate(atk_ok)
        # max(attacks): the largest (value, seat, cell, bird); seat and cell rise with the index.
        top_hi = atk_hi.max()
        top_lo = jnp.where(atk_hi == top_hi, atk_lo, -jnp.inf).max()
        at_top = atk_ok & (atk_hi == top_hi) & (atk_lo == top_lo)
        return _Attacks(
            loss=jnp.concatenate(atk_loss),
            card=jnp.concatenate(atk_card),
            ok=atk_ok,
            seat=jnp.repeat(jnp.arange(1, n), c),
            cell=jnp.tile(jnp.arange(c), n - 1),
            exists=atk_ok.any(),
            best=(c * (n - 1) - 1) - jnp.argmax(at_top[::-1]),  # the last of the equal values
        )

    def _swap_plan(self, seen: _Seen, board: _Board, attacks: _Attacks) -> _SwapPlan:
        """`_swap_plan`: the first strictly best (my gain + the attack's value) above -1.0."""
        o = self.options
        b, c = self.b, self.c
        plan_cells = jnp.where(seen.pending_cell >= 0, jnp.arange(c) == seen.pending_cell, board.frontier[0])
        plan_gain, plan_mine = jax.vmap(lambda card: self._best_cell(board, card, plan_cells))(
            jnp.clip(attacks.card, 0, b - 1)
        )
        swap_keys = tuple(jnp.asarray(x) for x in self.swap_keys)
        sidx = (
            jnp.clip(plan_gain + 2, 0, self.top + 2),
            jnp.clip(attacks.loss + self.top, 0, 2 * self.top),
            jnp.clip(seen.scores[attacks.seat], 0, o.max_score),
        )
        sp_hi = jnp.where(attacks.ok, swap_keys[0][sidx], -jnp.inf)
        sp_lo = jnp.where(attacks.ok, swap_keys[1][sidx], 0.0)
        # The first strictly best above -1.0 (its initial best).
        sp_top_hi = sp_hi.max()
        sp_top_lo = jnp.where(sp_hi == sp_top_hi, sp_lo, -jnp.inf).max()
        sp_at = jnp.argmax((sp_hi == sp_top_hi) & (sp_lo == sp_top_lo))
        sp_found = _greater((sp_top_hi, sp_top_lo), (jnp.float32(-10.0), jnp.float32(0.0)))
        return _SwapPlan(
            found=sp_found,
            at=sp_at,
            gain=plan_gain,
            cell=jnp.where(sp_found, plan_mine[sp_at], -1),
            seat=jnp.where(sp_found, attacks.seat[sp_at], -1),
            their=jnp.where(sp_found, attacks.cell[sp_at], -1),
        )

    # ----- murders (`_murder_target`, `_arrest_risk`) ------------------------------------------------
    def _murder_target(self, seen: _Seen, board: _Board) -> jax.Array:
        """`_murder_target`: the seat a Murder would strike and win by, -1 for none."""
        o = self.options
        n = o.num_players
        playing, scores = seen.playing, seen.scores
        eligible = playing & (seen.escalation | (scores >= scores[0] + o.murder_margin)) & (jnp.arange(n) > 0)
        best_score = jnp.where(eligible, scores, -1).max()
        target = jnp.where(best_score >= 0, jnp.argmax(eligible & (scores == best_score)), -1)
        target = jnp.where(eligible.any(), target, -1)
        ends_game = (target > 0) & (playing.sum() == 2)
        placed0 = board.spaces[0][0]
        risk = self._arrest_risk(
            board.up, placed0, seen.known, seen.unseen, seen.hidden, jnp.maximum(target, 0)
        )
        no_target = (
            ends_game & (scores[jnp.maximum(target, 0)] <= scores[0]) & (risk > jnp.float32(MAX_ARREST_RISK))
        )
        return jnp.where(no_target, -1, target)

    def _arrest_risk(self, up, placed, known, unseen, hidden, seat):
        """`_arrest_risk` in float32: the chance the victim holds the end type of every best route."""
        t_, v_ = self.t, self.v
        points, _ = self._points(up)
        kinds = jnp.arange(self.b) % t_
        score = jnp.where(placed, points, 0).max()
        by_kind = jnp.stack([jnp.where(placed & (kinds == kind), points, 0).max() for kind in range(t_)])
        total = unseen.sum()
        risk = jnp.float32(1.0)
        for kind in range(t_):
            counted = by_kind[kind] >= score
            seen = known[seat, kind * v_ : (kind + 1) * v_].any()
            of_kind = unseen[kind * v_ : (kind + 1) * v_].sum()
            miss = jnp.float32(1.0)
            for i in range(_MOST_HIDDEN):
                factor = jnp.maximum(total - of_kind - i, 0).astype(jnp.float32) / jnp.maximum(
                    total - i, 1
                ).astype(jnp.float32)
                miss = jnp.where(i < hidden[seat], miss * factor, miss)
            risk = jnp.where(counted & ~seen, risk * (1.0 - miss), risk)
        return jnp.where(score == 0, jnp.float32(0.0), risk)

    # ----- card values as keys (`_card_value`), for playing and keeping -----------------------------
    def _card_keys(self, seen: _Seen, board: _Board, attacks: _Attacks, plan: _SwapPlan, has_target):
        """((hi, lo) for playing, (hi, lo) for keeping): every card id's `_card_value` as keys."""
        b, f32 = self.b, jnp.float32
        mine = board.frontier[0]
        bird_gain = jax.vmap(lambda card: self._best_cell(board, card, mine)[0])(
            jnp.arange(b)
        )  # halves, -2 = none
        bird_key = (10.0 * jnp.maximum(bird_gain, 0).astype(f32) / 2, jnp.zeros(b, f32))
        keys = []
        for playing_now in (True, False):
            wh, wl = self._wile_keys(seen, attacks, plan, has_target, playing_now)
            keys.append((jnp.concatenate([bird_key[0], wh]), jnp.concatenate([bird_key[1], wl])))
        return keys[0], keys[1]

    def _wile_keys(self, seen: _Seen, attacks: _Attacks, plan: _SwapPlan, has_target, playing_now: bool):
        """(hi, lo) float32 [wile kinds]: each wile's `_card_value` as keys, played now or kept."""
        o = self.options
        i32 = jnp.int32
        in_grids, scores = seen.in_grids, seen.scores
        holds_murder = seen.hand[self.b + int(Wile.MURDER)] > 0
        his, los = [], []
        for kind in range(len(Wile)):
            if kind == Wile.MURDER:
                hi = jnp.where(
                    has_target,
                    10.0 * WINNING_MURDER,
                    10.0 * (-WINNING_MURDER if playing_now else KEEP_MURDER),
                )
                his.append(hi)
                los.append(jnp.float32(0.0))
                continue
            others = [w for w in range(len(in_grids)) if w != kind]
            arming = ~in_grids[kind] & in_grids[jnp.asarray(others)].all() & ~holds_murder
            pen = (arming & playing_now).astype(i32)
            if kind == Wile.BLOCKING:
                his.append(jnp.asarray(self.blocking_keys[0])[pen])
                los.append(jnp.asarray(self.blocking_keys[1])[pen])
                continue
            if kind == Wile.DISCARD:
                lh = jnp.clip(attacks.loss[attacks.best] + self.top, 0, 2 * self.top)
                sc = jnp.clip(scores[attacks.seat[attacks.best]], 0, o.max_score)
                table = self.attack_pen_keys
                hi, lo = jnp.asarray(table[0])[lh, sc, pen], jnp.asarray(table[1])[lh, sc, pen]
            else:
                table = self.swap_pen_keys
                gi = jnp.where(plan.found, jnp.clip(plan.gain[plan.at] + 2, 0, self.top + 2), 0)
                lh = jnp.clip(attacks.loss[plan.at] + self.top, 0, 2 * self.top)
                sc = jnp.clip(scores[attacks.seat[plan.at]], 0, o.max_score)
                # No plan above -1.0: max(-1.0, 0.0) - penalty.
                hi_found, lo_found = (
                    jnp.asarray(table[0])[gi, lh, sc, pen],
                    jnp.asarray(table[1])[gi, lh, sc, pen],
                )
                none_hi = jnp.where(pen == 1, -10.0 * ARMING_PENALTY, 0.0)
                hi = jnp.where(plan.found, hi_found, none_hi)
                lo = jnp.where(plan.found, lo_found, 0.0)
            no_attack_hi = jnp.where(pen == 1, -10.0 * ARMING_PENALTY, 0.0)
            his.append(jnp.where(attacks.exists, hi, no_attack_hi))
            los.append(jnp.where(attacks.exists, lo, 0.0))
        return jnp.stack([jnp.asarray(h, jnp.float32) for h in his]), jnp.stack(
            [jnp.asarray(x, jnp.float32) for x in los]
        )

    # ----- each decision's action (`act`) ----------------------------------------------------------
    def _draw(self, seen: _Seen, board: _Board, has_target, mask):
        """FIRST_DRAW / SECOND_DRAW (`_draw`): the last pile top whose worth reaches the best so far
        (from PILE_GAIN; later seats win ties), else the deck."""
        o = self.options
        b, start = self.b, self.start
        mine = board.frontier[0]
        best_hi = jnp.float32(10.0 * PILE_GAIN)  # worths are multiples of 0.5 or +-100: exact x 10
        choice = jnp.where(mask[start["draw_deck"]], start["draw_deck"], -1)
        for seat in range(o.num_players):
            card = seen.tops[seat]
            gain = self._best_cell(board, card, mine)[0]
            worth = jnp.where(
                card == b + int(Wile.MURDER),
                jnp.where(has_target, 10.0 * WINNING_MURDER, 10.0 * PILE_GAIN),
                jnp.where(card >= b, 0.0, 5.0 * gain),
            )
            take = mask[start["draw_pile"] + seat] & (worth >= best_hi)
            best_hi = jnp.where(take, worth, best_hi)
            choice = jnp.where(take, start["draw_pile"] + seat, choice)
        return jnp.where(choice < 0, jnp.argmax(mask), choice)

    def _discard_action(self, seen: _Seen, board: _Board, keep, has_target, mask):
        """DISCARD / EXTRA_DISCARD: the least (value, card) among the legal discards, or the Murder
        when that discard would leave nothing but a failing Murder to play (`_murder_forced`)."""
        b, k = self.b, self.k
        start = self.start["discard"]
        murder_card = b + int(Wile.MURDER)
        legal_discard = mask[start : start + k]
        d_hi = jnp.where(legal_discard, keep[0], jnp.inf)
        low_hi = d_hi.min()
        d_lo = jnp.where(legal_discard & (d_hi == low_hi), keep[1], jnp.inf)
        discard_card = jnp.argmax(legal_discard & (d_hi == low_hi) & (d_lo == d_lo.min()))
        left = seen.hand.at[discard_card].add(-1).at[murder_card].add(-1)
        anything = ((left > 0) & self._playable(seen, board)).any()
        holds_murder = seen.hand[murder_card] > 0
        forced = (discard_card != murder_card) & holds_murder & ~has_target & ~anything
        discard_card = jnp.where((seen.decision == _D.DISCARD) & forced, murder_card, discard_card)
        return start + discard_card

    def _playable(self, seen: _Seen, board: _Board) -> jax.Array:
        """bool [K] (`_playable`): the cards that could be played now (wiles need a target)."""
        n, b = self.options.num_players, self.b
        room = board.frontier[0].any()
        living = seen.playing & (jnp.arange(n) > 0)
        blockable = (living & board.taken.any(axis=1) & board.frontier.any(axis=1)).any()
        hittable = (living & board.birds.any(axis=1)).any()
        cards = jnp.arange(self.k)
        kinds = cards - b
        return jnp.where(
            (cards < b) | (kinds == Wile.MURDER),
            room,
            jnp.where(kinds == Wile.BLOCKING, blockable, hittable & ((kinds == Wile.DISCARD) | room)),
        )

    def _play_action(self, play, mask):
        """PLAY: the legal card of the greatest (value, -card)."""
        start = self.start["play"]
        legal_play = mask[start : start + self.k]
        p_hi = jnp.where(legal_play, play[0], -jnp.inf)
        top_play = p_hi.max()
        p_lo = jnp.where(legal_play & (p_hi == top_play), play[1], -jnp.inf)
        return start + jnp.argmax(legal_play & (p_hi == top_play) & (p_lo == p_lo.max()))

    def _own_cell_actions(self, seen: _Seen, board: _Board, plan: _SwapPlan, mask):
        """(PLACE_BIRD, MURDER_CELL, SWAP_CELL) actions: cells of my own grid."""
        start = self.start["own_cell"]
        legal_cells = mask[start : start + self.c]
        # PLACE_BIRD: the best legal cell for the pending card.
        place_action = start + self._best_cell(board, seen.pending_card, legal_cells)[1]
        # MURDER_CELL: the legal cell beside the fewest birds, then the lowest.
        murder_cell_action = start + jnp.argmin(jnp.where(legal_cells, board.beside[0], 1 << 20))
        # SWAP_CELL: the plan's cell if legal.
        swap_cell = (start + plan.cell) % mask.shape[0]
        swap_cell_action = jnp.where(mask[swap_cell], start + plan.cell, jnp.argmax(mask))
        return place_action, murder_cell_action, swap_cell_action

    def _opponent_actions(self, seen: _Seen, board: _Board, attacks: _Attacks, plan: _SwapPlan, target, mask):
        """(DISCARD_TARGET / SWAP_TARGET, PLACE_BLOCKING, MURDER_TARGET) actions: other seats."""
        o = self.options
        n, c, start = o.num_players, self.c, self.start
        scores, decision = seen.scores, seen.decision
        first_legal = jnp.argmax(mask)
        size = mask.shape[0]
        # DISCARD_TARGET / SWAP_TARGET.
        seat = jnp.where(decision == _D.SWAP_TARGET, plan.seat, attacks.seat[attacks.best])
        cell = jnp.where(decision == _D.SWAP_TARGET, plan.their, attacks.cell[attacks.best])
        target_action = start["opponent_cell"] + (seat - 1) * c + cell
        target_action = jnp.where(mask[target_action % size], target_action, first_legal)
        # PLACE_BLOCKING: the first legal best (score + 0.5 x birds beside), in halves.
        opp = jnp.arange((n - 1) * c)
        opp_seat, opp_cell = opp // c + 1, opp % c
        block_value = 2 * scores[opp_seat] + board.beside[opp_seat, opp_cell]
        legal_opp = mask[start["opponent_cell"] : start["opponent_cell"] + (n - 1) * c]
        blocking_action = jnp.where(
            legal_opp.any(),
            start["opponent_cell"] + jnp.argmax(jnp.where(legal_opp, block_value, -1)),
            first_legal,
        )
        # MURDER_TARGET.
        named = 1 + jnp.argmax(scores[1:] + 100 * seen.playing[1:].astype(jnp.int32))
        victim = jnp.where(target >= 0, target, named)
        murder_action = start["murder"] + victim - 1
        murder_action = jnp.where(mask[murder_action], murder_action, first_legal)
        return target_action, blocking_action, murder_action
