"""Tiny variants of each game for exact tests: decks small enough to enumerate what a player may know.

`TINY[name]` are constructor options and `TINY_PLAYERS[name]` the player count. They shrink the
decks (and hands) so that a random game lasts tens of decisions and the worlds consistent with a
player's history number at most a few hundred, while every hidden-information mechanic of the
game still happens.
"""

from __future__ import annotations

TINY: dict[str, dict] = {
    # 9 cards: Birbles 1-4, four Blocking wiles and the Murder, 3x3 grids, routes of 2 score.
    # Hands are hidden; pile tops taken into a hand stay known; with empty grids a hand of
    # Blocking wiles cannot be played and is shown; the Murder shows its victim's hand.
    "murder_most_fowl_v0": dict(
        num_types=1,
        max_value=4,
        blocking_wiles=4,
        discard_wiles=0,
        swap_wiles=0,
        murder_wiles=1,
        grid_size=3,
        min_route=2,
    ),
}
TINY_PLAYERS: dict[str, int] = {"murder_most_fowl_v0": 2}
