"""What one Murder, She Crows player sees. Seats are relative: index 0 is the observer, 1 the
player to their left, and so on clockwise. Every card on the table is face up, so all players see
the same things; the deck's order is the only hidden information and is never read here (only how
many cards of each value it holds, which follows from the face-up cards)."""

from __future__ import annotations

import struct
from types import SimpleNamespace

import numpy as np
from fowlplay.envs.core import Observer, Piece
from fowlplay.envs.crows.rules import CrowsGame, CrowsOptions, Decision

#: `Decision` members as plain values (reading a member through its enum class costs more).
_PRESS, _COIN = int(Decision.PRESS), int(Decision.COIN)


class CrowsObserver(Observer):
    """Builds a Murder, She Crows observation from named pieces."""

    memoryview_parts = True
    #: Written whole, from the game's counts, only when those changed (`_counts_seen`).
    dense_pieces = ("discard_pile", "deck_counts")

    def __init__(self, options: CrowsOptions) -> None:
        super().__init__(options)
        self._deck_size = options.deck_size  # a property: computed once here, read every decision
        self._available = self._buffer[self.offsets["available"]]
        n = options.num_players
        self._n, self._v = n, options.max_value
        #: Absolute seats in each observer's relative order.
        self._seat_lists = [[(p + i) % n for i in range(n)] for p in range(n)]
        #: Copies of the discard pile and deck counts the dense pieces were last written from.
        self._counts_seen: list[list[int] | None] = [None, None]
        # `encode` keeps each seat's vector between calls and rewrites a piece only when what it was
        # built from changed (piles change a card or two a turn, observations come every decision);
        # `_seen_state[seat]` holds copies of those inputs, never the live lists.
        self._vectors, _ = self.seat_buffers()
        self._memory = [memoryview(vector) for vector in self._vectors]
        self._bytes = [memoryview(vector).cast("B") for vector in self._vectors]
        self._seen_state = [_SeatState(n) for _ in range(n)]
        self._at = SimpleNamespace(**{name: span.start for name, span in self.offsets.items()})
        # The head: the pieces `decision`, `acting_seat`, `turn_seat` and `last_seat`, in this order.
        heads = ("decision", "acting_seat", "turn_seat", "last_seat")
        if [piece.name for piece in self.pieces[: len(heads)]] != list(heads):
            raise ValueError(f"the observation must start with the pieces {heads}")
        item = self._buffer.itemsize
        self._head_span = slice(0, self.offsets["last_seat"].stop * item)
        #: The head's bytes by (player, decision kind, acting seat, turn seat): a few hundred at most.
        self._heads: dict[tuple[int, int, int, int], bytes] = {}
        # A count piece is written as bytes, joined from the float32 bytes of each count / copies.
        self._discard_span, self._deck_counts_span = (
            slice(self.offsets[name].start * item, self.offsets[name].stop * item)
            for name in ("discard_pile", "deck_counts")
        )
        per_copy = 1.0 / options.copies_per_value  # as `_write_counts` scales them
        self._count_bytes = [
            struct.pack("f", count * per_copy) for count in range(options.copies_per_value + 1)
        ]
        # The options `encode` reads, read once (the numbers `fill` reads off the game's options,
        # which are these: an observer's pieces are sized for its own options).
        self._copies, self._track_length = options.copies_per_value, options.track_length
        self._max_turns, self._max_decisions = options.max_turns, options.max_decisions
        self._coin_spaces = len(options.coin_spaces)
        self._discards_per_turn = options.pile_discards_per_turn

    @staticmethod
    def _write_counts(part, counts: list[int], copies: int) -> None:
        """Counts of values 1..max_value (`counts[0]` unused) / copies, into a whole piece."""
        per_copy = 1.0 / copies
        for value in range(1, len(counts)):
            part[value - 1] = counts[value] * per_copy

    def layout(self, options: CrowsOptions) -> list[Piece]:
        """The named pieces, in order."""
        n, v = options.num_players, options.max_value
        return [
            Piece("decision", len(Decision), "one-hot decision kind: keep, press, place, coin, claim"),
            Piece("acting_seat", n, "one-hot relative seat whose decision it is"),
            Piece("turn_seat", n, "one-hot relative seat whose turn it is"),
            Piece(
                "last_seat",
                n,
                "one-hot relative seat of player_{n-1}, whose turn closes each round (the game ends "
                "after it once final_round is 1)",
            ),
            Piece(
                "run",
                n * v,
                "per relative seat (seat-major), 1 for each value 1..max_value in that seat's RUN",
            ),
            Piece(
                "set",
                n * v,
                "per relative seat (seat-major), cards of each value in that seat's SET / copies_per_value",
            ),
            Piece("provisional_run", v, "1 for each value in the turn player's RUN that is provisional"),
            Piece(
                "provisional_set",
                v,
                "provisional cards of each value in the turn player's SET / copies_per_value",
            ),
            Piece(
                "revealed",
                v,
                "the two cards revealed at the start of the turn, awaiting keep: count of each value / 2",
            ),
            Piece("to_place", v, "one-hot value of the revealed card that fits both piles, awaiting a pile"),
            Piece(
                "available",
                v,
                "a busted player's cards still open to claims: count of each value / copies_per_value",
            ),
            Piece("discard_pile", v, "discard pile: count of each value / copies_per_value"),
            Piece("deck_counts", v, "cards of each value in the deck (not their order) / copies_per_value"),
            Piece("deck_size", 1, "cards in the deck / cards in the game"),
            Piece("track", n, "each relative seat's track position / track_length"),
            Piece(
                "coins_pending", 1, "coins the turn player still has to use this turn / number of coin spaces"
            ),
            Piece(
                "final_round", 1, "1 once someone has reached the end of the track (this round is the last)"
            ),
            Piece(
                "pile_discards_left",
                1,
                "pile discards the turn player has left this turn / pile_discards_per_turn",
            ),
            Piece("turn_progress", 1, "turns played / max_turns"),
            Piece("decision_progress", 1, "decisions taken / max_decisions (the safety cap)"),
        ]

    def fill(self, game: CrowsGame, player: int, parts: SimpleNamespace) -> None:
        """Write what `player` may know."""
        opts = game.options
        n, v = game.num_players, opts.max_value
        copies, track_length = opts.copies_per_value, opts.track_length
        parts.decision[game.kind] = 1.0
        parts.acting_seat[(game.to_act - player) % n] = 1.0
        turn = game.turn_player
        parts.turn_seat[(turn - player) % n] = 1.0
        parts.last_seat[(n - 1 - player) % n] = 1.0
        run, set_, track = parts.run, parts.set, parts.track
        runs, sets, positions = game.runs, game.sets, game.track
        for i, seat in enumerate(self._seat_lists[player]):
            base = i * v - 1  # card c of relative seat i sits at i*v + c - 1
            for card in runs[seat]:
                run[base + card] = 1.0
            cards = sets[seat]
            if cards:
                set_[base + cards[0]] = len(cards) / copies
            track[i] = positions[seat] / track_length
        for card in game.prov_run:
            parts.provisional_run[card - 1] = 1.0
        if game.prov_set:
            parts.provisional_set[game.sets[turn][0] - 1] = game.prov_set / copies
        for card in game.revealed:
            parts.revealed[card - 1] += 0.5
        if game.pending:
            parts.to_place[game.pending - 1] = 1.0
        available = self._available  # a numpy view: += must add in float32, as it always has
        for card in game.available:
            available[card - 1] += 1.0 / copies
        # The pile counts are the same for every seat and change a few times a turn: rewritten (element
        # by element, cheaper than a list's conversion) only when they differ from the last call's.
        if game.discard != self._counts_seen[0]:
            self._counts_seen[0] = list(game.discard)
            self._write_counts(parts.discard_pile, game.discard, copies)
        if game.deck_counts != self._counts_seen[1]:
            self._counts_seen[1] = list(game.deck_counts)
            self._write_counts(parts.deck_counts, game.deck_counts, copies)
        parts.deck_size[0] = len(game.deck) / self._deck_size
        if opts.coin_spaces:
            parts.coins_pending[0] = game.coins / len(opts.coin_spaces)
        parts.final_round[0] = max(game.track) >= track_length  # a bool: 1.0 or 0.0
        if opts.pile_discards_per_turn:
            left = opts.pile_discards_per_turn - game.pile_discards
            parts.pile_discards_left[0] = left / opts.pile_discards_per_turn
        parts.turn_progress[0] = game.turns / opts.max_turns
        parts.decision_progress[0] = game.decisions / opts.max_decisions

    def encode(self, game: CrowsGame, player: int) -> np.ndarray:
        """What `fill` writes (a new array), rewriting only the pieces whose inputs changed."""
        mem, state, at = self._memory[player], self._seen_state[player], self._at
        copies = self._copies
        # The head (decision kind and the acting, turn and last seats) from a cache of its bytes.
        raw = self._bytes[player]
        kind = _COIN if game.phase == _PRESS and game.coins else game.phase  # `game.kind`, inlined
        key = (player, kind, game.to_act, game.turn_player)
        head = self._heads.get(key)
        if head is None:
            head = self._head(*key)
        if head is not state.head:
            state.head = raw[self._head_span] = head
        # The few-card pieces: clear last call's entries, then write this call's (`+=` on a cleared
        # entry adds to 0.0, as `fill` does).
        for i in state.marks:
            mem[i] = 0.0
        turn = game.turn_player
        marks = []
        if game.prov_run:
            start = at.provisional_run - 1
            for card in game.prov_run:
                marks.append(start + card)
                mem[start + card] = 1.0
        if game.prov_set:
            i = at.provisional_set + game.sets[turn][0] - 1
            marks.append(i)
            mem[i] = game.prov_set / copies
        if game.revealed:
            start = at.revealed - 1
            for card in game.revealed:
                marks.append(start + card)
                mem[start + card] += 0.5
        if game.pending:
            i = at.to_place + game.pending - 1
            marks.append(i)
            mem[i] = 1.0
        if game.available:
            self._write_available(game.available, self._vectors[player], marks, copies)
        state.marks = marks
        # The table: each relative seat's piles and track, rewritten seat by seat when they changed.
        if game.runs != state.runs:
            self._write_runs(game.runs, player, state.runs, mem)
        if game.sets != state.sets:
            self._write_sets(game.sets, player, state.sets, mem, copies)
        if game.track != state.track:
            state.track = list(game.track)
            track_length = self._track_length
            for i, seat in enumerate(self._seat_lists[player]):
                mem[at.track + i] = state.track[seat] / track_length
            mem[at.final_round] = max(state.track) >= track_length  # a bool: 1.0 or 0.0
        # The pile counts change when a card is drawn or discarded: their whole pieces then.
        if game.discard != state.discard:
            state.discard = list(game.discard)
            raw[self._discard_span] = self._count_row(game.discard)
        if game.deck_counts != state.deck_counts:
            state.deck_counts = list(game.deck_counts)
            raw[self._deck_counts_span] = self._count_row(game.deck_counts)
            mem[at.deck_size] = len(game.deck) / self._deck_size
        # Single numbers, as `fill` writes them; those that change a few times a game only then.
        if game.coins != state.coins and self._coin_spaces:
            state.coins = game.coins
            mem[at.coins_pending] = game.coins / self._coin_spaces
        if game.pile_discards != state.pile_discards and self._discards_per_turn:
            state.pile_discards = game.pile_discards
            left = self._discards_per_turn - game.pile_discards
            mem[at.pile_discards_left] = left / self._discards_per_turn
        if game.turns != state.turns:
            state.turns = game.turns
            mem[at.turn_progress] = game.turns / self._max_turns
        mem[at.decision_progress] = game.decisions / self._max_decisions
        return self._vectors[player].copy()

    def _head(self, player: int, kind: int, acting: int, turn: int) -> bytes:
        """The head's float32 bytes for `player` (as `fill` writes those pieces), kept in `_heads`."""
        n, at = self._n, self._at
        head = np.zeros(at.last_seat + n, dtype=np.float32)
        head[at.decision + kind] = 1.0
        head[at.acting_seat + (acting - player) % n] = 1.0
        head[at.turn_seat + (turn - player) % n] = 1.0
        head[at.last_seat + (n - 1 - player) % n] = 1.0
        self._heads[player, kind, acting, turn] = head.tobytes()
        return self._heads[player, kind, acting, turn]

    def _count_row(self, counts: list[int]) -> bytes:
        """Counts of values 1..max_value / copies as float32 bytes, the values `_write_counts` writes."""
        try:
            return b"".join(map(self._count_bytes.__getitem__, counts[1:]))
        except IndexError:  # more copies of a value than the game has: only a hand-stacked deck
            per_copy = 1.0 / self.options.copies_per_value
            return b"".join(struct.pack("f", count * per_copy) for count in counts[1:])

    def _write_available(
        self, available: list[int], vector: np.ndarray, marks: list[int], copies: int
    ) -> None:
        """The `available` piece, added up in float32 on a numpy view as `fill` does (0.1 steps round)."""
        start = self._at.available - 1
        for card in available:
            marks.append(start + card)
            vector[start + card] += 1.0 / copies

    def _write_runs(self, runs: list[list[int]], player: int, seen: list[list[int]], mem) -> None:
        """The `run` piece of each seat whose RUN differs from `seen` (updated to copies)."""
        n, v, start = self._n, self._v, self._at.run - 1
        for seat in range(n):
            run = runs[seat]
            if run != seen[seat]:
                base = start + (seat - player) % n * v  # card c of relative seat i sits at i*v + c - 1
                for card in seen[seat]:
                    mem[base + card] = 0.0
                for card in run:
                    mem[base + card] = 1.0
                seen[seat] = list(run)

    def _write_sets(
        self, sets: list[list[int]], player: int, seen: list[list[int]], mem, copies: int
    ) -> None:
        """The `set` piece of each seat whose SET differs from `seen` (updated to copies)."""
        n, v, start = self._n, self._v, self._at.set - 1
        for seat in range(n):
            cards = sets[seat]
            if cards != seen[seat]:
                base = start + (seat - player) % n * v
                if seen[seat]:
                    mem[base + seen[seat][0]] = 0.0
                if cards:
                    mem[base + cards[0]] = len(cards) / copies
                seen[seat] = list(cards)

    def view(self, game: CrowsGame, player: int) -> str:
        """The table as `player` sees it, in plain text: everything but the deck's order."""
        opts = game.options
        n = game.num_players
        you = f"player_{player}"
        last = f"player_{n - 1}"
        lines = [f"Murder, She Crows - you are {you}; turn {game.turns + 1} (at most {opts.max_turns})"]
        if game.over:
            cut = game.truncated and not game.terminal
            lines.append("Game over" + (" (truncated: no winner)" if cut else f": track {game.track}"))
        elif max(game.track) >= opts.track_length:
            lines.append(f"Final round: the game ends after {last}'s turn.")
        else:
            lines.append(f"A round ends after {last}'s turn; the game ends with the round in which")
            lines.append(f"  someone reaches space {opts.track_length} of the track.")
        if game.deck:
            lines.append(f"Deck: {len(game.deck)} cards, order unknown: {_counts(game.deck_counts)}")
        else:
            lines.append("Deck: empty; the next card revealed comes from the discard pile, shuffled.")
        lines.append(f"Discard pile (face up): {sum(game.discard)} cards: {_counts(game.discard)}")
        coins = " ".join(str(c) for c in sorted(opts.coin_spaces)) or "none"
        lines.append(f"Track: spaces 0..{opts.track_length}, coins on {coins}")
        turn = game.turn_player
        for i in range(n):
            seat = (player + i) % n
            name = f"you ({you})" if i == 0 else f"player_{seat}"
            provisional = game.prov_run if seat == turn else []
            run = " ".join(f"{c}*" if c in provisional else str(c) for c in game.runs[seat]) or "-"
            set_ = game.sets[seat]
            firm = len(set_) - (game.prov_set if seat == turn else 0)
            set_text = " ".join(str(c) if k < firm else f"{c}*" for k, c in enumerate(set_)) or "-"
            mark = "  <- turn" if seat == turn and not game.over else ""
            lines.append(f"  {name}: track {game.track[seat]}  RUN [{run}]  SET [{set_text}]{mark}")
        if not game.over:
            who = "you" if game.to_act == player else f"player_{game.to_act}"
            lines.append(f"Deciding: {who} ({game.decision()})")
            if game.revealed:
                lines.append(f"Revealed, one to keep if it fits: {_cards(game.revealed)}")
            if game.pending:
                lines.append(f"Revealed card that fits both piles, waiting for a pile: {game.pending}")
            if game.available:
                lines.append(f"Open to claims after player_{turn}'s bust: {_cards(game.available)}")
            if game.coins:
                lines.append(f"Coins player_{turn} still has to use: {game.coins}")
            left = max(opts.pile_discards_per_turn - game.pile_discards, 0)
            lines.append(f"Pile discards player_{turn} has left this turn: {left}")
            lines.append(f"(* = provisional: lost if player_{turn} busts)")
        if game.log:
            lines.append("Last: " + "; ".join(game.log))
        return "\n".join(lines)


def _counts(per_value: list[int]) -> str:
    """'1x3 4x1' for three 1s and a 4 (index 0 of `per_value` is unused), or '-' for none."""
    return " ".join(f"{v}x{k}" for v, k in enumerate(per_value) if k) or "-"


def _cards(cards) -> str:
    """Cards in value order, or '-' for none (the order cards came in tells nobody anything)."""
    return " ".join(str(c) for c in sorted(cards)) or "-"


class _SeatState:
    """What one seat's cached vector was last built from (copies), piece by piece; None = unknown."""

    def __init__(self, n: int) -> None:
        self.head: bytes | None = None  # the head's bytes last copied in
        self.marks: list[int] = []  # the few-card entries written by the last call
        self.runs: list[list[int]] = [[] for _ in range(n)]  # by absolute seat; the vector starts empty
        self.sets: list[list[int]] = [[] for _ in range(n)]
        self.track: list[int] | None = None
        self.discard: list[int] | None = None
        self.deck_counts: list[int] | None = None
        self.coins: int | None = None
        self.pile_discards: int | None = None
        self.turns: int | None = None
