"""What one Chicken player sees. Seats are relative: index 0 is the observer, 1 the player to
their left, and so on clockwise. Other players' number cards are face down and never read here
except as a count."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from envs.chicken.rules import ChickenGame, ChickenOptions
from envs.core import Observer, Piece


class ChickenObserver(Observer):
    """Builds a Chicken observation from named pieces."""

    def layout(self, options: ChickenOptions) -> list[Piece]:
        """The named pieces, in order."""
        n, v = options.num_players, options.max_value
        return [
            Piece(
                "my_numbers",
                v,
                "my face-down number cards this round: count of each value 1..max_value / copies_per_value",
            ),
            Piece("my_round_points", 1, "sum of my number cards this round / target", 0.0, math.inf),
            Piece(
                "number_cards_held", n, "number cards each seat holds this round (relative seats) / deck size"
            ),
            Piece("feet", n, "chicken feet in front of each seat (relative seats) / 2, capped at 1"),
            Piece("scores", n, "each seat's score / target (relative seats)", -math.inf, math.inf),
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
            Piece("round_progress", 1, "rounds played / max_rounds"),
        ]

    def fill(self, game: ChickenGame, player: int, parts: SimpleNamespace) -> None:
        """Write what `player` may know."""
        opts = game.options
        n = game.num_players
        seats = [(player + i) % n for i in range(n)]
        copies = opts.copies_per_value
        held = np.bincount(game.numbers[player], minlength=opts.max_value + 1)[1:]
        parts.my_numbers[:] = held / copies
        parts.my_round_points[0] = sum(game.numbers[player]) / opts.target
        parts.unseen_numbers[:] = (copies - held) / copies
        visible_feet = 0
        for i, seat in enumerate(seats):
            parts.number_cards_held[i] = len(game.numbers[seat]) / opts.deck_size
            parts.feet[i] = min(game.feet[seat] / 2.0, 1.0)
            parts.scores[i] = game.scores[seat] / opts.target
            visible_feet += game.feet[seat]
            parts.still_bidding[i] = float(game.active[seat])
            if seat == game.high_bidder:
                parts.high_bidder[i] = 1.0
            if seat == game.starter:
                parts.phase_starter[i] = 1.0
        if opts.feet:
            parts.feet_in_deck[0] = (opts.feet - visible_feet) / opts.feet
        parts.deck_size[0] = len(game.deck) / opts.deck_size
        parts.current_bid[0] = game.bid / opts.bid_cap
        parts.round_progress[0] = game.round / opts.max_rounds
