"""Tiny variants of each game for exact tests: decks small enough to enumerate what a player may know.

`TINY[name]` are constructor options and `TINY_PLAYERS[name]` the player count. They shrink the
decks (and hands) so that a random game lasts tens of decisions and the worlds consistent with a
player's history number at most a few hundred, while every hidden-information mechanic of the
game still happens.
"""

from __future__ import annotations

TINY: dict[str, dict] = {
    # Five cards (1 2 3 and two feet, 60 orders), three players: bids of up to 3 cards, so a round
    # has a few draws, can end with a second foot, and the viewer guesses which numbers the others
    # hold face down and the deck's order. Target 4 and 3 rounds keep a random game to ~15 decisions.
    "chicken_v1": dict(
        max_value=3, copies_per_value=1, feet=2, bid_cap=3, target=4, foot_bonus=1, max_rounds=3
    ),
    # Eight cards (1 1 1 1 2 2 2 2): the deck runs out within a few turns and the face-up discard
    # pile is reshuffled into a new one; two values keep the histories common enough to sample.
    # Murders of 2 cards and a 3-space track with a coin on 2; three turns at most.
    "murder_she_crows_v1": dict(
        max_value=2, copies_per_value=4, min_murder=2, track_length=3, coin_spaces=(2,), max_turns=3
    ),
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
TINY_PLAYERS: dict[str, int] = {
    "chicken_v1": 3,
    "murder_she_crows_v1": 2,
    "murder_most_fowl_v0": 2,
    "murray_frog_v0": 3,
}


def make_tiny(name: str):
    """The tiny variant of `name` as an AEC env."""
    from fowlplay import envs

    options = TINY[name] if name in TINY else SUPPORT_ONLY[name]
    return envs.make(name, num_players=TINY_PLAYERS[name], **options)


def played(name: str, seed: int, steps: int, viewer: str):
    """The tiny env of `name` after `steps` masked random actions of game `seed`, and what `viewer` saw."""
    from fowlplay.envs.core.testing import random_actions, record_history

    env = make_tiny(name)
    actions = random_actions(env, seed=seed, action_seed=seed)[:steps]
    return env, record_history(env, seed, actions, viewer)


def posterior(name: str, history, tries: int = 20_000, want: int = 400):
    """Rejection-sampled worlds of `name`'s tiny variant consistent with `history`."""
    from fowlplay.envs.core.testing import posterior_worlds

    return posterior_worlds(lambda: make_tiny(name), history, range(10_000, 10_000 + tries), want=want)
