"""The Chicken baseline: it values a round by how it will end, so it draws no more than it must; and
its frozen predecessor `BaselineAgentV0`, which always passing beats."""

from __future__ import annotations

import pytest
from fowlplay import envs
from fowlplay.envs.chicken import BaselineAgent, BaselineAgentV0
from fowlplay.envs.chicken.baseline import feet_law
from fowlplay.envs.core.agents import RandomAgent

PASS = 0


def play(env, agents, seed: int) -> None:
    """Play one game from `reset(seed)` with one agent per seat."""
    env.reset(seed=seed)
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
        else:
            env.step(agents[int(agent[-1])].act(obs["observation"], obs["action_mask"]))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_games_between_baselines_end_before_the_round_cap(n):
    # Before the baseline valued passing, 7 of these 40 two-player games hit the 100-round cap
    # (and 9 of seeds 1000-1039, at scores like -440 / -875).
    env = envs.make("chicken_v1", num_players=n)
    baseline = BaselineAgent(env.options)
    truncated = 0
    for seed in range(40):
        play(env, [baseline] * n, seed)
        truncated += env.game.truncated
    assert truncated <= 1


@pytest.mark.parametrize(
    ("n", "bids"),
    [(2, [5, 6, 7, 8, PASS]), (3, [5, 6, 7, 8, 9, 10, PASS, PASS])],
)
def test_v0s_opening_bidding_war_stops_where_waiting_is_worth_more(n, bids):
    """The frozen V0: at a round's start the best draw is 5 cards (+13.5 expected). It raises only
    while the raise beats the value of passing: the chance the drawer does not bust x 13.5 / (n - 1).
    (The rule before it raised while the gain stayed positive: up to 11 cards, +0.7.)"""
    env = envs.make("chicken_v1", num_players=n)
    env.reset(seed=0)
    baseline = BaselineAgentV0(env.options)
    made = []
    while not any("draws" in line for line in env.game.log):
        obs = env.observe(env.agent_selection)
        made.append(baseline.act(obs["observation"], obs["action_mask"]))
        env.step(made[-1])
    assert made == bids


@pytest.mark.parametrize("n", [2, 3])
def test_a_round_opens_with_one_card_not_five(n):
    """Five cards now would leave a foot (42%) to carry through the forced one-card draws to come:
    every baseline passes and the starter draws one."""
    env = envs.make("chicken_v1", num_players=n)
    env.reset(seed=0)
    baseline = BaselineAgent(env.options)
    made = []
    while not any("draws" in line for line in env.game.log):
        obs = env.observe(env.agent_selection)
        made.append(baseline.act(obs["observation"], obs["action_mask"]))
        env.step(made[-1])
    assert made == [PASS] * n
    assert env.game.log[-1] == "player_0 draws 1: 1 number, 0 feet"


def test_with_the_others_footed_and_its_hand_clean_it_takes_more_cards():
    """Three others with a foot will likely bust soon, and a clean hand keeps what it draws: a
    4-player baseline with no foot outbids a bid of 1 rather than pass the draw along."""
    env = envs.make("chicken_v1", num_players=4)
    env.reset(seed=0)
    game = env.game
    game.feet = [0, 1, 1, 1]
    game.numbers = [[], [3, 4], [2, 5], [1, 1]]
    game.deck = [card for card in game.deck if card != 0][: 40 - 7] + [0] * 7
    game.bid, game.high_bidder, game.to_act = 1, 3, 0
    game.active = [True, False, False, True]
    obs = env.observe(env.agent_selection)
    assert BaselineAgent(env.options).act(obs["observation"], obs["action_mask"]) > 1


def test_feet_law_is_the_hypergeometric_law():
    law = feet_law(deck=60, feet_left=10, cards=5)
    assert sum(law) == pytest.approx(1.0)
    assert law[0] == pytest.approx(2118760 / 5461512)  # C(50,5) / C(60,5)
    assert feet_law(deck=3, feet_left=3, cards=2) == [0.0, 0.0, 1.0]


def test_baseline_beats_uniform_random_clearly():
    wins = games = 0
    env = envs.make("chicken_v1")
    for seed in range(100):
        for seat in (0, 1):
            agents = [RandomAgent(seed), RandomAgent(seed)]
            agents[seat] = BaselineAgent(env.options)
            play(env, agents, seed)
            wins += env.game.returns()[seat] > 0
            games += 1
    assert wins / games > 0.85
