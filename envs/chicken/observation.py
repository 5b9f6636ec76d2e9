"""What one Chicken player sees. Seats are relative: index 0 is the observer, 1 the player to
their left, and so on clockwise. Other players' number cards are face down and never read here
except as a count."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from fowlplay.envs.chicken.rules import ChickenGame, ChickenOptions
from fowlplay.envs.core import Observer, Piece


def number_points(options: ChickenOptions) -> int:
    """The sum of every number card in the deck: no round tally can move a score by more (+ bonus)."""
    return options.copies_per_value * options.max_value * (options.max_value + 1) // 2


#: Distinct hands whose observation rows an observer remembers (a pure cache).
HAND_ROWS_KEPT = 50_000


def count_of(k: int, one: str, many: str | None = None) -> str:
    """'1 foot', '2 feet', '0 numbers'."""
    return f"{k} {one if k == 1 else many or one + 's'}"


class ChickenObserver(Observer):
    """Builds a Chicken observation from named pieces."""

    memoryview_parts = True

    def __init__(self, options: ChickenOptions) -> None:
        super().__init__(options)
        #: The `my_numbers` and `unseen_numbers` rows of each hand of number cards seen so far (a
        #: round's hand changes a few times, while it is observed at every decision).
        self._hand_rows: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}
        self._deck_size = options.deck_size  # a property: computed once here, read every decision
        n = options.num_players
        self._n = n
        #: Absolute seats in each observer's relative order.
        self._seat_lists = [[(p + i) % n for i in range(n)] for p in range(n)]
        # `encode` keeps each seat's vector between calls and rewrites a piece only when what it was
        # built from changed (hands change at a draw, bids at every decision); `_seen_state[seat]`
        # holds copies of those inputs, never the live lists.
        self._vectors, _ = self.seat_buffers()
        self._memory = [memoryview(vector) for vector in self._vectors]
        self._seen_state = [_SeatState() for _ in range(n)]
        self._at = SimpleNamespace(**{name: span.start for name, span in self.offsets.items()})

    def _number_rows(self, mine: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """(count of each value I hold, count I have not seen), both / copies_per_value."""
        key = tuple(mine)
        rows = self._hand_rows.get(key)
        if rows is None:
            copies = self.options.copies_per_value
            held = np.bincount(mine, minlength=self.options.max_value + 1)[1:]
            if len(self._hand_rows) >= HAND_ROWS_KEPT:
                self._hand_rows.clear()
            rows = self._hand_rows[key] = (
                (held / copies).astype(np.float32),
                ((copies - held) / copies).astype(np.float32),
            )
        return rows

    def layout(self, options: ChickenOptions) -> list[Piece]:
        """The named pieces, in order; every range is a true bound derived from the options."""
        n, v = options.num_players, options.max_value
        points = number_points(options) / options.target
        # A tally moves a score by at most the deck's number points (+ the foot bonus), once a round.
        lowest = -options.max_rounds * points
        highest = options.max_rounds * (number_points(options) + options.foot_bonus) / options.target
        return [
            Piece(
                "acting_seat", n, "one-hot relative seat whose decision it is (none once the game is over)"
            ),
            Piece(
                "my_numbers",
                v,
                "my face-down number cards this round: count of each value 1..max_value / copies_per_value",
            ),
            Piece(
                "my_round_points",
                1,
                "sum of my number cards this round / target (at most every number card: N / target)",
                0.0,
                points,
            ),
            Piece(
                "number_cards_held", n, "number cards each seat holds this round (relative seats) / deck size"
            ),
            Piece("feet", n, "chicken feet in front of each seat (relative seats) / 2, capped at 1"),
            Piece(
                "scores",
                n,
                "each seat's score / target (relative seats); a tally moves a score by -N..N + foot_bonus, "
                "once a round: max_rounds x that / target",
                lowest,
                highest,
            ),
            Piece(
                "unseen_numbers",
                v,
                "number cards of each value I have not seen (deck + other hands) / copies_per_value",
            ),
            Piece("feet_in_deck", 1, "chicken feet still in the deck / feet in the game"),
            Piece("deck_size", 1, "cards left in the deck / full deck"),
            Piece("current_bid", 1, "current high bid / bid_cap (0 = no bid yet)"),
            Piece("high_bidder", n, "one-hot relative seat of the high bidder"),
            Piece("still_bidding", n, "1 for each relative seat that has not passed this bid phase"),
            Piece("phase_starter", n, "one-hot relative seat that started this bid phase"),
            Piece(
                "round_starter",
                n,
                "one-hot relative seat that started this round (the next round starts at its left)",
            ),
            Piece("round_progress", 1, "rounds played / max_rounds"),
        ]

    def fill(self, game: ChickenGame, player: int, parts: SimpleNamespace) -> None:
        """Write what `player` may know."""
        opts = game.options
        n, deck_size = game.num_players, self._deck_size
        mine = game.numbers[player]
        mine_row, unseen_row = self._number_rows(mine)
        parts.my_numbers[:] = mine_row
        target = opts.target
        parts.my_round_points[0] = sum(mine) / target
        parts.unseen_numbers[:] = unseen_row
        visible_feet = 0
        held, feet, scores, bidding = parts.number_cards_held, parts.feet, parts.scores, parts.still_bidding
        for i in range(n):
            seat = (player + i) % n
            held[i] = len(game.numbers[seat]) / deck_size
            seat_feet = game.feet[seat]
            feet[i] = seat_feet / 2.0 if seat_feet < 2 else 1.0  # capped at 1
            scores[i] = game.scores[seat] / target
            visible_feet += seat_feet
            bidding[i] = game.active[seat]  # a bool: 1.0 or 0.0 in the float32 vector
        # Seat s sits at relative index (s - player) mod n.
        if not game.over:
            parts.acting_seat[(game.to_act - player) % n] = 1.0
        if game.high_bidder >= 0:
            parts.high_bidder[(game.high_bidder - player) % n] = 1.0
        parts.phase_starter[(game.starter - player) % n] = 1.0
        parts.round_starter[(game.round_starter - player) % n] = 1.0
        if opts.feet:
            parts.feet_in_deck[0] = (opts.feet - visible_feet) / opts.feet
        parts.deck_size[0] = len(game.deck) / deck_size
        parts.current_bid[0] = game.bid / opts.bid_cap
        parts.round_progress[0] = game.round / opts.max_rounds

    def encode(self, game: ChickenGame, player: int) -> np.ndarray:
        """What `fill` writes (a new array), rewriting only the pieces whose inputs changed."""
        mem, state, at, n = self._memory[player], self._seen_state[player], self._at, self._n
        opts = game.options
        # The one-hot seats change every decision: clear last call's, set this call's.
        for i in state.marks:
            mem[i] = 0.0
        marks = [
            at.phase_starter + (game.starter - player) % n,
            at.round_starter + (game.round_starter - player) % n,
        ]
        if not game.over:
            marks.append(at.acting_seat + (game.to_act - player) % n)
        if game.high_bidder >= 0:
            marks.append(at.high_bidder + (game.high_bidder - player) % n)
        for i in marks:
            mem[i] = 1.0
        state.marks = marks
        if game.bid != state.bid:
            state.bid = game.bid
            mem[at.current_bid] = game.bid / opts.bid_cap
        if game.active != state.active:
            state.active = list(game.active)
            start = at.still_bidding
            for i, seat in enumerate(self._seat_lists[player]):
                mem[start + i] = game.active[seat]  # a bool: 1.0 or 0.0 in the float32 vector
        # The hands (after a draw or a new round) and the pieces they decide.
        if game.numbers != state.numbers or game.feet != state.feet or len(game.deck) != state.deck_left:
            state.numbers = [list(numbers) for numbers in game.numbers]
            state.feet, state.deck_left = list(game.feet), len(game.deck)
            self._write_hands(game, player, mem)
        if game.scores != state.scores:
            state.scores = list(game.scores)
            start, target = at.scores, opts.target
            for i, seat in enumerate(self._seat_lists[player]):
                mem[start + i] = game.scores[seat] / target
        if game.round != state.round:
            state.round = game.round
            mem[at.round_progress] = game.round / opts.max_rounds
        return self._vectors[player].copy()

    def _write_hands(self, game: ChickenGame, player: int, mem: memoryview) -> None:
        """The pieces the hands decide: my and unseen numbers, cards and feet held, the deck's counts."""
        at, opts, deck_size = self._at, game.options, self._deck_size
        mine = game.numbers[player]
        mine_row, unseen_row = self._number_rows(mine)
        v = opts.max_value
        mem[at.my_numbers : at.my_numbers + v] = mine_row
        mem[at.unseen_numbers : at.unseen_numbers + v] = unseen_row
        mem[at.my_round_points] = sum(mine) / opts.target
        visible_feet = 0
        held, feet = at.number_cards_held, at.feet
        for i, seat in enumerate(self._seat_lists[player]):
            mem[held + i] = len(game.numbers[seat]) / deck_size
            seat_feet = game.feet[seat]
            mem[feet + i] = seat_feet / 2.0 if seat_feet < 2 else 1.0  # capped at 1
            visible_feet += seat_feet
        if opts.feet:
            mem[at.feet_in_deck] = (opts.feet - visible_feet) / opts.feet
        mem[at.deck_size] = len(game.deck) / deck_size

    def view(self, game: ChickenGame, player: int) -> str:
        """The table as `player` sees it: their own numbers, every public count, bid and score."""
        opts = game.options
        n = game.num_players
        feet_in_deck = opts.feet - sum(game.feet)
        lines = [
            f"Chicken - you are player_{player}; round {game.round} of at most {opts.max_rounds}, "
            f"started by player_{game.round_starter}; first to {opts.target} wins",
            f"deck: {len(game.deck)} cards, {feet_in_deck} of them chicken feet",
        ]
        for seat in range(n):
            numbers = game.numbers[seat]
            feet = count_of(game.feet[seat], "foot", "feet")
            if seat == player:
                shown = " ".join(str(v) for v in sorted(numbers)) or "-"
                cards = f"numbers [{shown}] (sum {sum(numbers)})"
            else:
                cards = count_of(len(numbers), "face-down number")
            marks = []
            if not game.over:
                if seat == game.to_act:
                    marks.append("to act")
                if seat == game.high_bidder:
                    marks.append(f"high bid {game.bid}")
                if not game.active[seat]:
                    marks.append("passed")
            name = f"player_{seat}" + (" (you)" if seat == player else "")
            lines.append(
                f"  {name}: score {game.scores[seat]}, {feet}, {cards}"
                + (f"  [{', '.join(marks)}]" if marks else "")
            )
        if game.round > 1 or game.over:
            tally = ", ".join(f"player_{p} {t:+d}" for p, t in enumerate(game.last_tally))
            lines.append(f"last round's tally: {tally}")
        if game.log:
            lines.append("last: " + "; ".join(game.log))
        if game.over:
            lines.append("game over" + (": truncated by the round cap" if game.truncated else ""))
        elif game.to_act == player:
            low, high = game.bid + 1, game.max_bid()
            choice = "pass (no higher bid is allowed)" if low > high else f"pass or bid {low}..{high}"
            if low == high:
                choice = f"pass or bid {low}"
            starter = f"bid phase started by player_{game.starter}"
            if game.high_bidder < 0:
                starter += "; if everyone passes, they draw 1"
            lines.append(f"your decision: {choice} ({starter})")
        else:
            lines.append(f"waiting for player_{game.to_act} to bid or pass")
        return "\n".join(lines)


class _SeatState:
    """What one seat's cached vector was last built from (copies), piece by piece; None = unknown."""

    def __init__(self) -> None:
        self.marks: list[int] = []  # the one-hot entries set by the last call
        self.bid: int | None = None
        self.active: list[bool] | None = None
        self.numbers: list[list[int]] | None = None
        self.feet: list[int] | None = None
        self.deck_left: int | None = None
        self.scores: list[int] | None = None
        self.round: int | None = None
