"""Tiny variants of each game for the exact posterior test: short games, few consistent worlds."""

from __future__ import annotations

#: Constructor options per env name: a small deck that still exercises the game's hidden information.
TINY: dict[str, dict] = {
    # Five Fruit Flies, a Deer Fly, a Dragonfly, a Hornet and one Murray; hands and pond of one card,
    # one card drawn a turn: games of 6-20 decisions with face-down passes, pond swaps, takes, Hornet
    # looks and the reshuffle that brings the Hawk in.
    "murray_frog_v0": {
        "insect_counts": (5, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1),
        "murrays": 1,
        "hand_size": 1,
        "pond_size": 1,
        "draw_count": 1,
        "first_draw_count": 1,
    },
}

#: Player count per env name.
TINY_PLAYERS: dict[str, int] = {"murray_frog_v0": 3}
