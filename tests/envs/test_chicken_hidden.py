"""Chicken hidden information: exact re-deals that keep every public fact, and the text view.

Hidden from a player: the values of the other players' face-down number cards and the order of
the deck. Everything else is public: feet are face up, so every face-down card is a number and the
feet left in the deck are the feet nobody has drawn; how many numbers each seat holds; the viewer's
own numbers; bids, passes and scores. The re-deal is checked against rejection sampling
(`envs.core.testing`) on the tiny variant, and broken twins that ignore a public fact must fail.
"""

from __future__ import annotations

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.chicken.rules import FOOT, ChickenOptions, full_deck
from fowlplay.envs.core.cards import shuffled
from fowlplay.envs.core.testing import (
    apply_script,
    compare_worlds,
    resampled_worlds,
)

from tests.envs import tiny_variants
from tests.envs.test_chicken_rules import stacked
from tests.envs.tiny_variants import TINY, TINY_PLAYERS

NAME = "chicken_v1"
PASS = 0
F = FOOT
#: A wrong sampler's p-value falls far below this, a right one's stays far above (seeds are fixed).
ALPHA = 1e-4


def make_tiny():
    return envs.make(NAME, num_players=TINY_PLAYERS[NAME], **TINY[NAME])


def played(seed: int, steps: int, viewer: str):
    """The tiny env after `steps` masked random actions of game `seed`, and what `viewer` saw."""
    return tiny_variants.played("chicken_v1", seed, steps, viewer)


def posterior(history, tries: int = 20_000):
    return tiny_variants.posterior("chicken_v1", history, tries)


# ----- broken twins: each ignores one public fact --------------------------------------------
def _feet_pooled_with_numbers(env, viewer, seed):
    """The old re-deal: the deck (feet included) and the others' numbers shuffled together."""
    game = env.unwrapped.game
    player = env.possible_agents.index(viewer)
    others = [p for p in range(game.num_players) if p != player]
    pool = shuffled([*game.deck, *(v for p in others for v in game.numbers[p])], np.random.default_rng(seed))
    for p in others:
        k = len(game.numbers[p])
        game.numbers[p], pool = pool[:k], pool[k:]
    game.deck = pool


def _counts_per_seat_ignored(env, viewer, seed):
    """Deals the others' numbers as one pile: each seat's count of numbers is not kept."""
    game = env.unwrapped.game
    player = env.possible_agents.index(viewer)
    others = [p for p in range(game.num_players) if p != player]
    rng = np.random.default_rng(seed)
    env.resample_hidden(viewer, seed=seed)
    pile = [v for p in others for v in game.numbers[p]]
    cuts = np.sort(rng.integers(0, len(pile) + 1, size=len(others) - 1))
    for p, hand in zip(others, np.split(np.array(pile, dtype=int), cuts)):
        game.numbers[p] = hand.tolist()


def _hands_kept(env, viewer, seed):
    """Shuffles only the deck: as if the viewer could see the others' face-down numbers."""
    game = env.unwrapped.game
    game.deck = shuffled(game.deck, np.random.default_rng(seed))


# ----- re-deals on the tiny variant ----------------------------------------------------------
@pytest.fixture(scope="module")
def after_a_draw_with_a_foot():
    """Game 0 after 3 actions: player_0 drew 1, 2 and a foot; the deck holds the 3 and a foot.

    player_1 knows player_0 holds two of 1 2 3 and the deck the third and a foot: 3 x 2 worlds.
    """
    env, history = played(0, 3, "player_1")
    game = env.game
    assert sorted(game.numbers[0]) == [1, 2] and game.feet == [1, 0, 0]
    assert sorted(game.deck) == [F, 3] and not game.over
    return env, posterior(history)


@pytest.fixture(scope="module")
def in_the_second_round():
    """Game 0 after 13 actions: round 2, player_1 has a foot, player_2 one number, the deck a foot
    and two numbers; player_0 holds nothing and cannot tell which number player_2 holds: 3 x 6 worlds.
    """
    env, history = played(0, 13, "player_0")
    game = env.game
    assert game.round == 2 and game.feet == [0, 1, 0]
    assert [len(ns) for ns in game.numbers] == [0, 0, 1] and sorted(game.deck) == [F, 2, 3]
    return env, posterior(history)


def test_the_redeal_after_a_draw_with_a_foot_is_the_exact_posterior(after_a_draw_with_a_foot):
    env, worlds = after_a_draw_with_a_foot
    result = compare_worlds(worlds, resampled_worlds(env, "player_1", sum(worlds.values()), seed=1))
    assert result.worlds == 6
    assert not result.outside and result.p_value > ALPHA, result


def test_the_redeal_in_a_later_round_is_the_exact_posterior(in_the_second_round):
    env, worlds = in_the_second_round
    result = compare_worlds(worlds, resampled_worlds(env, "player_0", sum(worlds.values()), seed=2))
    assert result.worlds == 18
    assert not result.outside and result.p_value > ALPHA, result


@pytest.mark.parametrize(
    "sampler", [_feet_pooled_with_numbers, _counts_per_seat_ignored], ids=["feet-pooled", "counts-ignored"]
)
def test_a_redeal_that_ignores_a_public_fact_leaves_the_consistent_worlds(in_the_second_round, sampler):
    env, worlds = in_the_second_round
    result = compare_worlds(
        worlds, resampled_worlds(env, "player_0", sum(worlds.values()), seed=3, sampler=sampler)
    )
    assert result.outside, f"{sampler.__name__} stayed inside the consistent worlds: {result}"


def test_the_old_redeal_puts_a_foot_among_face_down_numbers(after_a_draw_with_a_foot):
    env, worlds = after_a_draw_with_a_foot
    broken = resampled_worlds(env, "player_1", 400, seed=4, sampler=_feet_pooled_with_numbers)
    result = compare_worlds(worlds, broken)
    assert result.outside and result.p_value < ALPHA, result


def test_a_redeal_of_the_deck_alone_has_the_wrong_distribution(in_the_second_round):
    env, worlds = in_the_second_round
    broken = compare_worlds(
        worlds, resampled_worlds(env, "player_0", sum(worlds.values()), seed=5, sampler=_hands_kept)
    )
    assert not broken.outside  # every world it makes is possible ...
    assert broken.p_value < ALPHA, broken  # ... but player_2 always keeps its true number


# ----- the public facts, at full size ---------------------------------------------------------


def test_after_a_bid_of_6_every_redeal_keeps_feet_face_up_and_counts():
    """The issue's case: player_0 wins a bid of 6 and player_1 passes; player_1 re-deals."""
    env = stacked(3, [5, F, 4, 3, 2, 1])
    apply_script(env, [6, PASS, PASS])
    game = env.game
    assert game.feet == [1, 0, 0] and len(game.numbers[0]) == 5
    apply_script(env, [2, PASS, PASS])  # player_1 starts the next phase and draws two
    mine = sorted(game.numbers[1])
    unseen = sorted([c for c in game.deck if c != F] + game.numbers[0] + game.numbers[2])
    feet_in_deck = game.deck.count(F)
    for seed in range(200):
        copy = env.clone()
        copy.resample_hidden("player_1", seed=seed)
        g = copy.game
        assert all(F not in hand for hand in g.numbers), "a foot among face-down numbers"
        assert g.deck.count(F) == feet_in_deck and g.feet == game.feet
        assert [len(h) for h in g.numbers] == [len(h) for h in game.numbers]
        assert sorted(g.numbers[1]) == mine
        assert sorted([c for c in g.deck if c != F] + g.numbers[0] + g.numbers[2]) == unseen
        assert g.scores == game.scores and g.bid == game.bid and g.to_act == game.to_act


def test_the_old_redeal_broke_the_feet_count_about_half_the_time():
    env = stacked(2, [5, F, 4, 3, 2, 1])
    apply_script(env, [6, PASS])
    feet_moved = 0
    for seed in range(400):
        copy = env.clone()
        _feet_pooled_with_numbers(copy, "player_1", seed)
        feet_moved += F in copy.game.numbers[0]
    # 5 face-down slots dealt from 50 numbers and 9 feet: P(no foot) = C(50,5) / C(59,5), about 0.42.
    assert 0.5 < feet_moved / 400 < 0.7


def test_a_finished_game_holds_no_face_down_card_the_tally_revealed():
    """The last tally shows each player's sum; the table is cleared after it, so nothing is left
    to re-deal but the order of a fresh deck."""
    env = stacked(2, [5, 5, 4, F, F])
    env.game.scores = [40, 0]
    apply_script(env, [3, PASS])  # player_0: 5 5 4 -> 14 in hand
    apply_script(env, [2, PASS])  # player_1: F F -> busts, the round ends: 54 to 0
    game = env.game
    assert game.terminal and game.scores == [54, 0] and game.last_tally == [14, 0]
    assert game.numbers == [[], []] and game.feet == [0, 0]
    assert sorted(game.deck) == sorted(full_deck(ChickenOptions()))
    copy = env.clone()
    copy.resample_hidden("player_1", seed=0)
    state, other = game.state_dict(), copy.game.state_dict()
    assert sorted(other.pop("deck")) == sorted(state.pop("deck")) and other == state


def test_the_order_of_face_down_cards_is_no_part_of_the_state():
    env = stacked(2, [5, 1, 3])
    apply_script(env, [3, PASS])
    copy = env.clone()
    copy.game.numbers[0].reverse()
    assert copy.game.state_dict() == env.game.state_dict()


def test_the_view_is_unchanged_by_a_redeal_of_what_the_player_cannot_see():
    env = stacked(3, [5, F, 4, 2, 2])
    apply_script(env, [3, PASS, PASS, 2, PASS, PASS])
    for viewer in env.possible_agents:
        for seed in range(20):
            copy = env.clone()
            copy.resample_hidden(viewer, seed=seed)
            assert copy.view(viewer) == env.view(viewer)
