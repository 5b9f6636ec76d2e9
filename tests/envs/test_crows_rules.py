"""Murder, She Crows rule tests: stacked decks, transcripts of moves, the expected table after."""

from __future__ import annotations

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs import murder_she_crows_v1
from fowlplay.envs.core import best_players, win_rewards
from fowlplay.envs.core.agents import RandomAgent
from fowlplay.envs.core.testing import apply_script
from fowlplay.envs.crows import BaselineAgent, CrowsGame, CrowsOptions
from fowlplay.envs.crows.observation import CrowsObserver
from fowlplay.envs.crows.rules import Decision, coins_passed, fits_run, fits_set, murder_steps


def game_with(n=2, deck=(), **table) -> CrowsGame:
    """A game whose deck reveals `deck` in order and whose table is laid out by `table`."""
    return CrowsGame.stacked(CrowsOptions(num_players=n), list(deck), **table)


def env_with(n=2, deck=(), **table):
    """An AEC env playing a stacked game (swapped in right after reset)."""
    env = murder_she_crows_v1.env(num_players=n)
    env.reset(seed=0)
    env.game = CrowsGame.stacked(env.options, list(deck), rng=env.game.rng, **table)
    env._mask = None
    env.agent_selection = env.possible_agents[env.game.current_player]
    return env


def aid(game, block: str, card: int | None = None) -> int:
    """The action id of a block (and a card value, for card blocks)."""
    return game.layout[block].start + (card - 1 if card else 0)


def do(game: CrowsGame, block: str, card: int | None = None) -> None:
    """Apply one action by name, checking that it is legal."""
    action = aid(game, block, card)
    legal = [game.action_name(a) for a in game.legal_actions()]
    assert game.legal_mask()[action], f"{game.action_name(action)} not legal in {game.decision()}: {legal}"
    game.apply(action)


def legal_names(game: CrowsGame) -> set[str]:
    return {game.action_name(a) for a in game.legal_actions()}


def discard_counts(game: CrowsGame) -> dict[int, int]:
    return {v: k for v, k in enumerate(game.discard) if k}


# ----- pure functions ----------------------------------------------------------------------------
def test_run_takes_a_card_at_either_end_only():
    assert fits_run([], 4)
    assert fits_run([3, 4], 2) and fits_run([3, 4], 5)
    assert not fits_run([3, 4], 3) and not fits_run([3, 4], 6) and not fits_run([3, 4], 1)


def test_set_takes_only_its_value():
    assert fits_set([], 1)
    assert fits_set([5, 5], 5)
    assert not fits_set([5, 5], 4)


@pytest.mark.parametrize(
    ("cards", "steps"),
    [
        ([1, 1, 1], 1),
        ([1, 2, 3], 2),
        ([5, 5, 5], 3),
        ([4, 5, 6], 3),
        ([6, 6, 6], 4),
        ([6] * 5, 6),
        ([2, 2, 2], 2),
    ],
)
def test_a_murder_rounds_its_prestige_up_to_a_multiple_of_five(cards, steps):
    assert murder_steps(cards, 5) == steps


def test_coins_reached_or_passed():
    spaces = (5, 10, 15, 20, 25)
    assert coins_passed(3, 7, spaces) == 1
    assert coins_passed(4, 5, spaces) == 1  # landing on a coin counts
    assert coins_passed(5, 9, spaces) == 0  # leaving one does not
    assert coins_passed(4, 10, spaces) == 2
    assert coins_passed(24, 36, spaces) == 1


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="coin_spaces"):
        CrowsOptions(coin_spaces=(5, 40)).validate()
    with pytest.raises(ValueError, match="reward_mode"):
        CrowsOptions(reward_mode="points").validate()


# ----- the two cards revealed at the start of a turn ------------------------------------------------
def test_keep_one_of_two_cards_into_a_pile_of_my_choice_and_discard_the_other():
    game = game_with(deck=[4, 2, 5, 5])
    assert game.decision() == "keep" and game.revealed == [4, 2]
    assert legal_names(game) == {"keep 4 in RUN", "keep 4 in SET", "keep 2 in RUN", "keep 2 in SET"}
    do(game, "keep_set", 4)
    assert game.sets[0] == [4] and game.runs[0] == []
    assert discard_counts(game) == {2: 1}
    assert game.decision() == "press" and game.prov_set == 0  # the kept card is safe


def test_only_a_card_that_fits_may_be_kept():
    game = game_with(deck=[1, 2, 5], runs=[[3, 4], []], sets=[[6], []])
    assert legal_names(game) == {"keep 2 in RUN", "discard RUN", "discard SET"}


def test_both_cards_are_discarded_when_neither_fits():
    game = game_with(deck=[1, 1, 5], runs=[[3, 4], []], sets=[[6], []])
    assert legal_names(game) == {"discard both", "discard RUN", "discard SET"}
    do(game, "discard_both")
    assert discard_counts(game) == {1: 2}
    assert game.runs[0] == [3, 4] and game.sets[0] == [6]
    assert game.decision() == "press"


def test_discarding_a_pile_first_makes_room_for_a_revealed_card():
    game = game_with(deck=[1, 1, 5], runs=[[3, 4], []], sets=[[6], []])
    do(game, "discard_set")
    # no more 'discard both'; and a second pile discard would exceed the one allowed per turn
    assert legal_names(game) == {"keep 1 in SET"}
    do(game, "keep_set", 1)
    assert game.sets[0] == [1] and discard_counts(game) == {1: 1, 6: 1}


def test_one_pile_discard_per_turn_so_a_turn_cannot_go_on_forever_house_rule():
    # Without the limit, emptying a pile before each reveal makes every card fit.
    game = game_with(deck=[3, 5, 1, 2, 6, 6], runs=[[4], []], sets=[[6], []])
    do(game, "keep_run", 3)
    do(game, "discard_set")
    assert "discard RUN" not in legal_names(game) and game.pile_discards == 1
    do(game, "stop")
    assert game.turn_player == 1 and "discard RUN" not in legal_names(game)  # player_1 has no piles
    do(game, "keep_run", 1)
    assert "discard RUN" in legal_names(game)  # a new turn, a new discard
    relaxed = CrowsGame.stacked(
        CrowsOptions(pile_discards_per_turn=2), [3, 5, 1], runs=[[4], []], sets=[[6], []]
    )
    do(relaxed, "discard_set")
    assert "discard RUN" in legal_names(relaxed)


def test_transcript_of_the_riskless_loop_that_the_discard_limit_forbids():
    # RUN 4-5, SET 6; the turn opens with 6 and 1.
    table = {"runs": [[4, 5], []], "sets": [[6], []]}
    limited = game_with(deck=[6, 1, 1, 3, 5, 5], **table)
    lifted = CrowsGame.stacked(CrowsOptions(pile_discards_per_turn=10**6), [6, 1, 1, 3, 5, 5], **table)
    for game in (limited, lifted):
        do(game, "keep_set", 6)
        do(game, "discard_set")  # an empty SET takes any card: the next reveal cannot bust
        do(game, "reveal")  # 1 fits only the empty SET
        assert game.runs[0] == [4, 5] and game.sets[0] == [1]
    # With the limit, the next reveal is a gamble (it busts unless it is a 1, a 3 or a 6).
    assert legal_names(limited) == {"reveal", "stop"}
    # Without it, the SET is emptied again and the 3 joins the RUN, which is scored.
    do(lifted, "discard_set")
    do(lifted, "reveal")
    assert lifted.decision() == "place" and lifted.pending == 3
    do(lifted, "place_run")
    do(lifted, "score_run")  # 3 + 4 + 5 = 12, rounded up to 15: three spaces
    assert lifted.track == [3, 0] and lifted.runs[0] == [] and lifted.sets[0] == []
    assert discard_counts(lifted) == {1: 2, 3: 1, 4: 1, 5: 1, 6: 2}


def _riskless_turn(game: CrowsGame) -> dict[str, int]:
    """Play player_0's turn keeping one pile empty before every reveal, so that no reveal can bust.

    Scores every murder, skips coins, puts a card that fits both piles on the one that is not empty
    and, when a card had to go on the empty pile, discards the smaller pile. Returns at the end of
    the track (before stopping), or when the discard it needs is not allowed.
    """
    took = {"reveals": 0, "pile discards": 0, "murders": 0}
    while game.turn_player == 0 and not game.over:
        legal, run, set_ = legal_names(game), game.runs[0], game.sets[0]
        if "score RUN" in legal or "score SET" in legal:
            do(game, "score_run" if "score RUN" in legal else "score_set")
            took["murders"] += 1
        elif game.kind == Decision.KEEP:
            game.apply(game.legal_actions()[0])  # the turn's start: both piles are empty
        elif game.kind == Decision.COIN:
            do(game, "coin_skip")
        elif game.kind == Decision.PLACE:
            do(game, "place_run" if run else "place_set")
        elif game.track[0] >= game.options.track_length:
            return took  # the end of the track, still in the first turn
        elif run and set_:
            block = "discard_run" if len(run) < len(set_) else "discard_set"
            if not game.legal_mask()[aid(game, block)]:
                return took
            do(game, block)
            took["pile discards"] += 1
        else:
            do(game, "reveal")
            took["reveals"] += 1
            assert not game.available and game.turn_player == 0, "a reveal with an empty pile busted"
    return took


@pytest.mark.parametrize("seed", range(4))
def test_without_the_discard_limit_a_riskless_first_turn_reaches_the_end_of_the_track(seed):
    # Why the house limit overrides the designer's "at any time": lifted, every reveal is safe.
    game = CrowsGame(CrowsOptions(pile_discards_per_turn=10**6), np.random.default_rng(seed))
    took = _riskless_turn(game)
    assert game.track == [30, 0] and game.turns == 0 and game.turn_player == 0
    assert took["pile discards"] > 1 and took["murders"] >= 8
    do(game, "stop")
    assert game.turn_player == 1 and game.track == [30, 0]
    # With the limit, the same play is stopped at its second pile discard.
    game = CrowsGame(CrowsOptions(), np.random.default_rng(seed))
    took = _riskless_turn(game)
    assert took["pile discards"] == 1 and game.track[0] < 30 and game.turn_player == 0
    assert game.runs[0] and game.sets[0] and not legal_names(game) & {"discard RUN", "discard SET"}


# ----- pressing on, stopping, busting and claims -----------------------------------------------------
def test_revealed_cards_are_provisional_until_stop():
    game = game_with(deck=[3, 1, 4, 6, 5, 5], sets=[[6], []])
    do(game, "keep_run", 3)
    do(game, "reveal")  # 4 extends the RUN
    do(game, "reveal")  # 6 joins the SET
    assert game.runs[0] == [3, 4] and game.sets[0] == [6, 6]
    assert game.prov_run == [4] and game.prov_set == 1
    do(game, "stop")
    assert game.runs[0] == [3, 4] and game.sets[0] == [6, 6]
    assert game.turn_player == 1 and game.prov_run == [] and game.prov_set == 0


def test_a_card_that_fits_both_piles_asks_where_it_goes():
    game = game_with(deck=[3, 1, 4, 5, 5], sets=[[4], []])
    do(game, "keep_run", 3)
    do(game, "reveal")  # 4 fits RUN [3] and SET [4]
    assert game.decision() == "place" and game.pending == 4
    assert {"place 4 in RUN", "place 4 in SET"} <= legal_names(game)
    do(game, "place_set")
    assert game.sets[0] == [4, 4] and game.prov_set == 1 and game.decision() == "press"


def test_bust_with_claims_in_reverse_turn_order():
    # player_0 busts; player_3 then player_2 then player_1 may claim; player_2 cannot use any card.
    env = env_with(
        n=4,
        deck=[3, 1, 4, 6, 1, 5, 5],
        runs=[[], [2, 3], [6], [5]],
        sets=[[6], [4], [3], [2, 2]],
    )
    game = env.game
    layout = game.layout
    order = []

    def step(block, card=None):
        order.append(env.agent_selection)
        apply_script(env, [aid(game, block, card)])

    step("keep_run", 3)
    step("reveal")  # 4: RUN 3-4 (provisional)
    step("reveal")  # 6: SET 6 6 (provisional)
    step("reveal")  # 1 fits neither: bust
    assert game.available == [4, 6, 1]
    assert game.runs[0] == [3] and game.sets[0] == [6]  # the kept card stays, provisional ones go
    assert env.agent_selection == "player_3" and env.decision() == "claim"
    mask = env.observe("player_3")["action_mask"]
    assert np.flatnonzero(mask).tolist() == sorted(
        [aid(game, "claim_run", 4), aid(game, "claim_run", 6), layout["claim_pass"].start]
    )
    assert not env.observe("player_0")["action_mask"].any()  # a bust cannot be prolonged
    step("claim_run", 6)
    # player_2 (RUN 6, SET 3) can use neither 4 nor 1 and is passed over.
    assert env.agent_selection == "player_1"
    step("claim_set", 4)
    assert order == ["player_0"] * 4 + ["player_3", "player_1"]
    assert game.runs[3] == [5, 6] and game.sets[1] == [4, 4]
    assert discard_counts(game) == {1: 2}  # the first reveal's 1 and the unclaimed 1
    # the claims are over: player_1's own turn starts with its two cards
    assert env.agent_selection == "player_1" and env.decision() == "keep" and game.revealed == [5, 5]
    assert game.turn_player == 1


def test_a_player_may_pass_instead_of_claiming_and_the_rest_is_discarded():
    game = game_with(n=3, deck=[3, 1, 2, 3, 5, 5], runs=[[4, 5], [], []], sets=[[6], [6], [2]])
    do(game, "keep_run", 3)
    do(game, "reveal")  # 2: RUN 2-5
    do(game, "reveal")  # 3 fits neither: bust
    assert game.available == [2, 3] and game.runs[0] == [3, 4, 5]
    assert game.current_player == 2  # to player_0's right first
    do(game, "claim_pass")
    assert game.current_player == 1
    do(game, "claim_run", 3)
    assert game.runs[1] == [3] and game.runs[2] == []
    assert discard_counts(game) == {1: 1, 2: 1}
    assert game.turn_player == 1 and game.decision() == "keep"


# ----- scoring, coins and discarding piles --------------------------------------------------------
def test_scoring_a_murder_across_one_coin():
    game = game_with(deck=[6, 2, 5, 5], sets=[[6, 6], []], track=[3, 0])
    assert "score SET" not in legal_names(game)  # two cards are not a murder yet
    do(game, "keep_set", 6)
    do(game, "score_set")  # 18 rounds up to 20: four spaces, 3 -> 7 passes the coin on 5
    assert game.track == [7, 0] and game.sets[0] == []
    assert discard_counts(game) == {2: 1, 6: 3}
    assert game.decision() == "coin"
    assert legal_names(game) == {
        "coin: take 2 into RUN",
        "coin: take 6 into RUN",
        "coin: take 2 into SET",
        "coin: take 6 into SET",
        "coin skip",
    }
    do(game, "coin_set", 6)
    assert game.sets[0] == [6] and game.prov_set == 1 and discard_counts(game) == {2: 1, 6: 2}
    assert game.decision() == "press" and game.coins == 0


def test_scoring_a_murder_across_two_coins():
    game = game_with(deck=[6, 5, 3, 3], sets=[[6, 6, 6, 6], []], track=[4, 0])
    do(game, "keep_set", 6)
    do(game, "score_set")  # five sixes: 30, six spaces, 4 -> 10 passes the coins on 5 and 10
    assert game.track[0] == 10 and game.coins == 2
    do(game, "coin_run", 6)
    assert game.decision() == "coin"
    assert "coin: take 6 into RUN" not in legal_names(game)  # RUN is now 6: it takes only a 5
    do(game, "coin_run", 5)
    assert game.runs[0] == [5, 6] and game.decision() == "press"
    do(game, "stop")
    assert game.runs[0] == [5, 6] and discard_counts(game) == {6: 4}


def test_a_coin_may_be_skipped():
    game = game_with(deck=[6, 2, 5, 5], sets=[[6, 6], []], track=[3, 0])
    do(game, "keep_set", 6)
    do(game, "score_set")
    do(game, "coin_skip")
    assert game.coins == 0 and game.runs[0] == [] and game.sets[0] == []


def test_scoring_banks_provisional_cards_and_a_later_bust_loses_only_the_new_ones():
    game = game_with(deck=[2, 5, 2, 2, 5, 1, 4, 4], sets=[[2], []])
    do(game, "keep_set", 2)
    do(game, "reveal")  # 2 fits the empty RUN and the SET
    do(game, "place_set")
    assert game.sets[0] == [2, 2, 2] and game.prov_set == 1
    do(game, "score_set")  # 6 rounds up to 10: two spaces
    assert game.track[0] == 2 and game.prov_set == 0
    do(game, "reveal")  # 2 again fits both empty piles
    do(game, "place_set")
    do(game, "reveal")  # 5 goes to the empty RUN
    assert game.runs[0] == [5] and game.prov_run == [5]
    do(game, "reveal")  # 1 fits neither: bust
    assert game.runs[0] == [] and game.sets[0] == [] and game.track[0] == 2
    assert game.current_player == 1 and game.available == [5, 2, 1]


def test_discarding_a_pile_takes_its_provisional_cards_too_and_scores_nothing():
    game = game_with(deck=[3, 6, 4, 6, 5, 5], runs=[[1, 2], []], sets=[[4], []], track=[5, 0])
    do(game, "keep_run", 3)
    assert "score RUN" in legal_names(game)
    do(game, "reveal")  # 4 fits RUN 1-3 and SET 4
    do(game, "place_set")
    do(game, "discard_set")
    assert game.sets[0] == [] and game.prov_set == 0 and game.track[0] == 5
    assert discard_counts(game) == {4: 2, 6: 1}
    do(game, "reveal")  # 6 goes to the empty SET
    do(game, "stop")
    assert game.runs[0] == [1, 2, 3] and game.sets[0] == [6]


def test_scoring_or_discarding_is_open_at_every_own_decision_but_not_in_a_claim():
    game = game_with(n=3, deck=[3, 1, 4, 6, 1, 5, 5], runs=[[], [1, 2, 3], []], sets=[[6], [5, 5, 5], []])
    assert {"discard SET"} <= legal_names(game)  # keep
    do(game, "keep_run", 3)
    do(game, "reveal")
    do(game, "reveal")
    do(game, "reveal")  # bust on 1
    assert game.current_player == 2 and game.decision() == "claim"
    do(game, "claim_pass")
    assert game.current_player == 1 and game.decision() == "claim"
    names = legal_names(game)
    assert not any(name.startswith(("score", "discard")) for name in names)  # claims are out of turn


# ----- the deck ------------------------------------------------------------------------------------
def test_an_empty_deck_is_replaced_by_the_shuffled_discard_pile_and_with_neither_one_must_stop():
    game = game_with(deck=[6, 6], sets=[[6, 6], []])
    do(game, "keep_set", 6)  # the other 6 is discarded; the deck is now empty
    assert game.deck == [] and discard_counts(game) == {6: 1}
    do(game, "reveal")  # the discard pile becomes the deck
    assert game.reshuffles == 1 and discard_counts(game) == {}
    do(game, "place_set")
    assert game.deck == [] and game.sets[0] == [6, 6, 6, 6]
    assert legal_names(game) == {"stop", "score SET", "discard SET"}  # nothing left to reveal
    do(game, "score_set")  # 24 rounds up to 25: five spaces, onto the coin on 5
    do(game, "coin_skip")
    assert "reveal" in legal_names(game)  # the murder refilled the discard pile


def test_the_deck_order_is_never_observed():
    observer = CrowsObserver(CrowsOptions(num_players=3))
    a = game_with(n=3, deck=[3, 1, 4, 6, 1, 5, 2, 6], sets=[[6], [], []])
    b = game_with(n=3, deck=[3, 1, 6, 2, 5, 1, 6, 4], sets=[[6], [], []])
    for player in range(3):
        assert np.array_equal(observer.encode(a, player), observer.encode(b, player))


# ----- the end of the game ---------------------------------------------------------------------------
def test_the_round_is_finished_after_someone_reaches_the_end_of_the_track_and_ties_share():
    env = env_with(
        n=3,
        deck=[6, 1, 6, 1, 2, 2],
        runs=[[], [4, 5], []],
        sets=[[6, 6], [], [3]],
        track=[28, 29, 10],
    )
    game = env.game
    apply_script(env, [aid(game, "keep_set", 6), aid(game, "score_set")])  # 18 -> 4 spaces
    assert game.track[0] == 30  # the track ends at 30
    apply_script(env, [aid(game, "stop")])
    assert not game.over and env.agent_selection == "player_1"  # everyone gets the same turns
    apply_script(env, [aid(game, "keep_run", 6), aid(game, "score_run"), aid(game, "stop")])
    assert game.track[1] == 30 and env.agent_selection == "player_2"
    apply_script(env, [aid(game, "keep_run", 2), aid(game, "stop")])
    assert game.terminal
    assert env.rewards == pytest.approx({"player_0": 0.25, "player_1": 0.25, "player_2": -0.5})
    assert all(env.terminations.values()) and not any(env.truncations.values())


def test_reaching_the_end_in_the_last_turn_of_a_round_ends_the_game_at_once():
    env = env_with(n=2, deck=[2, 2, 6, 1, 4, 4], sets=[[], [6, 6]], track=[12, 27])
    game = env.game
    apply_script(env, [aid(game, "keep_set", 2), aid(game, "stop")])
    assert env.agent_selection == "player_1"
    apply_script(env, [aid(game, "keep_set", 6), aid(game, "score_set"), aid(game, "stop")])
    assert game.terminal and game.turns == 2
    assert env.rewards == {"player_0": -1.0, "player_1": 1.0}


def _play_to_the_cap(env):
    """Stop at once every turn (else the first legal action) until the game ends; each seat's ending."""
    env.reset(seed=0)
    stop = env.game.layout["stop"].start
    endings = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        if term or trunc:
            endings[agent] = (reward, term, trunc)
            env.step(None)
            continue
        mask = obs["action_mask"]
        env.step(stop if mask[stop] else int(np.argmax(mask)))
    return endings


def test_the_turn_cap_ends_the_game_by_the_track():
    env = murder_she_crows_v1.env(max_turns=3)
    endings = _play_to_the_cap(env)
    assert env.game.terminal and not env.game.truncated and env.game.turns == 3
    track = env.game.track
    expected = win_rewards(best_players(track), 2)
    assert endings == {f"player_{p}": (expected[p], True, False) for p in range(2)}
    assert "cap: standings" in env.game.render()


def test_cap_ending_draw_truncates_with_zero_rewards_as_v0_did():
    env = murder_she_crows_v1.env(max_turns=3, cap_ending="draw")
    endings = _play_to_the_cap(env)
    assert env.game.truncated and env.game.turns == 3
    assert endings == {"player_0": (0.0, False, True), "player_1": (0.0, False, True)}
    with pytest.warns(DeprecationWarning, match="murder_she_crows_v0 is deprecated"):
        old = envs.make("murder_she_crows_v0", max_turns=3)
    assert old.options.cap_ending == "draw"


# ----- the baseline ----------------------------------------------------------------------------------
def _baseline_results(num_players: int, games: int) -> list[float]:
    env = murder_she_crows_v1.env(num_players=num_players)
    baseline = BaselineAgent(env.options)
    results = []
    for g in range(games):
        seat = g % num_players  # rotate the baseline's seat
        agents = {
            a: baseline if i == seat else RandomAgent(seed=1000 * g + i)
            for i, a in enumerate(env.possible_agents)
        }
        env.reset(seed=g)
        total = dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            total[agent] += reward
            env.step(None if term or trunc else agents[agent].act(obs["observation"], obs["action_mask"]))
        results.append(total[env.possible_agents[seat]])
    return results


def test_the_baseline_beats_uniform_random_play_clearly():
    results = _baseline_results(2, 200)
    win_rate = sum(r > 0 for r in results) / len(results)
    assert win_rate >= 0.9, win_rate  # random play would win about half


def test_the_baseline_beats_three_random_players():
    results = _baseline_results(4, 100)
    win_rate = sum(r > 0 for r in results) / len(results)
    assert win_rate >= 0.75, win_rate  # a random seat would win about a quarter


# ----- invariants over whole games -----------------------------------------------------------------
def assert_table_is_consistent(game: CrowsGame) -> None:
    """Every card is in exactly one place, RUNs are consecutive, SETs hold one value."""
    opts = game.options
    places = [*game.deck, *game.revealed, *game.available, *([game.pending] if game.pending else [])]
    places += [v for v, k in enumerate(game.discard) for _ in range(k)]
    for p in range(game.num_players):
        run, set_ = game.runs[p], game.sets[p]
        assert run == list(range(run[0], run[0] + len(run))) if run else True, run
        assert len(set(set_)) <= 1, set_
        places += run + set_
    assert sorted(places) == _full(opts)
    assert game.deck_counts == [game.deck.count(v) for v in range(opts.max_value + 1)]
    turn_run = game.runs[game.turn_player]
    assert set(game.prov_run) <= set(turn_run)
    assert game.prov_set <= len(game.sets[game.turn_player])
    if game.kind == Decision.CLAIM:
        assert game.current_player != game.turn_player and game.available
    else:
        assert game.current_player == game.turn_player


def _full(opts: CrowsOptions) -> list[int]:
    return [v for v in range(1, opts.max_value + 1) for _ in range(opts.copies_per_value)]


@pytest.mark.parametrize("num_players", [2, 5])
def test_cards_are_conserved_through_random_and_baseline_games(num_players):
    env = murder_she_crows_v1.env(num_players=num_players)
    baseline = BaselineAgent(env.options)
    for g in range(6):
        random_agent = RandomAgent(seed=g)
        env.reset(seed=g)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            assert_table_is_consistent(env.game)
            chooser = baseline if (g + env.possible_agents.index(agent)) % 2 else random_agent
            env.step(chooser.act(obs["observation"], obs["action_mask"]))
        assert env.game.over
