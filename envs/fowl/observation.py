"""What one Murder Most Fowl player sees. Seats are relative: index 0 is the observer, 1 the player
to their left, and so on clockwise. Other players' hands are read here only as a count plus the
cards everyone saw go into them (taken from a discard pile, or shown)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from fowlplay.envs.core import Observer, Piece
from fowlplay.envs.fowl.rules import (
    EMPTY,
    ESCALATION_WILES,
    TYPE_NAMES,
    Decision,
    FowlGame,
    FowlOptions,
    Wile,
)

#: `Wile`'s members as plain attributes (the same objects): on Python 3.11 reading a member
#: through its enum class costs several times an attribute read, at every decision.
_Wile = SimpleNamespace(**Wile.__members__)


def cell_features(options: FowlOptions) -> np.ndarray:
    """Lookup table card id -> features of a grid cell; its last row (index EMPTY) is all zeros.

    Features: one-hot bird type (num_types), bird value / max_value, one-hot wile (Blocking,
    Discard, Swap, Murder).
    """
    types, top = options.types, options.max_value
    table = np.zeros((options.num_kinds + 1, types + 1 + len(Wile)), dtype=np.float32)
    for card in range(options.num_birds):
        t, v = divmod(card, top)
        table[card, t] = 1.0
        table[card, types] = (v + 1) / top
    for kind in Wile:
        table[options.num_birds + kind, types + 1 + kind] = 1.0
    assert EMPTY == -1  # the empty cell reads the last, all-zero row
    return table


def pile_slots(options: FowlOptions) -> list[int]:
    """First `pile_order` slot of each card id: a bird has one slot, a wile kind one per copy."""
    first = list(range(options.num_birds))
    slot = options.num_birds
    for copies in options.wile_counts:
        first.append(slot)
        slot += copies
    return first


#: Distinct piles whose `pile_order` rows an observer remembers (a pure cache).
PILE_ROWS_KEPT = 50_000

_INT16 = np.dtype(np.int16)

#: Changed grid cells up to which `encode` rewrites cell by cell (more: the whole grids piece).
_CELLS_REWRITTEN = 16

#: Where a Murder card can be, as the observer knows it (the `murder_whereabouts` piece).
MURDER_PLACES = (
    "my hand",
    "pile top",
    "lower in a pile",
    "seen in another hand",
    "played (in a grid)",
    "not seen",
)


class FowlObserver(Observer):
    """Builds a Murder Most Fowl observation from named pieces."""

    #: `fill` copies the whole grids piece from its cache (most of the vector: no need to zero it).
    dense_pieces = ("grids",)

    def __init__(self, options: FowlOptions) -> None:
        self.table = cell_features(options)
        super().__init__(options)
        n = options.num_players
        self._n, self._k, self._types = n, options.num_kinds, options.types
        #: Absolute seats in each observer's relative order.
        self._seat_lists = [[(p + i) % n for i in range(n)] for p in range(n)]
        self._seats = [np.array(seats) for seats in self._seat_lists]
        self._score_scale = 1.0 / options.max_score
        self._deck_scale = 1.0 / options.deck_size
        self._murder = options.num_birds + _Wile.MURDER
        self._murder_scale = 1.0 / max(1, options.murder_wiles)
        self._slots = pile_slots(options)
        self._pile_size = options.deck_size
        self._margin = options.murder_margin
        # A grid cell's features as one opaque item (a row of the table), so that encoding the
        # grids gathers one item per cell instead of one float per feature: about twice as fast.
        row = np.dtype((np.void, self.table.shape[1] * self.table.itemsize))
        self._cell_items = np.ascontiguousarray(self.table).view(row).ravel()
        self._grid_items = self._parts.grids.view(row)
        #: The same rows as bytes, by card id (EMPTY = -1 reads the last, all-zero row).
        self._cell_bytes = [item.tobytes() for item in self._cell_items]
        self._cell_bytes_width = row.itemsize
        self._grids_byte = self.offsets["grids"].start * self._buffer.itemsize
        # `encode` keeps each seat's vector between calls and rewrites a piece only when what it was
        # built from changed (grids change about once a turn, observations every decision);
        # `_seen_state[seat]` holds copies of those inputs, never the live lists.
        self._vectors, self._views = self.seat_buffers()
        self._memory = [memoryview(vector) for vector in self._vectors]
        self._vector_grid_items = [views.grids.view(row) for views in self._views]
        self._bytes = [memoryview(vector).cast("B") for vector in self._vectors]
        self._seen_state = [_SeatState(n) for _ in range(n)]
        self._at = SimpleNamespace(**{name: span.start for name, span in self.offsets.items()})
        # A changed pile is written as bytes: its `pile_contents` and `pile_order` spans of each
        # relative seat, from a cache of both rows by pile (piles change one card a turn).
        item, size = self._buffer.itemsize, options.deck_size
        contents, order = self.offsets["pile_contents"].start, self.offsets["pile_order"].start
        self._pile_spans = [
            (
                slice((contents + i * self._k) * item, (contents + (i + 1) * self._k) * item),
                slice((order + i * size) * item, (order + (i + 1) * size) * item),
            )
            for i in range(n)
        ]
        self._empty_pile = (bytes(self._k * item), bytes(size * item))
        self._pile_bytes: dict[tuple[int, ...], tuple[bytes, bytes]] = {}

    def layout(self, options: FowlOptions) -> list[Piece]:
        """The named pieces, in order."""
        # Kept whole: one table, a piece per entry in the vector's order, is the observation's manual
        # (the rules page's table is `layout_table()` of it, held there by tests/envs/test_contract.py).
        n, k, c, t = options.num_players, options.num_kinds, options.cells, options.types
        f = self.table.shape[1]
        most_copies = float(max(1, *options.wile_counts))
        copies = ", ".join(f"{w.name.title()} x{m}" for w, m in zip(Wile, options.wile_counts))
        return [
            Piece("decision", len(Decision), "one-hot kind of the decision being made (Decision enum order)"),
            Piece("acting", n, "one-hot relative seat whose decision it is"),
            Piece("my_hand", k, "copies of each card id in my hand", 0.0, most_copies),
            Piece("pending_card", k, "one-hot card id being played, waiting for its target"),
            Piece(
                "pending_cell",
                c,
                "one-hot cell of the acting player's grid where their Swap or Murder wile waits for its "
                "target",
            ),
            Piece(
                "grids",
                n * c * f,
                f"[relative seat][cell][{f} features]: one-hot bird type, bird value / max_value, "
                "one-hot wile (Blocking, Discard, Swap, Murder); all zero = empty cell",
            ),
            Piece("pile_tops", n * k, "[relative seat][card id] one-hot top card of each discard pile"),
            Piece(
                "pile_contents",
                n * k,
                "[relative seat][card id] copies in each discard pile",
                0.0,
                most_copies,
            ),
            Piece(
                "pile_order",
                n * options.deck_size,
                "[relative seat][card slot] 1 / depth of each card in each discard pile (1 = top, 1/2 = "
                "the card under it, ...; 0 = not in that pile); a bird's slot is its card id, then each "
                f"wile kind has one slot per copy ({copies}), filled from the pile's top down",
            ),
            Piece("hand_sizes", n, "cards in each relative seat's hand / 4"),
            Piece(
                "known_hands",
                n * k,
                "[relative seat][card id] copies every player has seen go into that hand and not leave it "
                "(taken from a pile top, or shown by a murder victim or a player who could not play)",
                0.0,
                most_copies,
            ),
            Piece("playing", n, "1 for each relative seat still playing"),
            Piece("murdered", n, "1 for each relative seat that was murdered"),
            Piece("caught", n, "1 for each relative seat caught after a failed murder"),
            Piece(
                "recorded_types",
                n * t,
                "[relative seat][bird type] 1 = type recorded against that murderer (their victim held it)",
            ),
            Piece(
                "arrested",
                n,
                "1 for each relative seat whose every best route starts and ends with a type recorded "
                "against it: scored now, it would be arrested and could not win",
            ),
            Piece(
                "wiles_in_grids",
                len(ESCALATION_WILES),
                "1 if a Blocking / Discard / Swap wile lies in some grid (Escalation needs all three)",
            ),
            Piece("escalation", 1, "1 once Escalation has happened (murders always succeed)"),
            Piece("scores", n, "each relative seat's best route score now / (2 * max_value)"),
            Piece("deck_size", 1, "cards left in the deck / full deck"),
            Piece(
                "murder_checks",
                n,
                "[relative seat] 1 if a Murder I played on that seat now would succeed (0 for myself "
                "and for players out); derived from the public scores and Escalation",
            ),
            Piece(
                "murder_threats",
                n,
                "[relative seat] 1 if a Murder that seat played on me now would succeed (0 for myself "
                "and for players out); derived like murder_checks",
            ),
            Piece(
                "murder_whereabouts",
                len(MURDER_PLACES),
                "Murder cards / murder_wiles known to be: in my hand, on top of a pile, lower in a "
                "pile, seen in another hand, played into a grid; and not seen (in the deck or an unseen "
                "hand card)",
            ),
        ]

    def fill(self, game: FowlGame, player: int, parts: SimpleNamespace) -> None:
        """Write what `player` may know."""
        # Hot path: one decision, one call. Small pieces are written element by element (a list
        # assigned to a slice costs more for so few values) and the grids piece comes from a cache.
        n, k, types = self._n, self._k, self._types
        seats = self._seat_lists[player]
        parts.decision[game.stage] = 1.0
        parts.acting[(game.to_act - player) % n] = 1.0
        hand = parts.my_hand
        for card in game.hands[player]:
            hand[card] += 1.0
        if game.pending_card != EMPTY:
            parts.pending_card[game.pending_card] = 1.0
            if game.pending_cell != EMPTY:
                parts.pending_cell[game.pending_cell] = 1.0
        # One opaque item per cell (a row of the table): a gather of items, not of floats.
        self._grid_items[:] = self._cell_items[game.grids[self._seats[player]].ravel()]
        tops, order, known, recorded = (
            parts.pile_tops,
            parts.pile_order,
            parts.known_hands,
            parts.recorded_types,
        )
        hand_sizes, playing, murdered, caught, score_part = (
            parts.hand_sizes,
            parts.playing,
            parts.murdered,
            parts.caught,
            parts.scores,
        )
        size, score_scale = self._pile_size, self._score_scale
        alive = game.alive
        scores = []
        contents, counts = parts.pile_contents, game.pile_counts
        for i, seat in enumerate(seats):
            pile = game.piles[seat]
            if pile:
                contents[i * k : (i + 1) * k] = counts[seat]
                tops[i * k + pile[-1]] = 1.0
                order[i * size : (i + 1) * size] = self._pile_row(pile)
            for card in game.known[seat]:
                known[i * k + card] += 1.0
            if game.recorded[seat]:
                for t in game.recorded[seat]:
                    recorded[i * types + t] = 1.0
                parts.arrested[i] = game.arrested(seat)
            hand_sizes[i] = len(game.hands[seat]) * 0.25
            playing[i] = alive[seat]
            murdered[i] = game.murdered[seat]
            caught[i] = game.caught[seat]
            score = game.score(seat)
            scores.append(score)
            score_part[i] = score * score_scale
        in_grids = game.wiles_in_grids
        wiles = parts.wiles_in_grids
        for i, w in enumerate(ESCALATION_WILES):
            wiles[i] = in_grids[w] > 0
        escalated = game.escalated
        parts.escalation[0] = escalated
        parts.deck_size[0] = len(game.deck) * self._deck_scale
        if alive[player]:
            # game.murder_succeeds, with the scores and Escalation read once
            checks, threats, margin = parts.murder_checks, parts.murder_threats, self._margin
            for i in range(1, n):
                if alive[seats[i]]:
                    checks[i] = escalated or scores[i] >= scores[0] + margin
                    threats[i] = escalated or scores[0] >= scores[i] + margin
        self._fill_whereabouts(game, player, parts.murder_whereabouts)

    def _fill_whereabouts(self, game: FowlGame, player: int, where: np.ndarray) -> None:
        """`murder_whereabouts`: where `player` knows the Murder cards to be, and how many are unseen."""
        murder, scale = self._murder, self._murder_scale
        mine = game.hands[player].count(murder)
        on_top = lower = seen = 0
        for seat in range(self._n):
            pile = game.piles[seat]
            if pile and (copies := pile.count(murder)):
                top = pile[-1] == murder
                on_top += top
                lower += copies - top
            if seat != player:
                seen += game.known[seat].count(murder)
        played = game.wiles_in_grids[_Wile.MURDER]
        where[0], where[1], where[2], where[3] = mine * scale, on_top * scale, lower * scale, seen * scale
        where[4] = played * scale
        where[5] = (game.options.murder_wiles - mine - on_top - lower - seen - played) * scale

    def encode(self, game: FowlGame, player: int) -> np.ndarray:
        """What `fill` writes (a new array), rewriting only the pieces whose inputs changed."""
        mem, state, at = self._memory[player], self._seen_state[player], self._at
        n = self._n
        # One-hots that change every decision: clear last call's ones, set this call's.
        for i in state.hot:
            mem[i] = 0.0
        # A tuple, grown only while a card waits for its target: cheaper than a list and appends.
        hot = (at.decision + game.stage, at.acting + (game.to_act - player) % n)
        pending = game.pending_card
        if pending != EMPTY:
            hot += (at.pending_card + pending,)
            if game.pending_cell != EMPTY:
                hot += (at.pending_cell + game.pending_cell,)
        for i in hot:
            mem[i] = 1.0
        state.hot = hot
        # Count pieces: take last call's cards out, put this call's in (element writes, no slices).
        hand = game.hands[player]
        if hand != state.hand:
            start = at.my_hand
            for card in state.hand:
                mem[start + card] = 0.0
            for card in hand:
                mem[start + card] += 1.0
            state.hand = list(hand)
        # Grids, and the pieces the grids and the murders decide (scores, records, seat status).
        grids = game.grids.tobytes()
        alive = game.alive
        seated = (
            alive != state.alive
            or game.murdered != state.murdered
            or game.caught != state.caught
            or game.recorded != state.recorded
        )
        if seated:  # a murder: rare
            state.alive, state.murdered, state.caught = list(alive), list(game.murdered), list(game.caught)
            state.recorded = [set(marks) for marks in game.recorded]
            self._write_seats(game, player, mem)
        if grids != state.grids:
            self._write_grids(game, player, state, grids)
            self._write_table(game, player, mem)
        elif seated:
            self._write_table(game, player, mem)
        # Piles, seen hand cards and hand sizes, and what they tell of the Murder cards.
        murder = self._murder
        on_top, lower, seen_murders = self._write_seat_cards(game, player, state, mem)
        mem[at.deck_size] = len(game.deck) * self._deck_scale
        # murder_whereabouts, as `fill` counts it; written only when a Murder card moved
        where = (hand.count(murder), on_top, lower, seen_murders, game.wiles_in_grids[_Wile.MURDER])
        if where != state.where:
            state.where = where
            scale, start = self._murder_scale, at.murder_whereabouts
            for i, count in enumerate(where):
                mem[start + i] = count * scale
            mem[start + 5] = (game.options.murder_wiles - sum(where)) * scale
        return self._vectors[player].copy()

    def _write_seat_cards(self, game: FowlGame, player: int, state: _SeatState, mem: memoryview):
        """Each relative seat's changed pile (top, contents, order) and seen hand cards, and its hand
        size; returns the Murder cards on pile tops, lower in piles and seen in other hands."""
        at, k = self._at, self._k
        hands, known = game.hands, game.known
        piles, raw = game.piles, self._bytes[player]
        murder = self._murder
        on_top = lower = seen_murders = 0  # Murder cards on pile tops, lower in piles, seen in hands
        seen_piles, seen_known, sizes_at = state.piles, state.known, at.hand_sizes
        for i, seat in enumerate(self._seat_lists[player]):
            pile = piles[seat]
            if pile and (copies := pile.count(murder)):
                top = pile[-1] == murder
                on_top += top
                lower += copies - top
            if pile != seen_piles[i]:
                seen_piles[i] = list(pile)
                if state.tops[i] >= 0:
                    mem[state.tops[i]] = 0.0
                contents, order = self._pile_spans[i]
                if pile:
                    state.tops[i] = at.pile_tops + i * k + pile[-1]
                    mem[state.tops[i]] = 1.0
                    raw[contents], raw[order] = self._pile_rows_of(pile)
                else:
                    state.tops[i] = -1
                    raw[contents], raw[order] = self._empty_pile
            seen = known[seat]
            if i:
                seen_murders += seen.count(murder)
            if seen != seen_known[i]:
                start = at.known_hands + i * k
                for card in seen_known[i]:
                    mem[start + card] = 0.0
                for card in seen:
                    mem[start + card] += 1.0
                seen_known[i] = list(seen)
            mem[sizes_at + i] = len(hands[seat]) * 0.25
        return on_top, lower, seen_murders

    def _write_grids(self, game: FowlGame, player: int, state: _SeatState, grids: bytes) -> None:
        """The grids piece of `player`'s vector from `game.grids` (whose bytes are `grids`)."""
        now = np.frombuffer(grids, _INT16)  # positional: numpy's keyword parsing costs more than the call
        before, state.grids, state.grid_cells = state.grid_cells, grids, now
        if before is not None:
            # A turn changes a cell or two: rewrite those cells only, unless many changed (a
            # clone, or a re-deal, may bring a different table).
            changed = (now != before).nonzero()[0].tolist()
            if len(changed) <= _CELLS_REWRITTEN:
                raw, cells, n = self._bytes[player], self.options.cells, self._n
                start, width, rows = self._grids_byte, self._cell_bytes_width, self._cell_bytes
                lists = game.grid_lists
                for flat in changed:
                    seat, cell = divmod(flat, cells)
                    at = start + (((seat - player) % n) * cells + cell) * width
                    raw[at : at + width] = rows[lists[seat][cell]]
                return
        self._vector_grid_items[player][:] = self._cell_items[game.grids[self._seats[player]].ravel()]

    def _write_seats(self, game: FowlGame, player: int, mem: memoryview) -> None:
        """The pieces only a murder changes: each seat's status and the types recorded against it."""
        at, types = self._at, self._types
        for i, seat in enumerate(self._seat_lists[player]):
            mem[at.playing + i] = game.alive[seat]
            mem[at.murdered + i] = game.murdered[seat]
            mem[at.caught + i] = game.caught[seat]
            marks = game.recorded[seat]
            start = at.recorded_types + i * types
            for t in range(types):
                mem[start + t] = t in marks

    def _write_table(self, game: FowlGame, player: int, mem: memoryview) -> None:
        """Every entry of the pieces the grids and the seats decide: scores, arrests, murder checks, wiles."""
        at, margin = self._at, self._margin
        seats = self._seat_lists[player]
        alive, recorded = game.alive, game.recorded
        scores = [game.score(seat) for seat in seats]
        escalated = game.escalated
        me_alive = alive[player]
        for i, seat in enumerate(seats):
            mem[at.scores + i] = scores[i] * self._score_scale
            mem[at.arrested + i] = game.arrested(seat) if recorded[seat] else 0.0
            # game.murder_succeeds, with the scores and Escalation read once
            if i and me_alive and alive[seat]:
                mem[at.murder_checks + i] = escalated or scores[i] >= scores[0] + margin
                mem[at.murder_threats + i] = escalated or scores[0] >= scores[i] + margin
            else:
                mem[at.murder_checks + i] = mem[at.murder_threats + i] = 0.0
        in_grids = game.wiles_in_grids
        for i, w in enumerate(ESCALATION_WILES):
            mem[at.wiles_in_grids + i] = in_grids[w] > 0
        mem[at.escalation] = escalated

    def _pile_rows_of(self, pile: list[int]) -> tuple[bytes, bytes]:
        """The `pile_contents` and `pile_order` entries of one pile as float32 bytes, through a bounded cache."""
        rows = self._pile_bytes
        key = tuple(pile)
        found = rows.get(key)
        if found is None:
            if len(rows) >= PILE_ROWS_KEPT:
                rows.clear()
            contents = np.zeros(self._k, dtype=np.float32)
            for card in pile:
                contents[card] += 1.0
            found = rows[key] = (contents.tobytes(), self._pile_row(pile).tobytes())
        return found

    def _pile_row(self, pile: list[int]) -> np.ndarray:
        """One pile's `pile_order` entries: 1 / depth in each card's slot."""
        row = np.zeros(self._pile_size, dtype=np.float32)
        used = [0] * self._k  # copies of each card id met so far from the top (only wiles repeat)
        for depth, card in enumerate(reversed(pile), 1):
            row[self._slots[card] + used[card]] = 1.0 / depth
            used[card] += 1
        return row

    def view(self, game: FowlGame, player: int) -> str:
        """The table as `player` sees it: own hand, every grid and pile, what was seen in other hands."""
        name = game.card_name
        lines = [
            f"Murder Most Fowl - you are player_{player}; turn {game.turn}; deck {_cards(len(game.deck))}; "
            f"escalation {'yes' if game.escalated else 'no'}"
        ]
        if game.over:
            winners = ", ".join(f"player_{p}" for p in game.winners()) or "nobody (every reward is 0)"
            lines.append(f"game over: winner(s) {winners}")
        else:
            who = "you" if game.to_act == player else f"player_{game.to_act}"
            doing = game.decision()
            if game.pending_card != EMPTY:
                doing += f" for {name(game.pending_card)}"
                if game.pending_cell != EMPTY:
                    doing += f" (waiting on {game.cell_name(game.pending_cell)})"
            lines.append(f"to act: {who} - {doing}")
        lines.append("your hand: " + (", ".join(name(c) for c in sorted(game.hands[player])) or "-"))
        for i in range(self._n):
            seat = (player + i) % self._n
            status = "playing" if game.alive[seat] else ("murdered" if game.murdered[seat] else "caught")
            marks = [status, f"score {game.score(seat)}"]
            if game.recorded[seat]:
                marks.append("recorded " + "/".join(TYPE_NAMES[t] for t in sorted(game.recorded[seat])))
                if game.arrested(seat):
                    marks.append("would be arrested")
            who = f"player_{seat}" + (" (you)" if seat == player else "")
            lines.append(f"{who}: " + "; ".join(marks))
            if seat != player:
                seen = ", ".join(name(c) for c in sorted(game.known[seat]))
                lines.append(f"  hand: {_cards(len(game.hands[seat]))}" + (f", seen: {seen}" if seen else ""))
            pile = game.piles[seat]
            top_first = ", top first: " + ", ".join(name(c) for c in reversed(pile)) if pile else ""
            lines.append(f"  pile: {_cards(len(pile))}{top_first}")
            lines.extend("  " + row for row in game.grid_picture(seat))
        log = game.log
        if log:
            lines.append("last: " + "; ".join(log))
        return "\n".join(lines)


def _cards(count: int) -> str:
    return f"{count} card" if count == 1 else f"{count} cards"


class _SeatState:
    """What one seat's cached vector was last built from (copies), piece by piece; None = unknown."""

    def __init__(self, n: int) -> None:
        self.hot: tuple[int, ...] = ()  # the one-hot entries set by the last call
        self.hand: list[int] = []  # the count pieces start all zero: as if built from no cards
        self.grids: bytes | None = None
        self.grid_cells: np.ndarray | None = None  # `grids` as an array of card ids (a view of it)
        self.alive: list[bool] | None = None
        self.murdered: list[bool] | None = None
        self.caught: list[bool] | None = None
        self.recorded: list[set[int]] | None = None
        self.piles: list[list[int] | None] = [None] * n
        self.tops: list[int] = [-1] * n  # the `pile_tops` entry set for each relative seat, or -1
        self.known: list[list[int]] = [[] for _ in range(n)]
        self.where: tuple[int, ...] | None = None  # the counts murder_whereabouts was written from
