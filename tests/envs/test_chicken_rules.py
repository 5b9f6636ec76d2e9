"""Chicken rules as transcripts: a stacked deck, a sequence of bids, the expected table and scores."""

from __future__ import annotations

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.chicken.rules import FOOT, ChickenGame, ChickenOptions, round_points
from fowlplay.envs.core.testing import apply_script

PASS = 0
F = FOOT


def table(num_players=2, deck=None, scores=None, **options):
    """A fresh env whose deck is stacked top-first with `deck`."""
    env = envs.make("chicken_v1", num_players=num_players, **options)
    env.reset(seed=0)
    if deck is not None:
        stack(env.game, deck)
    if scores is not None:
        env.game.scores = list(scores)
    return env


def stack(game: ChickenGame, top_first: list[int]) -> None:
    game.deck = list(reversed(top_first))


def stacked(num_players: int, top_first: list[int], **options):
    """A fresh env with the full deck, `top_first` moved to its top (the rest stays shuffled)."""
    env = envs.make("chicken_v1", num_players=num_players, **options)
    env.reset(seed=0)
    rest = list(env.game.deck)
    for card in top_first:
        rest.remove(card)
    env.game.deck = rest + list(reversed(top_first))
    return env


def test_round_points_follow_the_seed():
    assert round_points([5, 4, 1], feet=0, foot_bonus=10) == 10
    assert round_points([5, 4, 1], feet=1, foot_bonus=10) == 20
    assert round_points([5, 4, 1], feet=2, foot_bonus=10) == -10
    assert round_points([], feet=3, foot_bonus=10) == 0


def test_winning_bid_draws_that_many_cards_and_the_next_phase_starts_to_the_left():
    env = table(2, deck=[5, 4, F, 3, 3, 3, 3])
    apply_script(env, [3, PASS])  # player_0 bids 3, player_1 passes
    g = env.game
    assert g.numbers == [[5, 4], []] and g.feet == [1, 0]
    assert len(g.deck) == 4
    assert env.agent_selection == "player_1" and g.starter == 1
    assert g.bid == 0 and g.active == [True, True]


def test_outbidding_and_passing_in_three_players():
    env = table(3, deck=[1, 2, 3, 4, 5, 5, 5, 5])
    apply_script(env, [2])  # p0 bids 2
    assert env.agent_selection == "player_1"
    mask = env.observe("player_1")["action_mask"]
    assert mask[PASS] and not mask[1] and not mask[2] and mask[3]
    apply_script(env, [4, PASS])  # p1 bids 4, p2 passes
    assert env.agent_selection == "player_0"
    apply_script(env, [PASS])  # p0 passes: p1's bid of 4 stands
    g = env.game
    assert g.numbers[1] == [1, 2, 3, 4]
    assert env.agent_selection == "player_2"  # left of the bid winner starts the next phase


def test_a_passer_is_not_asked_again_in_the_same_phase():
    env = table(3, deck=[1] * 10)
    apply_script(env, [1, PASS, 2])  # p0 bids 1, p1 passes, p2 bids 2
    assert env.agent_selection == "player_0"  # p1 is skipped
    apply_script(env, [3])
    assert env.agent_selection == "player_2"
    apply_script(env, [PASS])  # every other player has passed after p0's 3
    assert env.game.numbers[0] == [1, 1, 1]


def test_everyone_passing_makes_the_starting_player_draw_one_house_rule():
    env = table(3, deck=[5, 1, 1])
    apply_script(env, [PASS, PASS, PASS])
    assert env.game.numbers[0] == [5]
    assert env.agent_selection == "player_1"


def test_bust_on_the_last_card_ends_the_round_and_tallies_everyone():
    env = table(2, deck=[3, 3, 2, F, F, 1, 1])
    apply_script(env, [2, PASS])  # p0 draws 3, 3
    apply_script(env, [3, PASS])  # p1 draws 2, F, F: the second foot is the last card of the bid
    g = env.game
    assert g.scores == [6, -2]
    assert g.round == 2
    assert g.feet == [0, 0] and g.numbers == [[], []]
    assert len(g.deck) == ChickenOptions().deck_size  # everything reshuffled
    assert env.agent_selection == "player_1"  # left of round 1's starting player (house rule)


def test_one_foot_scores_the_bonus_and_two_feet_subtract():
    env = table(3, deck=[5, F, 4, 4, F, F, 1])
    apply_script(env, [2, PASS, PASS])  # p0: 5, F
    apply_script(env, [1, PASS, PASS])  # p1 starts, bids 1: draws 4
    apply_script(env, [3, PASS, PASS])  # p2 starts, bids 3: 4, F, F -> bust
    assert env.game.scores == [15, 4, -4]


def test_bids_are_capped_by_cards_left_and_by_the_option():
    env = table(2, deck=[1, 2, 3])
    mask = env.observe("player_0")["action_mask"]
    assert mask.tolist() == [1, 1, 1, 1] + [0] * 12
    env = table(2, bid_cap=4)
    assert env.observe("player_0")["action_mask"].tolist() == [1, 1, 1, 1, 1]


def test_empty_deck_at_a_bid_phase_ends_the_round_house_rule():
    env = table(2, deck=[2, F, 3])
    apply_script(env, [3, PASS])  # p0 takes the last three cards: one foot, no bust
    g = env.game
    assert g.scores == [15, 0]
    assert g.round == 2 and len(g.deck) == ChickenOptions().deck_size
    assert env.agent_selection == "player_1"


def test_reaching_the_target_with_a_single_leader_ends_the_game():
    env = table(3, deck=[5, 5, F, F], scores=[45, 10, 20])
    apply_script(env, [2, PASS, PASS])  # p0: 5 5 -> 55
    apply_script(env, [2, PASS, PASS])  # p1: F F -> bust, round ends
    assert env.game.terminal and env.game.scores == [55, 10, 20]
    rewards = {}
    for agent in env.agent_iter():
        _, reward, terminated, _, _ = env.last()
        assert terminated
        rewards[agent] = reward
        env.step(None)
    assert rewards == {"player_0": 1.0, "player_1": -0.5, "player_2": -0.5}


def test_a_tie_for_the_lead_at_the_target_plays_another_round():
    env = table(2, deck=[5, 5, F, F], scores=[40, 50])
    apply_script(env, [2, PASS])  # p0 -> 50
    apply_script(env, [2, PASS])  # p1 busts with no numbers: 50 - 0 = 50
    g = env.game
    assert g.scores == [50, 50]
    assert not g.over and g.round == 2
    stack(g, [1, F, F])
    apply_script(env, [PASS, 3])  # round 2 is started by p1, who passes; p0 bids 3 and busts
    assert g.terminal and g.scores == [49, 50]
    assert g.returns() == [-1.0, 1.0]


def test_negative_scores_are_allowed():
    env = table(2, deck=[5, 5, F, F], scores=[0, 0])
    apply_script(env, [4, PASS])
    assert env.game.scores == [-10, 0]


def test_the_round_cap_ends_the_game_by_the_standings():
    # House (chicken_v1): player_0 busts to -1 in the only round, so player_1 leads 0 to -1 and wins.
    env = table(2, deck=[1, F, F], max_rounds=1)
    apply_script(env, [3, PASS])
    assert env.game.terminal and not env.game.truncated
    assert env.terminations == {"player_0": True, "player_1": True}
    assert env.truncations == {"player_0": False, "player_1": False}
    assert env.rewards == {"player_0": -1.0, "player_1": 1.0}
    assert "round cap: standings" in env.game.render()


def test_a_tie_at_the_round_cap_is_shared():
    env = table(3, deck=[1, F, F], scores=[5, 5, 2], max_rounds=1)
    apply_script(env, [3, PASS, PASS])  # player_0 busts: 4, 5, 2
    assert env.game.scores == [4, 5, 2]
    assert env.rewards == {"player_0": -0.5, "player_1": 1.0, "player_2": -0.5}


def test_cap_ending_draw_truncates_with_zero_rewards_as_chicken_v0_did():
    env = table(2, deck=[1, F, F], max_rounds=1, cap_ending="draw")
    apply_script(env, [3, PASS])
    assert env.game.truncated and not env.game.terminal
    assert env.truncations == {"player_0": True, "player_1": True}
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0}


def test_chicken_v0_is_the_old_rule_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match="chicken_v0 is deprecated: use chicken_v1"):
        env = envs.make("chicken_v0")
    assert env.metadata["name"] == "chicken_v0" and env.options.cap_ending == "draw"


def test_a_bad_cap_ending_is_refused():
    with pytest.raises(ValueError, match="cap_ending must be 'standings' or 'draw'; got 'tie'"):
        envs.make("chicken_v1", cap_ending="tie")


def test_an_illegal_bid_is_refused_and_the_table_is_unchanged():
    env = table(2, deck=[1, 2, 3, 4, 5])
    apply_script(env, [3])
    before = env.game.state_dict()
    with pytest.raises(
        envs.IllegalActionError, match=r"action 2 is not legal now.*player_1.*'bid'.*0 \(pass\)"
    ):
        env.step(2)
    assert env.game.state_dict() == before
    apply_script(env, [4])
    assert env.game.bid == 4


def test_other_players_numbers_are_face_down_but_counts_and_feet_are_public():
    env = table(2, deck=[5, 5, F, 1, 1, 1])
    apply_script(env, [3, PASS])
    mine = env.observer.decode(env.observe("player_0")["observation"])
    theirs = env.observer.decode(env.observe("player_1")["observation"])
    assert mine["my_numbers"][4] == pytest.approx(0.2)  # two 5s of ten
    assert theirs["my_numbers"].sum() == 0
    assert theirs["feet"][1] == pytest.approx(0.5)  # player_0 sits to player_1's left
    assert theirs["number_cards_held"][1] > 0
    assert theirs["feet_in_deck"][0] == pytest.approx(0.9)


def test_bad_options_say_what_is_allowed():
    with pytest.raises(ValueError, match="2-4 players"):
        envs.make("chicken_v1", num_players=5)
    with pytest.raises(ValueError, match="reward_mode"):
        envs.make("chicken_v1", reward_mode="points")
    with pytest.raises(ValueError, match="bid_cap"):
        envs.make("chicken_v1", bid_cap=0)


def test_score_reward_mode_is_zero_sum():
    env = table(2, deck=[5, 5, F, F], scores=[45, 10], reward_mode="score")
    apply_script(env, [2, PASS, 2, PASS])
    returns = env.game.returns()
    assert sum(returns) == pytest.approx(0.0) and returns[0] > 0


def test_engine_needs_no_rl_library():
    game = ChickenGame(ChickenOptions(), np.random.default_rng(0))
    assert game.legal_actions()[0] == PASS
