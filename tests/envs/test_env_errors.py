"""The AEC base on a tiny fake game: a game decided at the deal, and calls made out of order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.core import ActionLayout, CardGameEnv, Game, Observer, Piece, build_options, win_rewards
from fowlplay.envs.core.errors import UnknownAgentError


@dataclass
class CountOptions:
    """Count to `target` taking turns, adding 1 or 2; whoever reaches it wins."""

    num_players: int = 2
    target: int = 3


class CountGame(Game):
    """Players add 1 or 2 to a shared total; the player who reaches `target` wins."""

    def __init__(self, options: CountOptions, rng: np.random.Generator) -> None:
        self.options, self.rng, self.num_players = options, rng, options.num_players
        self.total, self.to_act, self.winner = 0, 0, None
        # A target of 0 is reached before anyone moves: the game is decided at the deal.
        self._terminal = options.target <= 0

    @classmethod
    def action_layout(cls, options: CountOptions) -> ActionLayout:
        return ActionLayout([("add", 2, "add 1 or 2")])

    def legal_mask(self) -> np.ndarray:
        return np.zeros(2, np.int8) if self.over else np.ones(2, np.int8)

    def apply(self, action: int) -> None:
        self.total += action + 1
        if self.total >= self.options.target:
            self._terminal, self.winner = True, self.to_act
        else:
            self.to_act = (self.to_act + 1) % self.num_players

    def returns(self) -> list[float]:
        return win_rewards([] if self.winner is None else [self.winner], self.num_players)

    def decision(self) -> str:
        return "add"

    def action_name(self, action: int) -> str:
        return f"add {action + 1}"

    def render(self) -> str:
        return f"total {self.total}"

    def resample_hidden(self, player: int, rng: np.random.Generator) -> None:
        """Nothing is hidden."""

    def state_dict(self) -> dict[str, Any]:
        return {"total": self.total, "to_act": self.to_act, "winner": self.winner}


class CountObserver(Observer):
    def layout(self, options: CountOptions) -> list[Piece]:
        return [Piece("total", 1, "the running total", 0, 10)]

    def fill(self, game: CountGame, player: int, parts) -> None:
        parts.total[0] = game.total


class CountEnv(CardGameEnv, name="count_v0"):
    options_cls = CountOptions
    game_cls = CountGame
    observer_cls = CountObserver


def test_fake_options_build():
    assert build_options(CountOptions, {"target": 5}).target == 5


def test_a_game_decided_at_the_deal_is_over_at_reset():
    env = CountEnv(target=0)
    env.reset(seed=0)
    assert env.game.over
    assert all(env.terminations.values()) and not any(env.truncations.values())
    for agent in env.possible_agents:
        assert not env.observe(agent)["action_mask"].any()
    _, reward, terminated, _, _ = env.last()
    assert terminated and reward == 0.0  # nobody won: a draw
    before = env.game.state_dict()
    with pytest.raises(ValueError, match="only valid action is None"):
        env.step(0)  # a finished game takes no action
    assert env.game.state_dict() == before
    removed = []
    for agent in env.agent_iter():
        removed.append(agent)
        env.step(None)
    assert removed == env.possible_agents and env.agents == []
    assert env.game.state_dict() == before


def test_step_refuses_a_game_that_ended_behind_the_envs_back():
    env = CountEnv(target=5)
    env.reset(seed=0)
    env.game._terminal = True  # forced: the env must not apply moves to a finished game
    with pytest.raises(envs.EnvOrderError, match="game is over"):
        env.step(0)
    assert env.game.state_dict() == {"total": 0, "to_act": 0, "winner": None}


def test_a_played_game_pays_its_winner():
    env = CountEnv(target=3)
    env.reset(seed=0)
    env.step(1)  # player_0: total 2
    env.step(0)  # player_1: total 3, wins
    assert env.rewards == {"player_0": -1.0, "player_1": 1.0}


def test_last_and_agent_iter_before_reset_are_clear_errors():
    env = CountEnv()
    with pytest.raises(envs.EnvOrderError, match=r"last\(\) called before reset"):
        env.last()
    with pytest.raises(envs.EnvOrderError, match=r"agent_iter\(\) called before reset"):
        env.agent_iter()


def test_step_and_last_after_everyone_is_done_are_clear_errors():
    env = CountEnv(target=1)
    env.reset(seed=0)
    env.step(0)
    for _ in env.agent_iter():
        env.step(None)
    with pytest.raises(envs.EnvOrderError, match=r"step\(\) called after every agent is done.*reset"):
        env.step(None)
    with pytest.raises(envs.EnvOrderError, match=r"last\(\) called after every agent is done"):
        env.last()


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_unknown_agents_and_non_integer_action_names_are_refused(name):
    env = envs.make(name)
    env.reset(seed=0)
    for agent in ("player_9", "nobody", 0, None):
        with pytest.raises(UnknownAgentError, match=r"unknown agent .*agents are \['player_0'"):
            env.observe(agent)
        for space in (env.action_space, env.observation_space):
            with pytest.raises(UnknownAgentError, match=r"unknown agent .*agents are \['player_0'"):
                space(agent)
    with pytest.raises(UnknownAgentError):
        env.resample_hidden("player_9")
    for action in (1.7, 1.0, True, "1", None):
        with pytest.raises(envs.IllegalActionError, match="not an integer action id"):
            env.action_name(action)
        with pytest.raises(envs.IllegalActionError, match="not an integer action id"):
            env.step(action)
    for action in (-1, env.num_actions):
        with pytest.raises(envs.IllegalActionError, match="out of range"):
            env.action_name(action)
    assert env.action_name(np.int64(0)) == env.action_name(0)
