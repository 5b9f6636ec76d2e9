"""Small variants: one option set per game whose whole game tree OpenSpiel enumerates in minutes.

`small(name)` is the option set (player count included) for `envs.make` or
`fowlplay.envs.openspiel.load`. Each keeps the decisions that make its game (bid or pass and a
second foot; reveal or stop and bust; draw, discard, play and route; draw, swarm and Murray's
pass) on a deck of a handful of cards, two players (Murray three) and a short game. Exact values
on them: `python -m fowlplay.evaluation.exact`; what each keeps is on the game's rules page.
"""

from __future__ import annotations

from typing import Any

SMALL: dict[str, dict[str, Any]] = {
    # Cards 1 2 and two feet (12 orders); bids of 1-3 cards; one round, ended by the standings.
    "chicken_v1": dict(
        num_players=2,
        max_value=2,
        copies_per_value=1,
        feet=2,
        bid_cap=3,
        target=3,
        foot_bonus=2,
        max_rounds=1,
    ),
    # Cards 1 2 3 (6 orders, reshuffled from the discards); murders of 2; a 2-space track with a
    # coin on 1; two turns and at most 8 decisions, then the standings.
    "murder_she_crows_v1": dict(
        num_players=2,
        max_value=3,
        copies_per_value=1,
        min_murder=2,
        track_length=2,
        coin_spaces=(1,),
        max_turns=2,
        max_decisions=8,
    ),
    # One bird (Birbles 1), six Blocking wiles and the Murder: 8 cards (56 orders), so the deck
    # holds two after the deal and both players take a turn; 3x3 grids, a route of 1 scores.
    "murder_most_fowl_v0": dict(
        num_players=2,
        num_types=1,
        max_value=1,
        blocking_wiles=6,
        discard_wiles=0,
        swap_wiles=0,
        murder_wiles=1,
        grid_size=3,
        min_route=1,
    ),
    # Four Fruit Flies, a Deer Fly and one Murray; hands and pond of one card, one card drawn a
    # turn; four turns.
    "murray_frog_v0": dict(
        num_players=3,
        insect_counts=(4, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0),
        murrays=1,
        hand_size=1,
        pond_size=1,
        draw_count=1,
        first_draw_count=1,
        max_turns=4,
    ),
}


def small(name: str) -> dict[str, Any]:
    """The small variant of a game: its options, player count included (a new dict)."""
    if name not in SMALL:
        raise ValueError(f"no small variant of {name!r}; games with one: {list(SMALL)}")
    return dict(SMALL[name])
