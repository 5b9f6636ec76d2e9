"""SelfPlayEnv: the learner's view of a game, its reward, its masks, and SB3's env checker."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.core.agents import Agent, RandomAgent
from fowlplay.envs.core.errors import IllegalActionError
from fowlplay.training.sb3.selfplay import SelfPlayEnv
from stable_baselines3.common.env_checker import check_env

GAMES = list(envs.ENV_NAMES)
#: A one-card Chicken: the deck is a single 1, no feet, and one point wins. Whoever draws wins.
ONE_CARD = {"max_value": 1, "copies_per_value": 1, "feet": 0, "target": 1, "bid_cap": 1}
PASS, BID_1 = 0, 1


@pytest.mark.parametrize("game", GAMES)
def test_passes_sb3_check_env(game):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # check_env samples unmasked actions on purpose
        check_env(SelfPlayEnv(game), warn=False)


# ----- credit assignment, scripted ---------------------------------------------------------------
def test_learner_wins_on_the_opponents_move(scripted):
    env = SelfPlayEnv("chicken_v1", env_options=ONE_CARD, learner_seat=0)
    scripted(env, [PASS])
    obs, info = env.reset(seed=0)
    assert env.learner == "player_0" and info["learner_seat"] == 0
    obs, reward, terminated, truncated, info = env.step(BID_1)
    # player_1's pass ended the bidding; player_0 drew the only card and won.
    assert env.aec.game.log[0] == "player_1 passes"
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["outcome"] == "win" and info["opponent"] == "scripted"
    assert np.array_equal(obs, env.aec.observe("player_0")["observation"])
    assert not np.array_equal(obs, env.aec.observe("player_1")["observation"])
    assert not env.action_masks().any()


def test_learner_loses_on_the_opponents_move(scripted):
    env = SelfPlayEnv("chicken_v1", env_options=ONE_CARD, learner_seat=0)
    scripted(env, [BID_1])
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(PASS)
    # player_1 bid, everyone else had passed, so player_1 drew the card and won.
    assert env.aec.game.log[0] == "player_1 bids 1"
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["outcome"] == "loss"
    # The loss is paid with the learner's own observation, not the winner's.
    assert np.array_equal(obs, env.aec.observe("player_0")["observation"])
    assert not np.array_equal(obs, env.aec.observe("player_1")["observation"])


def test_learner_in_second_seat_sees_the_opponents_opening_and_loses_on_its_own_move(scripted):
    env = SelfPlayEnv("chicken_v1", env_options=ONE_CARD, learner_seat=1)
    scripted(env, [BID_1])
    env.reset(seed=0)
    assert env.learner == "player_1"
    # The opponent's opening bid was played inside reset(): only passing is left to the learner.
    assert env.action_masks().tolist() == [True, False]
    _, reward, terminated, _, info = env.step(PASS)
    assert (reward, terminated, info["outcome"]) == (-1.0, True, "loss")


def test_learner_wins_when_everyone_passes_and_the_starter_draws(scripted):
    env = SelfPlayEnv("chicken_v1", env_options=ONE_CARD, learner_seat=0)
    scripted(env, [PASS])
    env.reset(seed=0)
    _, reward, terminated, _, _ = env.step(PASS)
    assert "starting player draws 1" in " ".join(env.aec.game.log)
    assert (reward, terminated) == (1.0, True)


# ----- every registered game, random play ------------------------------------------------------
@pytest.mark.parametrize("game", GAMES)
def test_return_and_observations_are_the_learners_own(game):
    env = SelfPlayEnv(game, opponents={"random": 1.0, "baseline": 1.0})
    rng = np.random.default_rng(0)
    seats = set()
    for episode in range(30):
        obs, info = env.reset(seed=episode)
        seat = info["learner_seat"]
        seats.add(seat)
        total, done = 0.0, False
        while not done:
            aec_obs = env.aec.observe(env.learner)
            assert np.array_equal(obs, aec_obs["observation"])
            assert np.array_equal(env.action_masks(), aec_obs["action_mask"].astype(bool))
            assert env.aec.agent_selection == env.learner
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            obs, reward, terminated, truncated, info = env.step(action)
            total += reward
            done = terminated or truncated
        game_state = env.aec.game
        assert total == pytest.approx(game_state.returns()[seat])
        assert info["episode_return"] == pytest.approx(total)
        assert truncated == (game_state.truncated and not game_state.terminal)
        assert np.array_equal(obs, env.aec.observer.encode(game_state, seat))
    assert seats == set(range(len(env.agents))), "the learner's seat is drawn per episode"


def test_fixed_seat_and_seeded_episodes_replay():
    env = SelfPlayEnv("chicken_v1", learner_seat=1, opponents={"random": 1.0})

    def episode(seed):
        obs, _ = env.reset(seed=seed)
        trace = [obs.tobytes()]
        rng = np.random.default_rng(5)
        done = False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(
                int(rng.choice(np.flatnonzero(env.action_masks())))
            )
            trace.append((obs.tobytes(), reward))
            done = terminated or truncated
        return trace

    first = episode(3)
    assert env.learner == "player_1"
    assert episode(4) != first
    assert episode(3) == first


def test_illegal_action_raise_mode_changes_nothing():
    env = SelfPlayEnv("chicken_v1", learner_seat=0, illegal_action="raise")
    env.reset(seed=0)
    before = env.aec.game.state_dict()
    illegal = int(np.flatnonzero(~env.action_masks())[0]) if not env.action_masks().all() else None
    with pytest.raises(IllegalActionError):
        env.step(illegal if illegal is not None else env.action_space.n)
    assert env.aec.game.state_dict() == before


def test_illegal_action_lose_mode_ends_the_episode_and_warns(scripted):
    env = SelfPlayEnv("chicken_v1", env_options=ONE_CARD, learner_seat=1)
    scripted(env, [BID_1])
    env.reset(seed=0)
    before = env.aec.game.state_dict()
    with pytest.warns(RuntimeWarning, match="illegal action"):
        _, reward, terminated, truncated, info = env.step(BID_1)  # the bid is already 1
    assert (reward, terminated, truncated) == (-1.0, True, False)
    # The forfeit is the AEC env's own (built with illegal_action="lose"), and its info says why.
    assert env.aec.illegal_action == "lose"
    forfeit = info["illegal_action"]
    assert (forfeit["agent"], forfeit["action"]) == ("player_1", BID_1) and "not legal" in forfeit["error"]
    assert (info["outcome"], info["episode_return"]) == ("loss", -1.0)
    assert env.aec.rewards == {"player_0": 1.0, "player_1": -1.0}
    assert not env.action_masks().any()
    assert env.aec.game.state_dict() == before
    with pytest.raises(RuntimeError, match="reset"):
        env.step(PASS)


def test_illegal_reward_replaces_the_forfeit_reward(scripted):
    env = SelfPlayEnv("chicken_v1", env_options=ONE_CARD, learner_seat=1, illegal_reward=-5.0)
    scripted(env, [BID_1])
    env.reset(seed=0)
    with pytest.warns(RuntimeWarning, match=r"reward -5\.0"):
        _, reward, terminated, _, info = env.step(1.5)  # not even an action id
    assert (reward, terminated, info["episode_return"]) == (-5.0, True, -5.0)
    assert "not an integer action id" in info["illegal_action"]["error"]


def test_an_opponents_illegal_action_is_an_error_not_a_win():
    env = SelfPlayEnv("chicken_v1", env_options=ONE_CARD, learner_seat=0)
    env.pool.draw = lambda rng: ("scripted", _Blunderer())
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="opponent 'blunderer' in seat player_1"):
        env.step(BID_1)  # player_1 then bids 1 again, which is illegal


class _Blunderer(Agent):
    """Always bids 1, legal or not."""

    name = "blunderer"

    def act(self, observation, action_mask):
        return BID_1


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="learner_seat"):
        SelfPlayEnv("chicken_v1", learner_seat=2)
    with pytest.raises(ValueError, match="unknown opponent kind"):
        SelfPlayEnv("chicken_v1", opponents={"randm": 1.0})
    with pytest.raises(ValueError, match="network"):
        SelfPlayEnv("chicken_v1", opponents={"latest": 1.0})
    with pytest.raises(ValueError, match="unknown game"):
        SelfPlayEnv("no_such_game_v0")
    with pytest.raises(ValueError, match="env_options may not set illegal_action"):
        SelfPlayEnv("chicken_v1", env_options={"illegal_action": "raise"})


@pytest.mark.parametrize(
    ("truncation_reward", "expected", "outcome"), [(None, 0.0, "draw"), (-1.0, -1.0, "loss")]
)
def test_a_game_cut_off_by_its_cap_pays_the_truncation_reward(scripted, truncation_reward, expected, outcome):
    # One round only and an unreachable target: the first round's end truncates the game.
    options = {**ONE_CARD, "target": 100, "max_rounds": 1, "cap_ending": "draw"}
    env = SelfPlayEnv("chicken_v1", env_options=options, learner_seat=0, truncation_reward=truncation_reward)
    scripted(env, [PASS])
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(BID_1)
    assert env.aec.game.truncated and env.aec.game.scores == [1, 0]
    assert (reward, terminated, truncated, info["outcome"]) == (expected, False, True, outcome)


def test_decision_cost_is_charged_per_learner_decision(scripted):
    env = SelfPlayEnv(
        "chicken_v1", env_options={**ONE_CARD, "copies_per_value": 2}, learner_seat=0, decision_cost=0.25
    )
    # Two cards: the learner bids and draws one, the opponent passes twice, the learner draws the last.
    scripted(env, [PASS, PASS])
    env.reset(seed=0)
    first = env.step(BID_1)
    assert first[1] == -0.25 and not first[2]
    _, reward, terminated, _, info = env.step(BID_1)
    assert (reward, terminated) == (1.0 - 0.25, True)
    assert info["episode_return"] == pytest.approx(0.5) and info["outcome"] == "win"


def test_max_decisions_cuts_the_episode_off_as_truncated(scripted):
    env = SelfPlayEnv(
        "chicken_v1",
        env_options={**ONE_CARD, "copies_per_value": 2},
        learner_seat=0,
        max_decisions=1,
        truncation_reward=-1.0,
    )
    scripted(env, [PASS, PASS])
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(BID_1)
    # The game goes on (one card is left), but the learner's episode ends here.
    assert not env.aec.game.over
    assert (reward, terminated, truncated, info["outcome"]) == (-1.0, False, True, "loss")
    assert not env.action_masks().any()
    env.reset(seed=1)  # a new episode starts cleanly
    assert env.action_masks().any()


def test_shaping_adds_the_discounted_change_of_the_learners_potential():
    def episode(shaping, seed):
        env = SelfPlayEnv(
            "murder_most_fowl_v0", opponents={"random": 1.0}, learner_seat=1, shaping=shaping, gamma=0.9
        )
        env.reset(seed=seed)
        chooser = np.random.default_rng(seed)
        steps, done = [], False
        while not done:
            before = env.aec.game.potential(1)
            action = int(chooser.choice(np.flatnonzero(env.action_masks())))
            _, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            after = 0.0 if done else env.aec.game.potential(1)
            steps.append((reward, before, after))
        return steps, info

    moved = 0
    for seed in range(12):
        shaped, shaped_info = episode(0.5, seed)
        plain, plain_info = episode(0.0, seed)
        assert len(shaped) == len(plain)  # the same game: shaping changes rewards only
        for (reward, before, after), (game_reward, _, _) in zip(shaped, plain):
            assert reward == pytest.approx(game_reward + 0.5 * (0.9 * after - before))
            moved += after != before
        # outcomes and episode returns stay the game's own
        assert shaped_info["episode_return"] == plain_info["episode_return"]
        assert shaped_info["outcome"] == plain_info["outcome"]
    assert moved >= 3, moved  # routes were scored or broken along the way


def test_shaping_needs_a_game_with_a_potential():
    with pytest.raises(ValueError, match=r"chicken_v1 defines no potential.*\['murder_most_fowl_v0'\]"):
        SelfPlayEnv("chicken_v1", shaping=1.0)
    with pytest.raises(ValueError, match="shaping must be >= 0"):
        SelfPlayEnv("murder_most_fowl_v0", shaping=-1.0)


# ----- the generator form that SelfPlayVecEnv drives ------------------------------------------------
def test_reset_and_step_moves_hand_each_opponent_decision_to_the_caller():
    env = SelfPlayEnv("chicken_v1", env_options=ONE_CARD, learner_seat=1, opponents={"baseline": 1.0})
    moves = env.reset_moves(seed=0)
    opponent, observation, mask = next(moves)
    # Seat 0 opens: its own observation and mask, not the learner's.
    assert env.aec.agent_selection == "player_0" and opponent.name != "random"
    assert np.array_equal(observation, env.aec.observe("player_0")["observation"])
    assert mask.tolist() == [1, 1]
    with pytest.raises(StopIteration) as done:
        moves.send(PASS)  # the caller decides for it
    _obs, info = done.value.value
    assert env.aec.game.log[0] == "player_0 passes"
    assert info["learner_seat"] == 1 and env.action_masks().tolist() == [True, True]
    with pytest.raises(StopIteration) as done:
        next(env.step_moves(BID_1))  # the learner bids and draws the only card: no opponent move
    _, reward, terminated, _, _ = done.value.value
    assert (reward, terminated) == (1.0, True)


def test_a_random_opponent_is_asked_with_its_mask_only():
    env = SelfPlayEnv("murder_most_fowl_v0", learner_seat=1, opponents={"random": 1.0})
    opponent, observation, mask = next(env.reset_moves(seed=0))
    # It never reads the observation, so none is encoded; the mask is the AEC env's.
    assert type(opponent) is RandomAgent and observation is None
    assert np.array_equal(mask, env.aec.observe("player_0")["action_mask"])
