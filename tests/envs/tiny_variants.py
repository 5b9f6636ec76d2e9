"""Tiny variants of each game for exact tests: decks small enough to enumerate what a player may know.

`TINY[name]` are constructor options and `TINY_PLAYERS[name]` the player count. They shrink the
decks (and hands) so that a random game lasts tens of decisions and the worlds consistent with a
player's history number at most a few hundred, while every hidden-information mechanic of the
game still happens.
"""

from __future__ import annotations

TINY: dict[str, dict] = {
    # Eight cards (1 1 1 1 2 2 2 2): the deck runs out within a few turns and the face-up discard
    # pile is reshuffled into a new one; two values keep the histories common enough to sample.
    # Murders of 2 cards and a 3-space track with a coin on 2; three turns at most.
    "murder_she_crows_v0": dict(
        max_value=2, copies_per_value=4, min_murder=2, track_length=3, coin_spaces=(2,), max_turns=3
    ),
}
TINY_PLAYERS: dict[str, int] = {"murder_she_crows_v0": 2}
