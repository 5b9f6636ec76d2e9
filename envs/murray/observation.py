"""What one Murray player sees, as a vector and as text. Seats are relative: index 0 is the
observer, 1 the player to their left, and so on clockwise. Other players' hands are read here only
as sizes, except the hand the observer is looking at with a Hornet right now; what a Hornet look
showed is remembered afterwards from the observer's own memory (`MurrayGame.seen`), never from the
live hand, and the cards the table saw go into a hand come from the public record
(`MurrayGame.shown`)."""

from __future__ import annotations

import struct
from itertools import pairwise
from types import SimpleNamespace

import numpy as np
from fowlplay.envs.core import Observer, Piece
from fowlplay.envs.murray.cards import CARD_NAMES, HAND_KINDS, NUM_INSECTS, PILE_KINDS, Card, card_value_sum
from fowlplay.envs.murray.rules import Decision, MurrayGame, MurrayOptions, swarm_points, tadpole_points

#: `Card`'s members as plain attributes (the same objects): on Python 3.11 reading a member
#: through its enum class costs several times an attribute read, at every decision.
_Card = SimpleNamespace(**Card.__members__)
#: `Decision`'s members as plain attributes (the same objects): on Python 3.11 reading a member
#: through its enum class costs several times an attribute read, at every decision.
_Decision = SimpleNamespace(**Decision.__members__)
_HAWK, _MURRAY = int(Card.HAWK), int(Card.MURRAY)
_MURRAY_DECISION, _HORNET_TAKE = Decision.MURRAY, Decision.HORNET_TAKE


class HawkStatus:
    """Positions of the `hawk` one-hot piece: where the observer knows the Hawk to be."""

    DISCARD_PILE = 0  # not shuffled in yet: the game cannot end
    UNSEEN = 1  # shuffled in; I have not held it since (it may still be in the deck)
    IN_MY_HAND = 2
    #: I held it since it was shuffled in and passed it: the turn player has it, except while a
    #: passer discards down to the hand limit (after passing it), when the next player already does.
    LEFT_THE_DECK = 3

    TEXT = (
        "in the discard pile (the game cannot end yet)",
        "shuffled into the deck; you have not seen it since",
        "in your hand",
        "out of the deck: the player whose turn it is holds it",
    )


#: The `hawk` piece's four values for each `HawkStatus`.
_HAWK_ONE_HOT = tuple(tuple(int(i == status) for i in range(4)) for status in range(4))


def _copies(options: MurrayOptions) -> np.ndarray:
    """Copies of each card type in the game (at least 1, to divide by)."""
    counts = [*options.counts, 1, options.murray_count]
    return np.maximum(np.array(counts, dtype=np.float32), 1.0)


class MurrayObserver(Observer):
    """Builds a Murray observation from named pieces."""

    def __init__(self, options: MurrayOptions) -> None:
        super().__init__(options)
        # `fill` writes raw counts and one multiply by this vector brings every piece into [0, 1].
        copies = _copies(options)
        n = options.num_players
        inv_hand = 1.0 / copies[:HAND_KINDS]
        scale = {
            "my_hand": inv_hand,
            "hand_sizes": [1.0 / options.total_cards] * n,
            "swarms": np.tile(inv_hand[:NUM_INSECTS], n * options.max_swarms),
            # Every Murray can be played at most twice (once more after the reshuffle).
            "tadpoles": [1.0 / max(2 * options.murray_count, 1)] * n,
            "discard_pile": 1.0 / copies,
            "deck_size": [1.0 / options.total_cards],
            "murrays_in_deck": [1.0 / max(options.murray_count, 1)],
            "hawk_draws": [1.0 / options.total_cards],
            "seen_hands": np.tile(inv_hand, n - 1),
            "table_seen": np.tile(inv_hand, n),
            "robber_left": [0.5],
            "turn_progress": [1.0 / options.max_turns],
        }
        self._scale = np.ones(self.size, dtype=np.float32)
        for name, factor in scale.items():
            self._scale[self.offsets[name]] = factor
        #: Absolute seats in each observer's relative order.
        self._seat_lists = [[(p + rel) % n for rel in range(n)] for p in range(n)]
        self._swarm_rows = self._parts.swarms.reshape(n * options.max_swarms, NUM_INSECTS)
        self._seen_rows = self._parts.seen_hands.reshape(n - 1, HAND_KINDS)
        self._shown_rows = self._parts.table_seen.reshape(n, HAND_KINDS)
        # `encode` keeps each seat's raw (unscaled) vector between calls and rewrites a piece only
        # when what it was built from changed: most of the table stands still from one decision to
        # the next. `_seen_state[seat]` holds copies of those inputs (never the live lists).
        self._raw, _ = self.seat_buffers()
        self._memory = [memoryview(raw) for raw in self._raw]
        self._raw_bytes_of = [memory.cast("B") for memory in self._memory]
        self._seen_state = [_SeatState(n) for _ in range(n)]
        at = self.offsets
        self._at = SimpleNamespace(**{name: at[name].start for name in at})
        self._n, self._s = n, options.max_swarms
        self._murray_count, self._max_turns = options.murray_count, options.max_turns
        # Runs of pieces that lie side by side are written with one `struct` call each (float32,
        # native order, like the buffer): cheaper than a numpy slice assignment from a list.
        _check_side_by_side(at, ("my_hand", "hand_sizes"))
        _check_side_by_side(at, ("deck_size", "murrays_in_deck", "hawk", "hawk_draws", "turn_flags"))
        self._pack_hand = _floats(HAND_KINDS + n)
        self._pack_deck = _floats(at["turn_flags"].stop - at["deck_size"].start)
        self._pack_seats = _floats(n)
        self._pack_pile = _floats(PILE_KINDS)
        self._pack_counts = _floats(HAND_KINDS)
        self._shared_swarms = _SharedRows(n, _swarm_block_packer(options.max_swarms))
        self._shared_shown = _SharedRows(n, _counts_packer())
        self._swarm_span = slice(at["swarms"].start * 4, at["swarms"].stop * 4)
        self._shown_span = slice(at["table_seen"].start * 4, at["table_seen"].stop * 4)
        self._no_hand = bytes(HAND_KINDS * 4)

    def layout(self, options: MurrayOptions) -> list[Piece]:
        """The named pieces, in order."""
        n, s, p = options.num_players, options.max_swarms, options.pond_size
        return [
            Piece("decision", len(Decision), "one-hot kind of decision being made (`Decision` order)"),
            Piece("actor", n, "one-hot relative seat whose decision it is"),
            Piece("my_hand", HAND_KINDS, "cards of each type in my hand (`Card` order, 12 = Hawk) / copies of that type"),
            Piece("hand_sizes", n, "cards in each relative seat's hand / cards in the game"),
            Piece("swarms", n * s * NUM_INSECTS, "swarm of relative seat i // max_swarms, slot i % max_swarms: count of each insect type / copies"),
            Piece("tadpoles", n, "tadpoles of each relative seat / (2 x Murrays)"),
            Piece("pond", p * NUM_INSECTS, "one-hot insect type in each pond slot (slots sorted by type)"),
            Piece("discard_pile", PILE_KINDS, "cards of each type in the discard pile (13 = Murray) / copies"),
            Piece("deck_size", 1, "cards left in the deck / cards in the game"),
            Piece("murrays_in_deck", 1, "Murrays left in the deck / Murrays in the game"),
            Piece("hawk", 4, "one-hot: Hawk in the discard pile, shuffled in and unseen by me, in my hand, left the deck (the turn player holds it; during a passer's hand-limit discard, the next player already does)"),
            Piece("hawk_draws", 1, "Hawk unseen by me: face-down draws by others that could have been it (since my last turn) / cards in the game"),
            Piece("turn_flags", 3, "this turn: pond swap used, common-fly draw used, may go out now"),
            Piece("last_passed", HAND_KINDS, "one-hot type of the card I last passed left"),
            Piece("last_received", HAND_KINDS, "one-hot type of the card I last received from my right"),
            Piece("seen_hands", (n - 1) * HAND_KINDS, "relative seat 1 + i // 13: the hand my Hornet is looking at, else as left after my last look / copies"),
            Piece("table_seen", n * HAND_KINDS, "relative seat i // 13: cards the table saw go into that hand and not leave it (a face-down pass may have moved one) / copies"),
            Piece("target_player", n, "one-hot relative seat targeted by the Hornet being resolved"),
            Piece("chosen_swarm", n * s, "one-hot swarm picked by the Firefly or Robber Fly being resolved"),
            Piece("robber_left", 1, "flies the Robber Fly being resolved still takes / 2"),
            Piece("turn_progress", 1, "turns begun / max_turns"),
        ]  # fmt: skip

    def fill(self, game: MurrayGame, player: int, parts: SimpleNamespace) -> None:
        """Write what `player` may know."""
        # Hot path: per-seat values are written one by one and rows only where they are non-zero
        # (cheaper than building lists for numpy to convert); the buffer is scaled once at the end.
        n, s = game.num_players, game.options.max_swarms
        parts.decision[game.decision_kind] = 1.0
        parts.actor[(game.player - player) % n] = 1.0
        hand = game.hands[player]
        parts.my_hand[:] = hand
        seats = self._seat_lists[player]
        hand_sizes, tadpoles, swarms, shown = (
            parts.hand_sizes,
            parts.tadpoles,
            self._swarm_rows,
            self._shown_rows,
        )
        for rel, seat in enumerate(seats):
            hand_sizes[rel] = game.hand_sizes[seat]
            tadpoles[rel] = game.tadpoles[seat]
            for slot, swarm in enumerate(game.swarms[seat]):
                swarms[rel * s + slot] = swarm
            if game.shown_any and any(game.shown[seat]):
                shown[rel] = game.shown[seat]
        for slot, card in enumerate(game.pond):
            parts.pond[slot * NUM_INSECTS + card] = 1.0
        parts.discard_pile[:] = game.discard
        parts.deck_size[0] = len(game.deck)
        parts.murrays_in_deck[0] = self._murrays_left(game)
        hawk = self._hawk_status(game, player)
        parts.hawk[hawk] = 1.0
        if hawk == HawkStatus.UNSEEN:
            parts.hawk_draws[0] = game.hawk_draws[player]
        if game.player == player:
            parts.turn_flags[0] = game.swapped
            parts.turn_flags[1] = game.fly_drawn
            parts.turn_flags[2] = game.may_go_out and hand[_Card.HAWK] > 0
        if game.last_passed[player] >= 0:
            parts.last_passed[game.last_passed[player]] = 1.0
        if game.last_received[player] >= 0:
            parts.last_received[game.last_received[player]] = 1.0
        looking = game.target if game.decision_kind == _Decision.HORNET_TAKE and game.player == player else -1
        seen = game.seen[player]
        seen_hands = self._seen_rows
        for rel in range(1, n):
            seat = seats[rel]
            view = game.hands[seat] if seat == looking else seen[seat]
            if view is not None:
                seen_hands[rel - 1] = view
        if game.target >= 0:
            parts.target_player[(game.target - player) % n] = 1.0
        owner, slot = game.chosen
        if owner >= 0:
            parts.chosen_swarm[((owner - player) % n) * s + slot] = 1.0
        parts.robber_left[0] = game.robber_left
        parts.turn_progress[0] = min(game.turn, game.options.max_turns)
        whole = parts.decision.base  # every piece is a view of one buffer: scale it at once
        whole *= self._scale

    def encode(self, game: MurrayGame, player: int) -> np.ndarray:
        """What `fill` writes, scaled (a new array): only the pieces whose inputs changed are rewritten."""
        raw, mem, state, at = self._raw[player], self._memory[player], self._seen_state[player], self._at
        n, s = self._n, self._s
        kind, actor, hand = game.decision_kind, game.player, game.hands[player]
        # One-hots: the same from one decision to the next within a turn, so rewritten only on change.
        hot = [at.decision + kind, at.actor + (actor - player) % n]
        passed, received = game.last_passed[player], game.last_received[player]
        if passed >= 0:
            hot.append(at.last_passed + passed)
        if received >= 0:
            hot.append(at.last_received + received)
        if game.target >= 0:
            hot.append(at.target_player + (game.target - player) % n)
        owner, slot = game.chosen
        if owner >= 0:
            hot.append(at.chosen_swarm + ((owner - player) % n) * s + slot)
        if hot != state.hot:
            for i in state.hot:
                mem[i] = 0.0
            for i in hot:
                mem[i] = 1.0
            state.hot = hot
        # deck_size .. turn_flags lie side by side (the Hawk's one-hot among them): packed in one call.
        if not game.hawk_in:  # `_hawk_status`, inline
            hawk = HawkStatus.DISCARD_PILE
        elif hand[_HAWK]:
            hawk = HawkStatus.IN_MY_HAND
        else:
            hawk = HawkStatus.LEFT_THE_DECK if game.hawk_seen[player] else HawkStatus.UNSEEN
        mine = actor == player
        self._pack_deck(
            raw,
            at.deck_size * 4,
            len(game.deck),
            self._murray_count - game.discard[_MURRAY] - (kind == _MURRAY_DECISION),  # `_murrays_left`
            *_HAWK_ONE_HOT[hawk],
            game.hawk_draws[player] if hawk == HawkStatus.UNSEEN else 0,
            mine and game.swapped,
            mine and game.fly_drawn,
            mine and game.may_go_out and hand[_HAWK] > 0,
        )
        mem[at.robber_left] = game.robber_left
        turn = game.turn
        mem[at.turn_progress] = turn if turn < self._max_turns else self._max_turns
        # Pieces compared with a copy of what they were last built from (seats in absolute order).
        sizes = game.hand_sizes
        if hand != state.hand or sizes != state.hand_sizes:  # my_hand and hand_sizes lie side by side
            state.hand, state.hand_sizes = list(hand), list(sizes)
            self._pack_hand(raw, at.my_hand * 4, *hand, *sizes[player:], *sizes[:player])
        if game.tadpoles != state.tadpoles:
            tadpoles = state.tadpoles = list(game.tadpoles)
            self._pack_seats(raw, at.tadpoles * 4, *tadpoles[player:], *tadpoles[:player])
        pond = game.pond
        if pond != state.pond:
            start = at.pond
            for slot, card in enumerate(state.pond):
                mem[start + slot * NUM_INSECTS + card] = 0.0
            for slot, card in enumerate(pond):
                mem[start + slot * NUM_INSECTS + card] = 1.0
            state.pond = list(pond)
        if game.discard != state.discard:
            state.discard = list(game.discard)
            self._pack_pile(raw, at.discard_pile * 4, *state.discard)
        # Seat rows, packed once for every observing seat; this seat lays them out in its order.
        if game.swarm_stamps != state.swarms:  # one new stamp per change (`MurrayGame._swarms_changed`)
            state.swarms, rows = self._shared_swarms.rows(game.swarms, game.swarm_stamps)
            self._raw_bytes_of[player][self._swarm_span] = b"".join(rows[player:] + rows[:player])
        if game.shown_stamps != state.shown:
            state.shown, rows = self._shared_shown.rows(game.shown, game.shown_stamps)
            self._raw_bytes_of[player][self._shown_span] = b"".join(rows[player:] + rows[:player])
        seen = game.seen[player]
        looking = game.target if kind == _HORNET_TAKE and mine else -1
        if looking >= 0 or seen != state.seen:
            self._write_seen(game, player, state, looking)
        return raw * self._scale

    def _write_seen(self, game: MurrayGame, player: int, state: _SeatState, looking: int) -> None:
        """Rewrite the rows of the hands `player` sees: the one its Hornet looks at, or its last looks."""
        raw, start = self._raw_bytes_of[player], self._at.seen_hands * 4
        seen = game.seen[player]
        for rel, seat in enumerate(self._seat_lists[player]):
            if not rel:
                continue
            view = game.hands[seat] if seat == looking else seen[seat]
            if view != state.seen[seat]:
                state.seen[seat] = None if view is None else list(view)
                first = start + (rel - 1) * HAND_KINDS * 4
                if view is None:
                    raw[first : first + HAND_KINDS * 4] = self._no_hand
                else:
                    self._pack_counts(raw, first, *view)

    def view(self, game: MurrayGame, player: int) -> str:
        """The table as `player` sees it, in plain text: nothing another player holds face down."""
        n = game.num_players

        def names(counts: list[int]) -> str:
            return (
                ", ".join(CARD_NAMES[t] + (f" x{c}" if c > 1 else "") for t, c in enumerate(counts) if c)
                or "-"
            )

        hawk = self._hawk_status(game, player)
        lines = [
            f"Murray the A**hole Frog - player_{player}'s view, turn {game.turn} (cap {game.options.max_turns})",
            f"  deck: {len(game.deck)} cards, {self._murrays_left(game)} of them Murrays; the Hawk is {HawkStatus.TEXT[hawk]}",
        ]
        if hawk == HawkStatus.UNSEEN:
            lines.append(
                f"  face-down draws by others since your last turn that could have been the Hawk: {game.hawk_draws[player]}"
            )
        lines.append("  pond: " + (", ".join(CARD_NAMES[c] for c in game.pond) or "-"))
        lines.append("  discard pile: " + names(game.discard))
        for rel in range(n):
            q = (player + rel) % n
            swarms = "; ".join(names(s) for s in game.swarms[q]) or "-"
            table = sum(swarm_points(s, game.options) + card_value_sum(s) for s in game.swarms[q])
            table += tadpole_points(game.tadpoles[q])
            who = f"player_{q}" + (" (you)" if q == player else "")
            hand = (
                names(game.hands[q])
                if q == player
                else f"{game.hand_sizes[q]} card" + "s" * (game.hand_sizes[q] != 1)
            )
            lines.append(f"  {who}: hand {hand}; swarms [{swarms}]; tadpoles {game.tadpoles[q]}; "
                         f"points on the table {table}")  # fmt: skip
            if any(game.shown[q]):
                lines.append(f"    the table saw go into this hand and not leave it: {names(game.shown[q])}")
            if q != player and game.seen[player][q] is not None:
                lines.append(f"    your last Hornet look left it holding: {names(game.seen[player][q])}")
        if game.last_passed[player] >= 0:
            lines.append(
                f"  you last passed a {CARD_NAMES[game.last_passed[player]]} to player_{(player + 1) % n}"
            )
        if game.last_received[player] >= 0:
            lines.append(
                f"  you last received a {CARD_NAMES[game.last_received[player]]} from player_{(player - 1) % n}"
            )
        if game.over:
            lines.append("  game over: " + (game.end_reason or "turn cap reached, truncated"))
        else:
            actor = "you" if game.player == player else f"player_{game.player}"
            lines.append(f"  to act: {actor}, deciding '{game.decision()}'")
            if game.decision_kind == _Decision.HORNET_TAKE and game.player == player:
                lines.append(
                    f"    your Hornet shows player_{game.target}'s hand: {names(game.hands[game.target])}"
                )
            elif game.target >= 0:
                lines.append(f"    target: player_{game.target}")
            if game.chosen[0] >= 0:
                owner, slot = game.chosen
                lines.append(f"    chosen: player_{owner}'s swarm {slot} ({names(game.swarms[owner][slot])})")
            if game.robber_left:
                lines.append(f"    the Robber Fly still discards {game.robber_left}")
            if game.player == player and game.decision_kind == _Decision.TURN:
                used = [
                    what
                    for what, done in (("pond swap", game.swapped), ("common-fly draw", game.fly_drawn))
                    if done
                ]
                lines.append("    used this turn: " + (", ".join(used) or "-")
                             + ("; you may go out with the Hawk now" if game.may_go_out and game.hands[player][_Card.HAWK] else ""))  # fmt: skip
        if game.log:
            lines.append("  last: " + "; ".join(game.log))
        return "\n".join(lines)

    @staticmethod
    def _hawk_status(game: MurrayGame, player: int) -> int:
        if not game.hawk_in:
            return HawkStatus.DISCARD_PILE
        if game.hands[player][_Card.HAWK]:
            return HawkStatus.IN_MY_HAND
        return HawkStatus.LEFT_THE_DECK if game.hawk_seen[player] else HawkStatus.UNSEEN

    @staticmethod
    def _murrays_left(game: MurrayGame) -> int:
        """Murrays live only in the deck or on the pile, so the deck's count is public."""
        in_play = game.decision_kind == _Decision.MURRAY  # the Murray awaiting its target
        return game.options.murray_count - game.discard[_Card.MURRAY] - in_play


class _SeatState:
    """What one seat's cached vector was last built from (copies), piece by piece; None = unknown.

    Inputs with a row per seat are kept in absolute seat order, so that one comparison with the
    game's whole list tells whether any row needs rewriting; for the swarms and table-seen rows
    that is the game's stamps of them (`MurrayGame.swarm_stamps`, `shown_stamps`) the vector was
    last laid out from.
    """

    def __init__(self, n: int) -> None:
        self.hot: list[int] = []  # the one-hot entries set to 1
        self.hand = self.hand_sizes = self.tadpoles = self.discard = None
        self.pond: list[int] = []  # the pond's one-hots are cleared card by card: none at first
        self.swarms: list = [None] * n  # stamps
        self.shown: list = [None] * n  # stamps
        self.seen: list = [None] * n  # None also means "nothing seen", which is all zeros: right


class _SharedRows:
    """A public piece with one row per seat, packed as float32 bytes once for every observing seat.

    Each seat's vector shows the same rows in its own seat order; without this every seat would
    pack the same change again when its turn comes. A row is repacked when the game's stamp of
    it is new (the rules give a row a new stamp whenever it changes).
    """

    def __init__(self, n: int, pack_row) -> None:
        self._pack_row = pack_row
        self.stamps: list = [None] * n  # what `blobs` were packed at; replaced, never changed
        self.blobs: list = [None] * n

    def rows(self, current: list, stamps: list[int]) -> tuple[list, list[bytes]]:
        """(a copy of `stamps` that is never changed afterwards, each seat's row of `current` as bytes)."""
        if stamps != self.stamps:
            packed, blobs = self.stamps, list(self.blobs)
            for seat, stamp in enumerate(stamps):
                if stamp != packed[seat]:
                    blobs[seat] = self._pack_row(current[seat])
            self.stamps, self.blobs = list(stamps), blobs
        return self.stamps, self.blobs


def _swarm_block_packer(max_swarms: int):
    """Packs one seat's swarms (a list of insect counts each) as its block of `max_swarms` rows."""
    row = struct.Struct(f"={NUM_INSECTS}f").pack
    empty = bytes(NUM_INSECTS * 4)

    def pack(swarms: list[list[int]]) -> bytes:
        return b"".join([row(*swarm) for swarm in swarms]) + empty * (max_swarms - len(swarms))

    return pack


def _counts_packer():
    """Packs one hand's counts (`HAND_KINDS` of them) as float32 bytes."""
    counts = struct.Struct(f"={HAND_KINDS}f").pack

    def pack(row: list[int]) -> bytes:
        return counts(*row)

    return pack


def _floats(count: int):
    """`pack_into(buffer, byte_offset, *values)` writing `count` float32s in native order."""
    return struct.Struct(f"={count}f").pack_into


def _check_side_by_side(offsets: dict[str, slice], names: tuple[str, ...]) -> None:
    """Fail at construction if the layout no longer puts these pieces one after the other."""
    for first, second in pairwise(names):
        if offsets[first].stop != offsets[second].start:
            raise AssertionError(f"observation pieces {first!r} and {second!r} are no longer side by side")
