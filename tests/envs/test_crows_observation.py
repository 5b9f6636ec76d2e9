"""Murder, She Crows observation pieces and text view, as transcripts: a stacked table, some moves,
what each player sees."""

from __future__ import annotations

import numpy as np
from fowlplay.envs.crows import CrowsGame, CrowsOptions
from fowlplay.envs.crows.observation import CrowsObserver

from tests.envs.test_crows_rules import do, game_with


def seen(game: CrowsGame, player: int) -> dict[str, np.ndarray]:
    """`player`'s observation of `game`, split into its named pieces."""
    observer = CrowsObserver(game.options)
    return observer.decode(observer.encode(game, player))


def one_hot_index(values: np.ndarray) -> int:
    assert values.sum() == 1.0, values
    return int(np.argmax(values))


# ----- observation pieces ----------------------------------------------------------------------------
def test_last_seat_tells_everyone_how_many_turns_the_final_round_has_left():
    game = game_with(n=3, deck=[6, 1, 2, 2, 3, 3], sets=[[6, 6], [], []], track=[28, 0, 0])
    # Before anyone reaches the end: the round closes after player_2's turn, whoever looks.
    assert [one_hot_index(seen(game, p)["last_seat"]) for p in range(3)] == [2, 1, 0]
    assert not any(seen(game, p)["final_round"][0] for p in range(3))
    do(game, "keep_set", 6)
    do(game, "score_set")  # 18 -> 4 spaces: 28 -> 30, the end of the track
    do(game, "stop")
    # player_1's turn. player_1 sees: final round, my turn, one more turn (player_2's) after it.
    mine = seen(game, 1)
    assert mine["final_round"][0] == 1.0
    assert one_hot_index(mine["turn_seat"]) == 0 and one_hot_index(mine["last_seat"]) == 1
    # player_2 sees that its own turn will be the game's last.
    assert one_hot_index(seen(game, 2)["last_seat"]) == 0
    do(game, "keep_run", 2)
    do(game, "stop")
    assert one_hot_index(seen(game, 2)["turn_seat"]) == one_hot_index(seen(game, 2)["last_seat"]) == 0
    do(game, "keep_run", 3)
    do(game, "stop")
    assert game.terminal and game.turns == 3


def test_pile_discards_left_counts_down_through_the_turn():
    options = CrowsOptions(pile_discards_per_turn=2)
    game = CrowsGame.stacked(options, [1, 1, 5, 5, 2, 2], runs=[[3, 4], []], sets=[[6], []])
    assert seen(game, 0)["pile_discards_left"][0] == 1.0
    do(game, "discard_set")
    assert seen(game, 0)["pile_discards_left"][0] == 0.5
    assert seen(game, 1)["pile_discards_left"][0] == 0.5  # the turn player's, whoever looks
    do(game, "keep_set", 1)
    do(game, "discard_run")
    assert seen(game, 0)["pile_discards_left"][0] == 0.0
    do(game, "stop")
    assert game.turn_player == 1 and seen(game, 0)["pile_discards_left"][0] == 1.0  # a new turn


def test_decision_progress_counts_every_decision_towards_the_safety_cap():
    options = CrowsOptions(max_decisions=40)
    game = CrowsGame.stacked(options, [3, 5, 4, 6, 2, 1], sets=[[6], []])
    assert seen(game, 1)["decision_progress"][0] == 0.0
    do(game, "keep_run", 3)
    do(game, "reveal")
    do(game, "reveal")
    assert seen(game, 1)["decision_progress"][0] == np.float32(3 / 40)
    assert seen(game, 0)["turn_progress"][0] == 0.0  # still the first turn


# ----- the text view ---------------------------------------------------------------------------------
def table() -> CrowsGame:
    return game_with(
        n=3,
        deck=[3, 5, 4, 6, 1, 1, 1],
        runs=[[], [1, 2], [5]],
        sets=[[6], [4, 4, 4], []],
        discard=[1, 1, 2],
        track=[12, 28, 3],
    )


def test_the_view_is_the_table_as_one_player_sees_it():
    game = table()
    do(game, "keep_run", 3)
    do(game, "reveal")  # 4 joins the RUN
    do(game, "reveal")  # 6 joins the SET
    assert CrowsObserver(game.options).view(game, 1) == "\n".join(
        [
            "Murder, She Crows - you are player_1; turn 1 (at most 200)",
            "A round ends after player_2's turn; the game ends with the round in which",
            "  someone reaches space 30 of the track.",
            "Deck: 3 cards, order unknown: 1x3",
            "Discard pile (face up): 4 cards: 1x2 2x1 5x1",
            "Track: spaces 0..30, coins on 5 10 15 20 25",
            "  you (player_1): track 28  RUN [1 2]  SET [4 4 4]",
            "  player_2: track 3  RUN [5]  SET [-]",
            "  player_0: track 12  RUN [3 4*]  SET [6 6*]  <- turn",
            "Deciding: player_0 (press)",
            "Pile discards player_0 has left this turn: 1",
            "(* = provisional: lost if player_0 busts)",
            "Last: player_0 reveals 6",
        ]
    )


def test_the_view_shows_the_cards_waiting_for_a_decision_and_the_final_round():
    game = table()
    view = CrowsObserver(game.options).view(game, 2)
    assert "Revealed, one to keep if it fits: 3 5" in view and "you (player_2)" in view
    do(game, "keep_run", 3)
    do(game, "reveal")
    do(game, "reveal")
    do(game, "reveal")  # 1 fits neither the RUN 3-4 nor the SET 6 6: a bust
    view = CrowsObserver(game.options).view(game, 2)
    assert "Open to claims after player_0's bust: 1 4 6" in view and "Deciding: you (claim)" in view
    do(game, "claim_run", 4)  # player_2's RUN 5 takes the 4; player_1 can use neither 1 nor 6
    do(game, "discard_both")  # player_1 opens with 1 and 1
    do(game, "score_set")  # 12 -> 3 spaces: 28 -> 30
    assert "Final round: the game ends after player_2's turn." in CrowsObserver(game.options).view(game, 0)


def test_the_view_never_shows_the_deck_order():
    observer = CrowsObserver(CrowsOptions(num_players=3))
    a = game_with(n=3, deck=[3, 1, 4, 6, 1, 5, 2, 6], sets=[[6], [], []])
    b = game_with(n=3, deck=[3, 1, 6, 2, 5, 1, 6, 4], sets=[[6], [], []])
    for player in range(3):
        assert observer.view(a, player) == observer.view(b, player)
        assert "1x1 2x1 4x1 5x1 6x2" in observer.view(a, player)


def test_the_view_at_the_end_of_the_game():
    game = game_with(n=2, deck=[2, 2, 6, 1, 4, 4], sets=[[], [6, 6]], track=[12, 27])
    do(game, "keep_set", 2)
    do(game, "stop")
    do(game, "keep_set", 6)
    do(game, "score_set")
    do(game, "stop")
    view = CrowsObserver(game.options).view(game, 0)
    assert "Game over: track [12, 30]" in view and "Deciding" not in view
