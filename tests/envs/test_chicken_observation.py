"""Chicken observation pieces and text view, as transcripts: a stacked deck, some bids, what each
player sees; and a check that one observation alone rebuilds every public fact."""

from __future__ import annotations

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.chicken import BaselineAgent, ChickenOptions
from fowlplay.envs.chicken.observation import ChickenObserver
from fowlplay.envs.chicken.rules import FOOT, ChickenGame
from fowlplay.envs.core.agents import RandomAgent
from fowlplay.envs.core.testing import apply_script

from tests.envs.test_chicken_rules import stacked

NAME = "chicken_v1"
PASS = 0
F = FOOT


def seen(env, agent: str) -> dict[str, np.ndarray]:
    """`agent`'s observation, split into its named pieces."""
    return env.observer.decode(env.observe(agent)["observation"])


def one_hot_index(values: np.ndarray) -> int:
    assert values.sum() == 1.0, values
    return int(np.argmax(values))


# ----- pieces -------------------------------------------------------------------------------------
def test_round_starter_stays_while_the_phase_starter_moves_on():
    env = stacked(3, [1, 2, F, F])
    apply_script(env, [2, PASS, PASS])  # player_0 starts round 1, draws 1 2
    # player_1 starts the next bid phase; the round is still player_0's.
    assert one_hot_index(seen(env, "player_1")["phase_starter"]) == 0
    assert one_hot_index(seen(env, "player_1")["round_starter"]) == 2  # player_0 sits to its right
    assert one_hot_index(seen(env, "player_0")["round_starter"]) == 0
    apply_script(env, [2, PASS, PASS])  # player_1 draws F F: the round ends
    assert env.game.round == 2
    # Round 2 is started by the player left of round 1's starter: player_1.
    assert one_hot_index(seen(env, "player_1")["round_starter"]) == 0
    assert one_hot_index(seen(env, "player_0")["round_starter"]) == 1
    assert one_hot_index(seen(env, "player_2")["round_starter"]) == 2


def test_acting_seat_is_relative_and_empty_once_the_game_is_over():
    env = stacked(3, [5, 5, F, F])
    env.game.scores = [45, 0, 0]
    assert [one_hot_index(seen(env, f"player_{p}")["acting_seat"]) for p in range(3)] == [0, 2, 1]
    apply_script(env, [2])  # player_0 bids 2: player_1 acts
    assert [one_hot_index(seen(env, f"player_{p}")["acting_seat"]) for p in range(3)] == [1, 0, 2]
    apply_script(env, [PASS, PASS])  # player_0 draws 5 5 (55 in hand)
    apply_script(env, [2, PASS, PASS])  # player_1 draws F F: the round ends, player_0 wins
    assert env.game.terminal
    assert not any(seen(env, f"player_{p}")["acting_seat"].any() for p in range(3))


def test_every_piece_has_finite_bounds_derived_from_the_options():
    observer = ChickenObserver(ChickenOptions())
    assert np.isfinite(observer.low).all() and np.isfinite(observer.high).all()
    bounds = {p.name: (p.low, p.high) for p in observer.pieces}
    # 150 points of number cards (10 x (1+...+5)) over a target of 50.
    assert bounds["my_round_points"] == (0.0, 3.0)
    # 100 rounds, each moving a score by at most -150 or +160 (150 + the foot bonus), over 50.
    assert bounds["scores"] == (-300.0, 320.0)
    small = ChickenObserver(ChickenOptions(max_value=2, copies_per_value=1, target=6, max_rounds=2))
    assert {p.name: (p.low, p.high) for p in small.pieces}["scores"] == (-1.0, 26 / 6)


def test_the_bounds_hold_at_the_extremes():
    game = ChickenGame(ChickenOptions(num_players=2, max_rounds=1), np.random.default_rng(0))
    game.numbers[0] = [card for card in game.deck if card != FOOT]  # every number card
    game.deck = [FOOT] * 10
    observer = ChickenObserver(game.options)
    parts = observer.decode(observer.encode(game, 0))
    assert parts["my_round_points"][0] == observer.high[observer.offsets["my_round_points"]][0]
    game.scores = [-150, 160]  # the worst and best one round can do
    vector = observer.encode(game, 0)
    assert (observer.low <= vector).all() and (vector <= observer.high).all()
    assert observer.decode(vector)["scores"].tolist() == pytest.approx([-3.0, 3.2])


def test_a_gymnasium_rescale_wrapper_accepts_the_observation_space():
    from gymnasium import spaces

    env = envs.make(NAME, num_players=4)
    box = env.observation_space("player_0")["observation"]
    assert isinstance(box, spaces.Box) and box.is_bounded("both")
    env.reset(seed=1)
    scaled = (env.observe("player_0")["observation"] - box.low) / (box.high - box.low)
    assert np.isfinite(scaled).all() and (scaled >= 0).all() and (scaled <= 1).all()


# ----- the observation holds every public fact ------------------------------------------------
def public_facts_from_observation(observation: np.ndarray, options: ChickenOptions) -> dict:
    """Rebuild the public state, in relative seats, from one player's observation vector alone."""
    parts = ChickenObserver(options).decode(observation)
    n = options.num_players

    def seat(piece: str) -> int:
        return int(np.argmax(parts[piece])) if parts[piece].any() else -1

    def whole(x, scale) -> int:
        return round(float(x) * scale)

    return {
        "to_act": seat("acting_seat"),
        "my_numbers": [whole(x, options.copies_per_value) for x in parts["my_numbers"]],
        "held": [whole(x, options.deck_size) for x in parts["number_cards_held"]],
        "feet": [whole(x, 2) for x in parts["feet"]],
        "scores": [whole(x, options.target) for x in parts["scores"]],
        "feet_in_deck": whole(parts["feet_in_deck"][0], options.feet),
        "deck_size": whole(parts["deck_size"][0], options.deck_size),
        "bid": whole(parts["current_bid"][0], options.bid_cap),
        "high_bidder": seat("high_bidder"),
        "active": [bool(x) for x in parts["still_bidding"]],
        "starter": seat("phase_starter"),
        "round_starter": seat("round_starter"),
        "round": whole(parts["round_progress"][0], options.max_rounds),
        "n": n,
    }


def public_facts_of(game: ChickenGame, player: int) -> dict:
    """The same facts read off the engine, in seats relative to `player`."""
    n = game.num_players

    def rel(seat: int) -> int:
        return (seat - player) % n if seat >= 0 else -1

    def seats(values: list) -> list:
        return [values[(player + i) % n] for i in range(n)]

    return {
        "to_act": rel(game.to_act),
        "my_numbers": [game.numbers[player].count(v) for v in range(1, game.options.max_value + 1)],
        "held": seats([len(ns) for ns in game.numbers]),
        "feet": seats(game.feet),
        "scores": seats(game.scores),
        "feet_in_deck": game.deck.count(FOOT),
        "deck_size": len(game.deck),
        "bid": game.bid,
        "high_bidder": rel(game.high_bidder),
        "active": seats(game.active),
        "starter": rel(game.starter),
        "round_starter": rel(game.round_starter),
        "round": game.round,
        "n": n,
    }


@pytest.mark.parametrize("num_players", [2, 4])
def test_the_observation_alone_rebuilds_the_public_state(num_players):
    # So an agent without memory misses nothing it may know. The rest of the state is hidden (the
    # others' numbers, the deck's order) or history of no consequence (the last round's tally).
    env = envs.make(NAME, num_players=num_players)
    agents = [BaselineAgent(env.options), RandomAgent(0)]
    for g in range(4):
        env.reset(seed=g)
        while not env.game.over:
            for p in range(num_players):
                facts = public_facts_from_observation(env.observe(f"player_{p}")["observation"], env.options)
                assert facts == public_facts_of(env.game, p)
            obs = env.observe(env.agent_selection)
            env.step(agents[g % 2].act(obs["observation"], obs["action_mask"]))
    assert env.game.round > 1


# ----- the text view ---------------------------------------------------------------------------
def test_the_view_shows_my_numbers_and_only_counts_of_the_others():
    env = stacked(3, [5, F, 4, 2, 2])
    apply_script(env, [3, PASS, PASS])  # player_0 draws 5, F, 4
    apply_script(env, [2, PASS, PASS])  # player_1 draws 2, 2
    mine = env.view("player_0")
    assert "player_0 (you): score 0, 1 foot, numbers [4 5] (sum 9)" in mine
    assert "player_1: score 0, 0 feet, 2 face-down numbers" in mine
    theirs = env.view("player_1")
    assert "player_0: score 0, 1 foot, 2 face-down numbers" in theirs
    assert "player_1 (you): score 0, 0 feet, numbers [2 2] (sum 4)" in theirs
    assert "deck: 55 cards, 9 of them chicken feet" in theirs
    assert "player_1 draws 2: 2 numbers, 0 feet" in theirs
    assert "waiting for player_2 to bid or pass" in theirs
    assert "your decision: pass or bid 1..15" in env.view("player_2")


def test_the_view_of_a_finished_game_shows_the_last_tally():
    env = stacked(2, [5, 5, 4, F, F])
    env.game.scores = [40, 0]
    apply_script(env, [3, PASS, 2, PASS])
    text = env.view("player_1")
    assert "last round's tally: player_0 +14, player_1 +0" in text
    assert text.splitlines()[-1] == "game over"
