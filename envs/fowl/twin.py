"""Murder Most Fowl's batched twin: the rules of `envs/fowl/rules.py` as pure JAX functions.

`fowlplay.envs.make_jax("murder_most_fowl_v0", **options)` wraps `Twin` in the shared `TwinEnv`
(Pgx's API). The reference engine decides what the rules are; the alignment suite
(`tests/envs/test_twin_fowl.py`) holds this file equal to it, observation for observation.

How the state is held, so that a step stays a few thousand vector operations under `vmap`:
- Hands, seen cards and discard-pile contents are counts per card id; the deck and every discard
  pile are stacks of card ids (top at the length - 1), so a draw or a discard is one index.
- Grids are card ids per cell (-1 empty). Beside them, every bird card keeps whose grid it lies in
  (`owner`) and which birds lie on its four sides (`sides`), updated cell by cell as cards land.
  These per-bird arrays are in value-major order: bird (type t, value v) is rank (v - 1) * types + t,
  so the birds of one value are one slice and a lower-valued bird has a lower rank.
- Route scores: `points[r]` is the best route score among routes whose last (highest) bird is
  the bird of rank r. Birds are unique cards, so a grid holds at most one bird per (type, value), and a route
  visits values in rising order: a dynamic programme over values 1..max_value sees only the
  `num_types` birds of one value at a time, each pulling its (at most four) lower neighbours'
  tables in one gather. A bird's table holds, per start type s, the longest route start-to-here
  (`plain`), and per start type s and majority candidate t and count m of birds of other types
  than t, the most birds of type t (`double`: a route doubles when more than half its birds share
  a type, i.e. count(t) > m, so m never needs to exceed (max_value - 1) // 2). A step reruns the
  programme only where a bird entered or left a grid (as the reference rescores only there);
  under `vmap` only the games that need it run it (`_rescore_only_where_needed`). Each seat's
  score and clear score are kept beside `points`, computed once a step for the murder check, the
  observation and the returns alike.
- Counts and pile places are the smallest integers that hold the deck's size (int8 for every
  published deck), and seats are turned to an observer's order by selects, never by a gather.

Chance: the deck's order is fixed once, at the deal, and never again: the game ends when a turn
would start with an empty deck. `init` mixes a 32-bit `seed` from the key's own data, and every
draw of the deal and of the game takes one card uniformly among those left, at a place that the
seed and the deck's length give (`_deck_pick`): the cards come in the order of a uniform shuffle
(the reference's `rng.permutation`), drawn lazily, with no permutation kept. So no step draws
fresh chance and `step` never reports any; a converted game (`from_reference`) keeps the
reference's deck order (`ordered`) and is stepped exactly.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from fowlplay.envs.core.twin import (
    TwinRules,
    as_array,
    below,
    best_players,
    fmix32,
    pytree_dataclass,
    win_rewards,
)
from fowlplay.envs.fowl.observation import cell_features, pile_slots
from fowlplay.envs.fowl.rules import EMPTY, Decision, Wile, full_deck

_D = Decision
#: The four sides of a cell, and each side's opposite: up, down, left, right.
_SIDES = ((-1, 0), (1, 0), (0, -1), (0, 1))
_OPPOSITE = (1, 0, 3, 2)
#: The stage a played card asks for next, by wile kind (`Wile` order).
_WILE_STAGES = (_D.PLACE_BLOCKING, _D.DISCARD_TARGET, _D.SWAP_CELL, _D.MURDER_CELL)
#: A dynamic programme entry for "no such route".
_NONE = -1
#: Under vmap, the games that need their routes rescored are gathered into chunks of a sixteenth of
#: the batch (a step rescores about one game in five), and only those chunks run the programme
#: (measured: a sixteenth beat an eighth by about 5%, and a thirty-second too).
_RESCORE_CHUNKS = 16


def route_programme(t_: int, m_: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The route programme's static masks for `t_` bird types and at most `m_` birds of the other
    types in a doubled route (see the module docstring): (grows, shifts, base), each row a type."""
    w = t_ + t_ * t_ * (m_ + 1)
    grows = np.zeros((t_, w), bool)  # entries that grow by one bird of type `row`
    shifts = np.zeros((t_, w), bool)  # entries that take the entry of m - 1 (a bird of another type)
    base = np.full((t_, w), _NONE, np.int8)  # the route of one bird of type `row`
    for kind in range(t_):
        grows[kind, :t_] = True
        base[kind, kind] = 1
        for start in range(t_):
            for major in range(t_):
                for m in range(m_ + 1):
                    at = t_ + (start * t_ + major) * (m_ + 1) + m
                    if major == kind:
                        grows[kind, at] = True
                    elif m >= 1:
                        shifts[kind, at] = True
                if start == kind:
                    if major == kind:
                        base[kind, t_ + (start * t_ + major) * (m_ + 1)] = 1  # m = 0, one bird of t
                    elif m_ >= 1:
                        base[kind, t_ + (start * t_ + major) * (m_ + 1) + 1] = 0  # m = 1, none of t
    return grows, shifts, base


@pytree_dataclass
class GameState:
    """One game of Murder Most Fowl; cards are the reference's ids, cells row * grid_size + col."""

    deck: jax.Array  # int8 [deck_size] the cards left in the deck at 0..deck_len - 1
    deck_len: jax.Array  # int32
    ordered: jax.Array  # bool: `deck` is in order (top at deck_len - 1); else `seed` picks each draw
    seed: jax.Array  # uint32: the order of a deck the twin dealt (see `_deck_pick`)
    piles: jax.Array  # int8 [n, deck_size] each discard pile, bottom first, top at pile_len - 1
    pile_len: jax.Array  # int32 [n]
    pile_counts: jax.Array  # int8 [n, K] copies of each card id in each pile (`Twin.count_dtype`)
    slot_at: jax.Array  # int8 [n, deck_size] stack position of each `pile_order` slot's card (-1 none)
    hands: jax.Array  # int8 [n, K] copies of each card id in each hand
    known: jax.Array  # int8 [n, K] copies everyone saw go into each hand (and not leave it)
    grids: jax.Array  # int8 [n, cells] card id per cell, -1 empty
    owner: jax.Array  # int8 [birds] by rank: the seat whose grid holds each bird, -1 none
    sides: jax.Array  # int8 [birds, 4] by rank: the ranks of the birds beside it (up, down, left, right; -1)
    points: jax.Array  # int8 [birds] by rank: best route points among routes ending on each bird
    score: jax.Array  # int32 [n] each seat's best route points
    clear: jax.Array  # int32 [n] each seat's best route points among routes whose end type is not recorded
    wiles: jax.Array  # int32 [4] wiles of each kind lying in some grid (`Wile` order)
    alive: jax.Array  # bool [n]
    murdered: jax.Array  # bool [n]
    caught: jax.Array  # bool [n]
    recorded: jax.Array  # bool [n, types] types recorded against each murderer
    to_act: jax.Array  # int32
    stage: jax.Array  # int32 `Decision`
    first_from_pile: jax.Array  # bool: this turn's first draw came from a discard pile
    pending_card: jax.Array  # int32 the card being played (-1 none)
    pending_cell: jax.Array  # int32 the own cell where a Swap or Murder wile waits (-1 none)
    terminal: jax.Array  # bool


class _Move(NamedTuple):
    """The acting seat's action read (`Twin._move`): its block, and the cards, cells and seats it names."""

    me: jax.Array  # int32 the acting seat
    stage: jax.Array  # int32 the decision it answers (`Decision`)
    deck: jax.Array  # bool: a draw from the deck
    pile: jax.Array  # bool: a draw from a discard pile
    draw: jax.Array  # bool: either draw
    discard: jax.Array  # bool: a card discarded from my hand
    play: jax.Array  # bool: a card played from my hand
    own: jax.Array  # bool: a cell of my own grid
    target: jax.Array  # bool: a cell of an opponent's grid
    murder: jax.Array  # bool: a Murder's victim
    drawn_seat: jax.Array  # int32 the seat whose pile a pile draw takes from
    hand_card: jax.Array  # int32 the card discarded or played
    own_cell: jax.Array  # int32 the cell of my grid
    victim: jax.Array  # int32 the seat whose cell is targeted
    target_cell: jax.Array  # int32 the cell targeted
    victim_card: jax.Array  # int32 the card on that cell (before the step)
    murder_victim: jax.Array  # int32 the seat a Murder names
    murder_succeeds: jax.Array  # bool: a Murder now would succeed (on the scores before it)


def _stored(tree: Any) -> Any:
    """The same pytree, each leaf computed once and stored: a sum over a major axis, which XLA on CPU
    never fuses into its consumers. Without it XLA fuses a step's whole update (and the selects of
    `TwinEnv` that follow it) into every reader of the state, recomputing it once per reader and per
    element: the legal mask's opponent cells alone redid the murder check for each of their cells."""

    def stored(leaf: jax.Array) -> jax.Array:
        pair = jnp.stack([leaf, jnp.zeros_like(leaf)])
        return pair.any(0) if leaf.dtype == bool else pair.sum(0, dtype=leaf.dtype)

    return jax.tree_util.tree_map(stored, tree)


def _table(values: Any) -> Any:
    """A lookup k -> float32 of the given reference values (clipped to the table)."""
    table = jnp.asarray(np.asarray(values, dtype=np.float32))
    last = table.shape[0] - 1
    return lambda k: jnp.take(table, jnp.clip(k, 0, last), mode="clip")


def _rescore_only_where_needed(route_points):
    """`rescore(need, owner, sides, points)`: `route_points(owner, sides)` where `need`, else `points`.

    Under `vmap` a plain `where` would run the programme for every game of the batch, needed or
    not; this batching rule lines up the games that need it first and runs it chunk by chunk
    (a `while_loop` of as many chunks as there are such games, usually one) on those games only.
    """

    @jax.custom_batching.custom_vmap
    def rescore(need, owner, sides, points):
        return jnp.where(need, route_points(owner, sides), points)

    @rescore.def_vmap
    def rescore_batch(axis_size, in_batched, need, owner, sides, points):
        need, owner, sides, points = (
            x if batched else jnp.broadcast_to(x, (axis_size, *x.shape))
            for x, batched in zip((need, owner, sides, points), in_batched)
        )
        chunk = -(-axis_size // _RESCORE_CHUNKS)
        # The games that need it first, in batch order, then `axis_size` (none): each needing game's
        # place is a prefix sum (a tenth of the time of a stable argsort on CPU).
        place = jnp.where(need, jnp.cumsum(need, dtype=jnp.int32) - 1, chunk * _RESCORE_CHUNKS)
        order = jnp.full(chunk * _RESCORE_CHUNKS, axis_size, jnp.int32)
        order = order.at[place].set(jnp.arange(axis_size, dtype=jnp.int32), mode="drop")
        count = need.sum()

        def more(carry):
            return carry[0] * chunk < count

        def one_chunk(carry):
            i, points = carry
            games = jax.lax.dynamic_slice_in_dim(order, i * chunk, chunk)
            fresh = jax.vmap(route_points)(
                jnp.take(owner, games, axis=0, mode="clip"), jnp.take(sides, games, axis=0, mode="clip")
            )
            kept = jnp.where(i * chunk + jnp.arange(chunk) < count, games, axis_size)  # the rest: dropped
            return i + 1, points.at[kept].set(fresh, mode="drop")

        _, points = jax.lax.while_loop(more, one_chunk, (jnp.zeros((), jnp.int32), points))
        return points, True

    return rescore


class Twin(TwinRules):
    """Murder Most Fowl for one option set: every player count (2-4), grid size and rule option."""

    def __init__(self, options: Any, observer: Any, layout: Any) -> None:
        super().__init__(options, observer, layout)
        o = options
        self.n = n = o.num_players
        self.types, self.values = o.types, o.max_value
        self.birds = o.num_birds  # = the first wile's id
        self.kinds = o.num_kinds
        self.size, self.cells = o.grid_size, o.cells
        self.deck_size = o.deck_size
        if o.deck_size >= 1 << 16:
            raise ValueError(f"the JAX twin deals at most 65535 cards; got a deck of {o.deck_size}")
        #: Copies of a card and places in a pile are below deck_size: held in the smallest signed
        #: integer that fits (int8 for every published deck), so a step copies fewer bytes.
        self.count_dtype = next(
            d for d in (jnp.int8, jnp.int16, jnp.int32) if o.deck_size <= jnp.iinfo(d).max
        )
        self.centre = o.cells // 2
        self.margin, self.min_route = o.murder_margin, o.min_route
        self.murder_card = self.birds + int(Wile.MURDER)
        self._blocks = {block.name: (block.start, block.size) for block in layout.blocks}
        self._block_order = [block.name for block in layout.blocks]
        self._seats = np.arange(n)
        # Neighbour cells of every cell (-1 off the grid), side by side in `_SIDES` order.
        s = self.size
        sides = np.full((o.cells, 4), -1, np.int32)
        for cell in range(o.cells):
            r, c = divmod(cell, s)
            for d, (dr, dc) in enumerate(_SIDES):
                if 0 <= r + dr < s and 0 <= c + dc < s:
                    sides[cell, d] = (r + dr) * s + c + dc
        self._cell_sides = jnp.asarray(sides)
        centre_row = np.zeros(s, np.int32)  # the frontier of an empty grid, as `_frontier` rows
        centre_row[self.centre // s] = 1 << (self.centre % s)
        self._centre_row = jnp.asarray(centre_row)
        self._full_deck = np.asarray(full_deck(o), np.int8)
        self._route_tables(o)
        self._observation_tables(o)
        self._route_points_jit = jax.jit(self.route_points)  # for converting reference games
        self._scores_jit = jax.jit(self._scores)
        self._rescore = _rescore_only_where_needed(self.route_points)

    # ----- tables ------------------------------------------------------------------------------
    def _route_tables(self, o: Any) -> None:
        """The route programme's static masks (see the module docstring)."""
        t_, v_ = self.types, self.values
        self.most_others = m_ = (v_ - 1) // 2  # a doubled route has count(t) > m, and length <= max_value
        self.width = t_ + t_ * t_ * (m_ + 1)  # plain[s], then double[s, t, m]
        grows, shifts, base = route_programme(t_, m_)
        self._grows, self._shifts, self._base = jnp.asarray(grows), jnp.asarray(shifts), jnp.asarray(base)

    def _observation_tables(self, o: Any) -> None:
        """Every observation number as the reference computes it, rounded as it rounds."""
        table = cell_features(o)  # the reference's own feature rows; the last (EMPTY) all zero
        self._cell_table = table
        # Each card's value feature, read from the table (index card + 1; EMPTY and wiles read 0).
        values = np.zeros(self.birds + 2, np.float32)
        values[1 : self.birds + 1] = table[: self.birds, self.types]
        self._value_feature = jnp.asarray(values)
        self._score_value = _table([k * (1.0 / o.max_score) for k in range(o.max_score + 1)])
        self._deck_value = _table([k * (1.0 / o.deck_size) for k in range(o.deck_size + 1)])
        murder_scale = 1.0 / max(1, o.murder_wiles)
        self._murder_value = _table([k * murder_scale for k in range(o.murder_wiles + 1)])
        self._inverse_depth = _table([0.0] + [1.0 / depth for depth in range(1, o.deck_size + 1)])
        # `pile_order` slots: a bird has one, a wile kind one per copy, filled from the pile's top down.
        first = pile_slots(o)
        self._first_slot = np.asarray(first, np.int32)
        owner = np.zeros(o.deck_size, np.int32)  # the card id each slot belongs to
        for card, start in enumerate(first):
            stop = first[card + 1] if card + 1 < len(first) else o.deck_size
            owner[start:stop] = card
        self._slot_card = jnp.asarray(owner)
        self._slot_first = jnp.asarray(np.r_[True, owner[1:] != owner[:-1]])
        self._slot_last = jnp.asarray(np.r_[owner[1:] != owner[:-1], True])
        self._wile_ids = jnp.arange(self.birds, self.kinds, dtype=jnp.int32)

    # ----- small helpers --------------------------------------------------------------------------
    def _relative(self, x: jax.Array, player: jax.Array) -> jax.Array:
        """`x` with its leading (seat) axis in `player`'s relative order (0 = player, 1 = their left)."""
        # One select per other rotation: under vmap a slice at each game's own seat is a gather,
        # which XLA on CPU runs element by element (an 88-number piece cost as much as 800 others).
        shift = player % self.n
        out = x
        for r in range(1, self.n):
            out = jnp.where(shift == r, jnp.roll(x, -r, axis=0), out)
        return out

    def _rows(self, cells: jax.Array) -> jax.Array:
        """int32 [n, size]: bool [n, cells] as one bit set per grid row, bit c for column c."""
        s = self.size
        bits = cells.reshape(-1, s, s).astype(jnp.int32) << jnp.arange(s, dtype=jnp.int32)
        return bits.sum(axis=2)

    def _frontier(self, rows: jax.Array) -> jax.Array:
        """int32 [n, size]: from the taken cells' row bit sets (`_rows`), the empty cells a card may
        go on (beside a card; the centre of an empty grid), as row bit sets."""
        # A cell's four sides are two shifts and two row offsets of n * size words (cell-wise shifted
        # copies were eight passes over every cell a step, a tenth of its time).
        none = jnp.zeros((self.n, 1), jnp.int32)
        above = jnp.concatenate([none, rows[:, :-1]], axis=1)  # the row above each row
        below = jnp.concatenate([rows[:, 1:], none], axis=1)
        beside = ((rows << 1) | (rows >> 1) | above | below) & ~rows & ((1 << self.size) - 1)
        empty_grid = (rows == 0).all(axis=1, keepdims=True)
        return jnp.where(empty_grid, self._centre_row, beside)

    def _cells(self, rows: jax.Array) -> jax.Array:
        """bool [..., cells] of row bit sets [..., size] (`_frontier`'s)."""
        s = self.size
        bits = (rows[..., None] >> jnp.arange(s, dtype=jnp.int32)) & 1
        return (bits != 0).reshape(*rows.shape[:-1], s * s)

    def _scores(
        self, owner: jax.Array, points: jax.Array, recorded: jax.Array
    ) -> tuple[jax.Array, jax.Array]:
        """(score, clear score) of every seat: its best route, and its best route whose end type is
        not recorded against it (computed once a step, kept in the state)."""
        mine = owner[None, :] == self._seats[:, None]  # [n, birds]
        kind = jnp.arange(self.birds) % self.types  # ranks are value-major
        barred = jnp.take(recorded, kind, axis=1, mode="clip")  # [n, birds]
        points = points.astype(jnp.int32)[None, :]
        score = jnp.where(mine, points, 0).max(axis=1)
        clear = jnp.where(mine & ~barred, points, 0).max(axis=1)
        return score, clear

    def _escalated(self, g: GameState) -> jax.Array:
        return (g.wiles[: len(_WILE_STAGES) - 1] > 0).all()

    # ----- routes -------------------------------------------------------------------------------
    def _rank(self, card: jax.Array) -> jax.Array:
        """The rank of a bird card (value-major), -1 for a wile or EMPTY."""
        bird = (card >= 0) & (card < self.birds)
        return jnp.where(bird, (card % self.values) * self.types + card // self.values, -1)

    def route_points(self, owner: jax.Array, sides: jax.Array) -> jax.Array:
        """int32 [birds] by rank: the best route points among routes ending on each bird (0 if none)."""
        t_, v_, w = self.types, self.values, self.width
        placed = owner >= 0
        nb = sides.astype(jnp.int32)
        # Table rows are ranks; the extra last row is "no route". A lower value is a lower rank.
        below = jnp.arange(self.birds)[:, None] // t_ * t_  # the first rank of each bird's value
        rows = jnp.where((nb >= 0) & (nb < below), nb, v_ * t_)
        table = jnp.full((v_ * t_ + 1, w), _NONE, jnp.int8)
        table = table.at[:t_].set(jnp.where(placed[:t_, None], self._base, _NONE).astype(jnp.int8))
        none = jnp.int8(_NONE)
        # One value at a time, unrolled: a loop's bookkeeping (its counter, the slices' offsets) cost
        # more than the programme's own arithmetic, once per value and per chunk of games.
        for v in range(1, v_):
            # The tables of the birds of value v + 1, from their lower neighbours' (one gather).
            got = jnp.take(table, rows[v * t_ : (v + 1) * t_].reshape(-1), axis=0, mode="clip")
            got = got.reshape(t_, 4, w)
            best = jnp.maximum(jnp.maximum(got[:, 0], got[:, 1]), jnp.maximum(got[:, 2], got[:, 3]))
            grown = jnp.where(best >= 0, best + 1, none)
            shifted = jax.lax.pad(best[:, :-1], none, [(0, 0, 0), (1, 0, 0)])
            extended = jnp.where(self._grows, grown, jnp.where(self._shifts, shifted, none))
            here = placed[v * t_ : (v + 1) * t_, None]
            table = table.at[v * t_ : (v + 1) * t_].set(
                jnp.where(here, jnp.maximum(extended, self._base), none)
            )
        table = table[: v_ * t_].reshape(v_, t_, w)
        # A route starts and ends with the same type: read each bird's own-type entries only (the
        # others masked to "no route", so a max over start types picks them).
        m_ = self.most_others
        span = t_ * (m_ + 1)
        own = jnp.asarray(np.eye(t_, dtype=bool))  # [bird type, start type]
        plain = jnp.where(own, table[:, :, :t_], none).max(axis=2).astype(jnp.int32)  # [value, type]
        double = table[:, :, t_:].reshape(v_, t_, t_, span)  # [value, type, start type, majority x m]
        count = jnp.where(own[:, :, None], double, none).max(axis=2).astype(jnp.int32)  # majority birds
        others = jnp.asarray(np.tile(np.arange(m_ + 1), t_))
        length = count + others
        doubled = (count > others) & (length >= self.min_route)
        best = jnp.where(doubled, 2 * length, 0).max(axis=2)
        best = jnp.maximum(best, jnp.where(plain >= self.min_route, plain, 0))
        return best.reshape(-1).astype(jnp.int8)  # at most 2 * max_value <= 40

    def _rescored(self, need: jax.Array, owner: jax.Array, sides: jax.Array, points: jax.Array):
        """`points` with the route programme rerun where `need` (only there, under vmap)."""
        return self._rescore(need, owner, sides, points)

    # ----- the deal --------------------------------------------------------------------------------
    def _deck_pick(self, ordered: jax.Array, seed: jax.Array, length: jax.Array) -> jax.Array:
        """Where in `deck` the next draw is: the top of an ordered deck, else position
        floor(h * length / 2**32) with h = fmix32(seed ^ length * 0x9E3779B9) (MurmurHash3's
        finaliser): one card uniformly among those left at each draw, which is exactly a uniform
        shuffle's order, all of it fixed by the seed drawn at the deal."""
        h = fmix32(seed ^ (length.astype(jnp.uint32) * jnp.uint32(0x9E3779B9)))
        return jnp.where(ordered, length - 1, below(h, length))

    def _draw(self, deck: jax.Array, length: jax.Array, at: jax.Array) -> tuple[jax.Array, jax.Array]:
        """(card at `at`, the deck without it): the last card left fills its place."""
        card = jnp.take(deck, at, mode="clip")
        last = jnp.take(deck, length - 1, mode="clip")
        return card.astype(jnp.int32), jnp.where(jnp.arange(self.deck_size) == at, last, deck)

    def init(self, key: jax.Array) -> GameState:
        """A freshly dealt game: a pile card and two hand cards per seat from a uniformly shuffled deck."""
        n, d, i32 = self.n, self.deck_size, jnp.int32
        # The seed is the key's own bits, mixed (a key is already random; no threefry round here).
        data = jax.random.key_data(key).reshape(-1).astype(jnp.uint32)
        seed = fmix32(data[0] ^ fmix32(data[-1] ^ jnp.uint32(0x85EBCA6B)))
        deck, length = jnp.asarray(self._full_deck), jnp.asarray(d, i32)
        dealt = []
        for _ in range(3 * n):  # the reference pops a pile card per seat, then two hand cards each
            card, deck = self._draw(deck, length, self._deck_pick(jnp.zeros((), bool), seed, length))
            dealt.append(card)
            length = length - 1
        tops = jnp.stack(dealt[:n])
        first, second = jnp.stack(dealt[n::2]), jnp.stack(dealt[n + 1 :: 2])
        piles = jnp.full((n, d), EMPTY, jnp.int8).at[:, 0].set(tops.astype(jnp.int8))
        c8 = self.count_dtype
        pile_counts = jax.nn.one_hot(tops, self.kinds, dtype=c8)
        first_slot = jnp.take(jnp.asarray(self._first_slot), tops, mode="clip")
        slot_at = jnp.where(jnp.arange(d)[None, :] == first_slot[:, None], 0, -1).astype(c8)
        hands = jax.nn.one_hot(first, self.kinds, dtype=c8) + jax.nn.one_hot(second, self.kinds, dtype=c8)
        return GameState(
            deck=deck.astype(jnp.int8),
            deck_len=length,
            ordered=jnp.zeros((), bool),
            seed=seed,
            piles=piles,
            pile_len=jnp.ones(n, i32),
            pile_counts=pile_counts,
            slot_at=slot_at,
            hands=hands,
            known=jnp.zeros((n, self.kinds), c8),
            grids=jnp.full((n, self.cells), EMPTY, jnp.int8),
            owner=jnp.full(self.birds, -1, jnp.int8),
            sides=jnp.full((self.birds, 4), EMPTY, jnp.int8),
            points=jnp.zeros(self.birds, jnp.int8),
            score=jnp.zeros(n, i32),
            clear=jnp.zeros(n, i32),
            wiles=jnp.zeros(len(Wile), i32),
            alive=jnp.ones(n, bool),
            murdered=jnp.zeros(n, bool),
            caught=jnp.zeros(n, bool),
            recorded=jnp.zeros((n, self.types), bool),
            to_act=jnp.zeros((), i32),
            stage=jnp.asarray(int(_D.FIRST_DRAW), i32),
            first_from_pile=jnp.zeros((), bool),
            pending_card=jnp.asarray(EMPTY, i32),
            pending_cell=jnp.asarray(EMPTY, i32),
            terminal=jnp.zeros((), bool),
        )

    # ----- legality -------------------------------------------------------------------------------
    def _targets(self, g: GameState, me: jax.Array):
        """(frontier rows, room in my grid, opponents whose grid has a card, opponents' bird rows)
        for seat `me`; rows are `_rows` bit sets."""
        taken = g.grids != EMPTY
        rows = self._rows(taken)
        frontier = self._frontier(rows)
        opponent = (self._seats != me) & g.alive
        room = ((frontier != 0).any(axis=1) & (self._seats == me)).any()
        started = opponent & (rows != 0).any(axis=1)
        hittable = jnp.where(
            opponent[:, None], self._rows(taken & (g.grids.astype(jnp.int32) < self.birds)), 0
        )
        return frontier, room, started, hittable

    def _playable_cards(self, frontier, room, started, hittable) -> jax.Array:
        """bool [K]: which card ids could be played now (wiles need a target)."""
        can_block = (started & (frontier != 0).any(axis=1)).any()
        can_hit = (hittable != 0).any()
        wiles = jnp.stack([can_block, can_hit, can_hit & room, room])
        return jnp.concatenate([jnp.broadcast_to(room, (self.birds,)), wiles])

    def legal_mask(self, g: GameState) -> jax.Array:
        """Bool mask of the acting player's legal actions (the reference's `legal_mask`)."""
        g = _stored(g)
        me, stage = g.to_act, g.stage
        frontier, room, started, hittable = self._targets(g, me)
        playable = self._playable_cards(frontier, room, started, hittable)
        drawing = (stage == _D.FIRST_DRAW) | (stage == _D.SECOND_DRAW)
        from_piles = (stage == _D.FIRST_DRAW) | ((stage == _D.SECOND_DRAW) & ~g.first_from_pile)
        hand = jnp.take(g.hands, me, axis=0, mode="clip") > 0
        discarding = (stage == _D.DISCARD) | (stage == _D.EXTRA_DISCARD)
        own_cell = (stage == _D.PLACE_BIRD) | (stage == _D.SWAP_CELL) | (stage == _D.MURDER_CELL)
        hitting = (stage == _D.DISCARD_TARGET) | (stage == _D.SWAP_TARGET)
        # Cells to block or hit, and my own frontier, as row bit sets, stored before they are spread
        # to one bool per cell (else XLA redoes the rows' arithmetic for each cell).
        blocking = jnp.where(started[:, None], frontier, 0)
        targets = jnp.where(stage == _D.PLACE_BLOCKING, blocking, jnp.where(hitting, hittable, 0))
        mine = jnp.where((self._seats == me)[:, None], frontier, 0).max(axis=0)
        opponents, mine = _stored((self._relative(targets, me)[1:], mine))
        blocks = {
            "draw_deck": (drawing & (g.deck_len > 0))[None],
            "draw_pile": from_piles & (self._relative(g.pile_len, me) > 0),
            "discard": discarding & hand,
            "play": (stage == _D.PLAY) & hand & playable,
            "own_cell": own_cell & self._cells(mine),
            "opponent_cell": self._cells(opponents).reshape(-1),
            "murder": (stage == _D.MURDER_TARGET) & self._relative(g.alive, me)[1:],
        }
        return jnp.concatenate([blocks[name] for name in self._block_order])

    # ----- a step ---------------------------------------------------------------------------------
    def _write(self, g: GameState, seat: jax.Array, cell: jax.Array, card: jax.Array, do: jax.Array):
        """Put `card` on a grid cell (where `do`), keeping `owner` and `sides` in step."""
        cells, birds = self.cells, self.birds
        # Where nothing is written, any real cell serves: its own card is written back unchanged.
        seat, cell = jnp.clip(seat, 0, self.n - 1), jnp.clip(cell, 0, cells - 1)
        at = seat * cells + cell
        flat = g.grids.reshape(-1)
        old = jnp.take(flat, at, mode="clip").astype(jnp.int32)
        card = jnp.where(do, card, old)
        flat = jax.lax.dynamic_update_slice(flat, card.astype(jnp.int8)[None], (at,))
        beside = jnp.take(self._cell_sides, cell, axis=0, mode="clip")  # [4] cells
        around = jnp.where(beside >= 0, jnp.take(flat, seat * cells + beside, mode="clip"), EMPTY)
        around = self._rank(around.astype(jnp.int32))
        new, gone = self._rank(card), self._rank(old)
        ranks = jnp.arange(birds)
        # A bird beside the cell sees the new bird (or no bird) on its side facing the cell.
        facing = ranks[:, None] == around[jnp.asarray(_OPPOSITE)][None, :]
        sides = jnp.where(facing, new.astype(jnp.int8), g.sides)
        landed = ranks == new
        sides = jnp.where(landed[:, None], around.astype(jnp.int8)[None, :], sides)
        owner = jnp.where(landed, seat, jnp.where((ranks == gone) & (old != card), -1, g.owner)).astype(
            jnp.int8
        )
        return g.replace(grids=flat.reshape(self.n, cells), sides=sides, owner=owner)

    def step(self, g: GameState, action: jax.Array, key: jax.Array) -> tuple[GameState, jax.Array]:
        """Apply a legal action and everything it sets off (no fresh chance: always False)."""
        move = self._move(g, action.astype(jnp.int32))
        g = self._move_cards(g, move)
        g = self._lay(g, move)
        g = self._murder(g, move)
        return self._next_decision(g, move), jnp.zeros((), bool)

    def _move(self, g: GameState, a: jax.Array) -> _Move:
        """The acting seat's action `a` read: its block, and the cards, cells and seats it names."""
        n, i32 = self.n, jnp.int32
        b = {name: start for name, (start, _) in self._blocks.items()}
        me = g.to_act
        is_deck = a == b["draw_deck"]
        is_pile = (a >= b["draw_pile"]) & (a < b["discard"])
        # Wile targets: opponent seat and cell.
        j, target_cell = (a - b["opponent_cell"]) // self.cells, (a - b["opponent_cell"]) % self.cells
        victim = (me + j + 1) % n
        victim_card = jnp.take(g.grids.reshape(-1), victim * self.cells + target_cell, mode="clip").astype(
            i32
        )
        is_discard = (a >= b["discard"]) & (a < b["play"])
        # The murder: checked on the scores before it (nothing in a grid changes at this step).
        score = g.score
        m_victim = (me + a - b["murder"] + 1) % n
        lead = jnp.take(score, m_victim, mode="clip") >= jnp.take(score, me, mode="clip") + self.margin
        return _Move(
            me=me,
            stage=g.stage,
            deck=is_deck,
            pile=is_pile,
            draw=is_deck | is_pile,
            discard=is_discard,
            play=(a >= b["play"]) & (a < b["own_cell"]),
            own=(a >= b["own_cell"]) & (a < b["opponent_cell"]),
            target=(a >= b["opponent_cell"]) & (a < b["murder"]),
            murder=a >= b["murder"],
            drawn_seat=(me + a - b["draw_pile"]) % n,
            hand_card=jnp.where(is_discard, a - b["discard"], a - b["play"]),  # a discard or a play
            own_cell=a - b["own_cell"],
            victim=victim,
            target_cell=target_cell,
            victim_card=victim_card,
            murder_victim=m_victim,
            murder_succeeds=self._escalated(g) | lead,
        )

    def _move_cards(self, g: GameState, m: _Move) -> GameState:
        """Draws and discards, and a bird a Discard wile hits: the deck, hands, seen cards and piles."""
        i32 = jnp.int32
        seats = self._seats
        # Draws: the deck's top or a pile's top into my hand.
        deck_top, deck = self._draw(g.deck, g.deck_len, self._deck_pick(g.ordered, g.seed, g.deck_len))
        deck = jnp.where(m.deck, deck, g.deck)
        drawn_len = jnp.take(g.pile_len, m.drawn_seat, mode="clip")
        pile_top = jnp.take(g.piles.reshape(-1), m.drawn_seat * self.deck_size + drawn_len - 1, mode="clip")
        drawn = jnp.where(m.deck, deck_top, pile_top.astype(i32))

        # Hands and what everyone saw go into them.
        card_ids = jnp.arange(self.kinds)
        mine = seats[:, None] == m.me
        gained = mine & (card_ids[None, :] == drawn) & m.draw
        lost = mine & (card_ids[None, :] == m.hand_card) & (m.discard | m.play)
        c8 = self.count_dtype
        hands = (g.hands + gained - lost).astype(c8)
        known = (g.known + (gained & m.pile)).astype(c8)
        known = (known - (lost & (known > 0))).astype(c8)

        # Discard piles: one push (a discard, a bird hit by a Discard wile) or one pop (a draw).
        to_victim_pile = m.target & (m.stage == _D.DISCARD_TARGET)
        push = m.discard | to_victim_pile
        pile_seat = jnp.where(m.pile, m.drawn_seat, jnp.where(m.discard, m.me, m.victim))
        pile_card = jnp.where(m.pile, drawn, jnp.where(m.discard, m.hand_card, m.victim_card))
        delta = push.astype(i32) - m.pile.astype(i32)
        at_seat = seats == pile_seat
        pile_len = g.pile_len + at_seat * delta
        moved_card = at_seat[:, None] & (card_ids[None, :] == pile_card)
        pile_counts = (g.pile_counts + moved_card * delta).astype(c8)
        top_at = pile_seat * self.deck_size + jnp.take(g.pile_len, pile_seat, mode="clip")
        flat_piles = g.piles.reshape(-1)
        old_slot = jnp.take(flat_piles, top_at, mode="clip")
        put = jnp.where(push, pile_card.astype(jnp.int8), old_slot)
        piles = jax.lax.dynamic_update_slice(flat_piles, put[None], (top_at,)).reshape(g.piles.shape)
        return g.replace(
            deck=deck,
            deck_len=g.deck_len - m.deck,
            piles=piles,
            pile_len=pile_len,
            pile_counts=pile_counts,
            slot_at=self._slots_after(g, pile_seat, pile_card, push, m.pile),
            hands=hands,
            known=known,
        )

    def _lay(self, g: GameState, m: _Move) -> GameState:
        """The played card onto my cell or a victim's, a swapped bird onto my waiting cell; the wiles
        in grids, and the route points rescored where a bird came or went."""
        birds = self.birds
        pending = g.pending_card
        g2 = self._write(
            g,
            jnp.where(m.own, m.me, m.victim),
            jnp.where(m.own, m.own_cell, m.target_cell),
            pending,
            m.own | m.target,
        )
        swapping = m.target & (m.stage == _D.SWAP_TARGET)
        g2 = self._write(g2, m.me, g.pending_cell, m.victim_card, swapping)
        wile_kind = pending - birds
        onto_empty = (m.own & (pending >= birds)) | (m.target & (m.stage != _D.SWAP_TARGET))
        wiles = g.wiles + ((jnp.arange(len(Wile)) == wile_kind) & onto_empty)
        hits = m.target & (m.stage != _D.PLACE_BLOCKING)  # Discard or Swap: a bird leaves its grid
        moved = (m.own & (pending < birds)) | hits
        return g2.replace(wiles=wiles, points=self._rescored(moved, g2.owner, g2.sides, g.points))

    def _murder(self, g: GameState, m: _Move) -> GameState:
        """A Murder played: its victim out, their hand shown and their types recorded against me, or
        me caught; then every seat's score and clear score."""
        seats = self._seats
        struck = (seats == m.murder_victim) & m.murder & m.murder_succeeds
        failed = (seats == m.me) & m.murder & ~m.murder_succeeds
        victim_hand = jnp.take(g.hands, m.murder_victim, axis=0, mode="clip")
        kind_held = (victim_hand[: self.birds].reshape(self.types, self.values) > 0).any(axis=1)
        mine = seats[:, None] == m.me
        recorded = g.recorded | (mine & kind_held[None, :] & m.murder & m.murder_succeeds)
        score, clear = self._scores(g.owner, g.points, recorded)
        return g.replace(
            known=jnp.where(struck[:, None], g.hands, g.known),
            score=score,
            clear=clear,
            alive=g.alive & ~struck & ~failed,
            murdered=g.murdered | struck,
            caught=g.caught | failed,
            recorded=recorded,
        )

    def _next_decision(self, g: GameState, m: _Move) -> GameState:
        """What comes next: the acting seat's next decision, or the next living seat's turn, or the end."""
        n, birds, i32 = self.n, self.birds, jnp.int32
        me, stage = m.me, m.stage
        first_draw = m.draw & (stage == _D.FIRST_DRAW)
        second_possible = (g.deck_len > 0) | (~m.pile & (g.pile_len > 0).any())
        hand_now = jnp.take(g.hands, me, axis=0, mode="clip") > 0
        can_play = (hand_now & self._playable_cards(*self._targets(g, me))).any()
        shows = m.discard & (stage == _D.DISCARD) & ~can_play
        mine = self._seats[:, None] == me
        known = jnp.where(mine & shows, g.hands, g.known)
        card_stage = jnp.where(
            m.hand_card < birds,
            int(_D.PLACE_BIRD),
            jnp.take(jnp.asarray([int(s) for s in _WILE_STAGES], i32), m.hand_card - birds, mode="clip"),
        )
        next_stage = jnp.select(
            [
                first_draw & second_possible,
                m.draw,
                m.discard & (stage == _D.DISCARD),
                m.play,
                m.own & ((stage == _D.SWAP_CELL) | (stage == _D.MURDER_CELL)),
            ],
            [
                jnp.asarray(int(_D.SECOND_DRAW), i32),
                jnp.asarray(int(_D.DISCARD), i32),
                jnp.where(can_play, int(_D.PLAY), int(_D.EXTRA_DISCARD)).astype(i32),
                card_stage.astype(i32),
                stage + 1,  # SWAP_CELL -> SWAP_TARGET, MURDER_CELL -> MURDER_TARGET
            ],
            stage,
        )
        ends_turn = (
            (m.discard & (stage == _D.EXTRA_DISCARD))
            | (m.own & (stage == _D.PLACE_BIRD))
            | m.target
            | m.murder
        )
        last_one = g.alive.sum() == 1
        # The next living seat to my left.
        later = self._relative(g.alive, me)[1:]
        nxt = (me + 1 + jnp.argmax(later)) % n
        over = ends_turn & (last_one | (g.deck_len == 0))
        starts = ends_turn & ~over
        waits = m.own & ((stage == _D.SWAP_CELL) | (stage == _D.MURDER_CELL))
        return g.replace(
            known=known,
            to_act=jnp.where(starts, nxt, me).astype(i32),
            stage=jnp.where(starts, int(_D.FIRST_DRAW), next_stage).astype(i32),
            first_from_pile=jnp.where(first_draw, m.pile, jnp.where(starts, False, g.first_from_pile)),
            pending_card=jnp.where(ends_turn, EMPTY, jnp.where(m.play, m.hand_card, g.pending_card)).astype(
                i32
            ),
            pending_cell=jnp.where(ends_turn, EMPTY, jnp.where(waits, m.own_cell, g.pending_cell)).astype(
                i32
            ),
            terminal=g.terminal | over,
        )

    # ----- what a seat sees ------------------------------------------------------------------------
    def observe(self, g: GameState, player: jax.Array) -> jax.Array:
        """`player`'s float32 observation, equal to the reference's `FowlObserver.encode`."""
        g = _stored(g)
        n, f32 = self.n, jnp.float32
        player = jnp.asarray(player, jnp.int32)
        rel = lambda x: self._relative(x, player)  # noqa: E731 - a short local alias
        score, clear = g.score, g.clear
        escalated = self._escalated(g)
        grids = rel(g.grids).astype(jnp.int32)
        tops = jnp.take_along_axis(g.piles, jnp.clip(g.pile_len - 1, 0)[:, None], axis=1)[:, 0]
        tops = jnp.where(g.pile_len > 0, tops.astype(jnp.int32), -1)
        rel_scores = rel(score)
        alive_me = jnp.take(g.alive, player, mode="clip")
        others = rel(g.alive) & (self._seats > 0) & alive_me
        murder = self.murder_card
        mine = jnp.take(g.hands[:, murder], player, mode="clip")
        on_top = (tops == murder).sum()
        lower = g.pile_counts[:, murder].sum() - on_top
        seen = jnp.where(self._seats != player, g.known[:, murder], 0).sum()
        played = g.wiles[int(Wile.MURDER)]
        unseen = self.options.murder_wiles - mine - on_top - lower - seen - played
        pieces = {
            "decision": jnp.arange(len(Decision)) == g.stage,
            "acting": self._seats == (g.to_act - player) % n,
            "my_hand": jnp.take(g.hands, player, axis=0, mode="clip"),
            "pending_card": jnp.arange(self.kinds) == g.pending_card,
            "pending_cell": (jnp.arange(self.cells) == g.pending_cell) & (g.pending_card != EMPTY),
            "grids": self._cell_features(grids),
            "pile_tops": rel(jnp.arange(self.kinds)[None, :] == tops[:, None]),
            "pile_contents": rel(g.pile_counts),
            "pile_order": rel(self._pile_order(g)),
            "hand_sizes": rel(g.hands.sum(axis=1)) * 0.25,
            "known_hands": rel(g.known),
            "playing": rel(g.alive),
            "murdered": rel(g.murdered),
            "caught": rel(g.caught),
            "recorded_types": rel(g.recorded),
            "arrested": rel(g.recorded.any(axis=1) & (clear < score)),
            "wiles_in_grids": g.wiles[: len(_WILE_STAGES) - 1] > 0,
            "escalation": escalated[None],
            "scores": self._score_value(rel_scores),
            "deck_size": self._deck_value(g.deck_len)[None],
            "murder_checks": others & (escalated | (rel_scores >= rel_scores[0] + self.margin)),
            "murder_threats": others & (escalated | (rel_scores[0] >= rel_scores + self.margin)),
            "murder_whereabouts": self._murder_value(jnp.stack([mine, on_top, lower, seen, played, unseen])),
        }
        parts = []
        for piece in self.observer.pieces:
            part = pieces[piece.name].astype(f32).reshape(-1)
            span = self.piece(piece.name)
            if part.shape[0] != span.stop - span.start:
                raise ValueError(f"the twin's piece {piece.name!r} has {part.shape[0]} entries, not {span}")
            parts.append(part)
        return jnp.concatenate(parts)

    def _cell_features(self, cards: jax.Array) -> jax.Array:
        """float32 [..., features] of grid cells, as the reference's `cell_features` table has them:
        bird type one-hot, value / max_value (the table's own float32), wile kind one-hot."""
        c = cards[..., None]
        kinds = c // self.values == jnp.arange(self.types)  # wiles and EMPTY match no type
        value = jnp.take(self._value_feature, jnp.clip(cards, -1, self.birds) + 1, mode="clip")[..., None]
        wile = c - self.birds == jnp.arange(len(Wile))
        return jnp.concatenate([kinds.astype(jnp.float32), value, wile.astype(jnp.float32)], axis=-1)

    def _slots_after(self, g: GameState, seat, card, push, pop) -> jax.Array:
        """`slot_at` after pushing `card` onto pile `seat` (or popping it off its top): a wile's
        copies shift one slot down (push) or up (pop), the top copy always in its first slot."""
        old = g.slot_at
        row = self._slot_card[None, :] == card
        length = jnp.take(g.pile_len, seat, mode="clip")
        none = jnp.asarray(-1, old.dtype)
        down = jax.lax.pad(old[:, :-1], none, [(0, 0, 0), (1, 0, 0)])  # slot s takes slot s - 1
        up = jax.lax.pad(old[:, 1:], none, [(0, 0, 0), (0, 1, 0)])  # slot s takes slot s + 1
        pushed = jnp.where(self._slot_first[None, :], length, down)
        popped = jnp.where(self._slot_last[None, :], -1, up)
        new = jnp.where(push, pushed, jnp.where(pop, popped, old)).astype(old.dtype)
        return jnp.where((self._seats[:, None] == seat) & row, new, old)

    def _pile_order(self, g: GameState) -> jax.Array:
        """float32 [n, deck_size]: 1 / depth of each card in each pile, in the card's slot."""
        depth = jnp.where(g.slot_at >= 0, g.pile_len[:, None] - g.slot_at, 0)
        return self._inverse_depth(depth)

    # ----- the end -------------------------------------------------------------------------------
    def current_player(self, g: GameState) -> jax.Array:
        """The acting seat."""
        return g.to_act

    def terminal(self, g: GameState) -> jax.Array:
        """True once the deck ran out at a turn's start or one living player remained."""
        return g.terminal

    has_potential = True

    def potential(self, g: GameState, player: jax.Array) -> jax.Array:
        """The reference's `potential`: the player's lead over the best other player who can win,
        / max_score, clipped to [-1, 1]; -1 once the player cannot win."""
        can_win = g.alive & ~(g.recorded.any(axis=1) & (g.clear < g.score))
        others = can_win & (self._seats != player)
        best = jnp.where(others, g.score, 0).max()  # scores are >= 0: the reference's default 0
        lead = (jnp.take(g.score, player, mode="clip") - best).astype(jnp.float32) / self.options.max_score
        return jnp.where(jnp.take(can_win, player, mode="clip"), jnp.clip(lead, -1.0, 1.0), -1.0).astype(
            jnp.float32
        )

    def truncated(self, g: GameState) -> jax.Array:
        """Never: every game of Murder Most Fowl ends by its rules."""
        return jnp.zeros((), bool)

    def returns(self, g: GameState) -> jax.Array:
        """Win rewards among players still playing and not arrested; nobody eligible: all 0."""
        arrested = g.recorded.any(axis=1) & (g.clear < g.score)
        return win_rewards(best_players(g.score, g.alive & ~arrested))

    def public(self, g: GameState) -> tuple[jax.Array, ...]:
        """What every seat knows: grids, piles (in order), hand sizes and seen hand cards, the deck's
        size, who is playing, murdered or caught, recorded types, whose decision it is and what is
        being played. (No step draws fresh chance, so the suite never needs to compare it.)"""
        live = jnp.arange(self.deck_size)[None, :] < g.pile_len[:, None]
        return (
            g.grids,
            jnp.where(live, g.piles, EMPTY),
            g.pile_len,
            g.hands.sum(axis=1),
            g.known,
            g.deck_len,
            g.alive,
            g.murdered,
            g.caught,
            g.recorded,
            g.to_act,
            g.stage,
            g.pending_card,
            g.pending_cell,
        )

    # ----- the reference's games -------------------------------------------------------------------
    def from_reference(self, game: Any) -> GameState:
        """The GameState of a reference `FowlGame` (its deck in the same order)."""
        n, d, k, birds, i32 = self.n, self.deck_size, self.kinds, self.birds, np.int32

        def counts(cards):
            return np.bincount(np.asarray(cards, np.int64), minlength=k)[:k]

        deck = np.full(d, EMPTY, np.int8)
        deck[: len(game.deck)] = game.deck  # bottom first: the top, `game.deck[-1]`, is drawn next
        piles = np.full((n, d), EMPTY, np.int8)
        slot_at = np.full((n, d), -1, i32)
        for p, pile in enumerate(game.piles):
            piles[p, : len(pile)] = pile
            used = np.zeros(k, i32)  # copies of each card met so far from the top
            for at in range(len(pile) - 1, -1, -1):
                card = pile[at]
                slot_at[p, self._first_slot[card] + used[card]] = at
                used[card] += 1
        grids = np.asarray(game.grids, np.int64)
        owner = np.full(birds, -1, np.int8)
        sides = np.full((birds, 4), EMPTY, np.int8)
        cell_sides = np.asarray(self._cell_sides)
        t_, v_ = self.types, self.values

        def rank(card):
            return (card % v_) * t_ + card // v_ if 0 <= card < birds else EMPTY

        for p in range(n):
            for cell in np.flatnonzero((grids[p] >= 0) & (grids[p] < birds)):
                at = rank(grids[p, cell])
                owner[at] = p
                for side, other in enumerate(cell_sides[cell]):
                    sides[at, side] = rank(grids[p, other]) if other >= 0 else EMPTY
        wiles = [int((grids == birds + kind).sum()) for kind in range(len(Wile))]
        recorded = np.zeros((n, self.types), bool)
        for p, types in enumerate(game.recorded):
            recorded[p, sorted(types)] = True
        points = np.asarray(self._route_points_jit(owner, sides))
        score, clear = (np.asarray(x) for x in self._scores_jit(owner, points, recorded))
        c8 = self.count_dtype
        return GameState(
            deck=as_array(deck, np.int8),
            deck_len=as_array(len(game.deck), i32),
            ordered=as_array(True, bool),
            seed=as_array(0, np.uint32),
            piles=as_array(piles, np.int8),
            pile_len=as_array([len(pile) for pile in game.piles], i32),
            pile_counts=as_array([counts(pile) for pile in game.piles], c8),
            slot_at=as_array(slot_at, c8),
            hands=as_array([counts(hand) for hand in game.hands], c8),
            known=as_array([counts(seen) for seen in game.known], c8),
            grids=as_array(grids, np.int8),
            owner=as_array(owner, np.int8),
            sides=as_array(sides, np.int8),
            points=as_array(points, np.int8),
            score=as_array(score, i32),
            clear=as_array(clear, i32),
            wiles=as_array(wiles, i32),
            alive=as_array(game.alive, bool),
            murdered=as_array(game.murdered, bool),
            caught=as_array(game.caught, bool),
            recorded=as_array(recorded, bool),
            to_act=as_array(game.to_act, i32),
            stage=as_array(int(game.stage), i32),
            first_from_pile=as_array(game.first_from_pile, bool),
            pending_card=as_array(game.pending_card, i32),
            pending_cell=as_array(game.pending_cell, i32),
            terminal=as_array(game._terminal, bool),
        )

    def picture_game(self, game: GameState) -> Any:
        """A `FowlGame` holding this state's table, for drawing it (`State.save_svg`): grids, piles,
        hands, the seats' fates and the decision as they are, and no log. The twin keeps no turn
        count, so the picture's title says turn 0."""
        from fowlplay.envs.fowl.rules import FowlGame

        g = {name: np.asarray(value) for name, value in vars(game).items()}

        def cards(counts) -> list[int]:
            return [card for card in range(self.kinds) for _ in range(int(counts[card]))]

        reference = FowlGame(self.options, np.random.default_rng(0))
        reference.deck = [int(c) for c in g["deck"][: int(g["deck_len"])]]
        reference.piles = [
            [int(c) for c in pile[: int(size)]] for pile, size in zip(g["piles"], g["pile_len"])
        ]
        reference.hands = [cards(row) for row in g["hands"]]
        reference.known = [cards(row) for row in g["known"]]
        reference.grids = g["grids"].astype(np.int16)
        for name in ("alive", "murdered", "caught"):
            setattr(reference, name, [bool(x) for x in g[name]])
        reference.recorded = [set(np.flatnonzero(row).tolist()) for row in g["recorded"]]
        reference.to_act, reference.stage = int(g["to_act"]), Decision(int(g["stage"]))
        reference.first_from_pile = bool(g["first_from_pile"])
        reference.pending_card, reference.pending_cell = int(g["pending_card"]), int(g["pending_cell"])
        reference.turn = 0
        reference._log, reference._terminal = [], bool(g["terminal"])
        reference._rebuild()
        return reference
