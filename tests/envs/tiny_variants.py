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

#: Tiny variants of games whose re-deal is exact in its support but not in its weights, so the
#: exact posterior test (which also replays every action id, face-down passes included) does not
#: apply; their own tests check the support against a rejection sampler that replays an action the
#: viewer does not see (`Game.hidden_action`) as a random legal one of its kind.
SUPPORT_ONLY: dict[str, dict] = {
    # Five Fruit Flies, a Deer Fly, a Dragonfly, a Hornet and one Murray; hands and pond of one
    # card, one card drawn a turn: games of 6-20 decisions with face-down passes, pond swaps, takes,
    # Hornet looks and the reshuffle that brings the Hawk in. Why its weights are not exact: see
    # docs/games/murray_frog_v0.md, "How exact it is".
    "murray_frog_v0": dict(
        insect_counts=(5, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1),
        murrays=1,
        hand_size=1,
        pond_size=1,
        draw_count=1,
        first_draw_count=1,
    ),
}
TINY_PLAYERS: dict[str, int] = {"murder_she_crows_v0": 2, "murray_frog_v0": 3}
