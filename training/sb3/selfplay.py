"""`SelfPlayEnv`: one seat of a fowlplay AEC game as a single-agent gymnasium environment.

The learner's seat is drawn per episode (or fixed); every other seat is played inside the
environment by opponents from an `OpponentPool`. `step()` applies the learner's action, then plays
opponents until the learner must act again or the game ends. The learner sees only its own
observation, and its reward is its own: every reward the AEC env pays the learner's seat after
any move (its own or an opponent's) is summed into the step, so a game won or lost on an
opponent's move pays the learner at that step.

Illegal actions: MaskablePPO never takes one (it reads `action_masks()`). For learners that do
(SB3's `check_env` samples unmasked actions), `illegal_action="lose"` (the default) ends the
episode at once with `illegal_reward`, leaves the game untouched, puts the AEC env's
`info["illegal_action"]` (agent, action, why) in the step's info and warns once;
`illegal_action="raise"` raises the AEC env's `IllegalActionError` instead. Both are the AEC env's
own `illegal_action` option (the game is built with it), so there is one forfeit, the env's.

`truncation_reward`, when not None, is the learner's reward for the step on which the game is cut
off by its cap, in place of the game's (0 for a truncated game): a learner that can stall a lost
game until the cap would otherwise learn to. `decision_cost` is subtracted from every step's
reward: a small one makes stalling (in a game whose rules allow a turn to go on and on) cost more
the longer it lasts. `max_decisions` cuts an episode off (truncated, paying `truncation_reward`)
once the learner has made that many decisions in it.

`shaping` (0: off) adds potential-based shaping, `shaping * (gamma * phi(next) - phi(now))`, to
each step's reward, where phi is the game's public `Game.potential` of the learner's seat (for
example its lead in points) and is 0 once the episode is over. With `gamma` equal to the learner's
discount this changes no policy's ranking (Ng, Harada and Russell, 1999); it only tells the learner
sooner which moves help. Episode outcomes and `info["episode_return"]` stay the game's own.

`reset_moves()` and `step_moves()` are `reset()` and `step()` as generators that hand each opponent
decision to the caller (`training.sb3.vec_env.SelfPlayVecEnv` answers those of many environments with
one batched forward pass per network); `reset()` and `step()` let each opponent act itself. A
uniformly random opponent decides from its action mask alone, so its observation is not encoded.
"""

from __future__ import annotations

import warnings
from collections.abc import Generator
from typing import Any

import gymnasium as gym
import numpy as np
from fowlplay import envs
from fowlplay.envs.core.agents import Agent, RandomAgent
from fowlplay.envs.core.errors import IllegalActionError
from fowlplay.training.config import check_shaping
from fowlplay.training.sb3.opponents import OpponentPool

#: Largest seed handed to the AEC env per episode.
_SEED_LIMIT = 2**31 - 1
#: Games in a row that may end before the learner's first decision before reset() gives up.
_MAX_EMPTY_GAMES = 100

#: One opponent decision handed out by `reset_moves`/`step_moves`: the opponent, its observation
#: (None for a uniformly random opponent, which needs only the mask) and its action mask; the
#: caller sends back the action.
OpponentDecision = tuple[Agent, "np.ndarray | None", np.ndarray]
#: What `reset_moves`/`step_moves` are: they yield decisions, receive actions, return the result.
Moves = Generator[OpponentDecision, int, Any]


class SelfPlayEnv(gym.Env):
    """A fowlplay game seen from one learner seat, opponents played inside."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        game: str = "chicken_v1",
        env_options: dict[str, Any] | None = None,
        opponents: dict[str, float] | None = None,
        learner_seat: int | str = "random",
        snapshot_window: int = 5,
        network: dict[str, Any] | None = None,
        render_mode: str | None = None,
        illegal_action: str = "lose",
        illegal_reward: float | None = None,
        truncation_reward: float | None = None,
        decision_cost: float = 0.0,
        max_decisions: int | None = None,
        shaping: float = 0.0,
        gamma: float = 1.0,
        pool: OpponentPool | None = None,
    ) -> None:
        if illegal_action not in ("lose", "raise"):
            raise ValueError(f"illegal_action must be 'lose' or 'raise'; got {illegal_action!r}")
        if "illegal_action" in (env_options or {}):
            raise ValueError(
                "env_options may not set illegal_action: SelfPlayEnv builds the game with its own "
                "illegal_action ('lose' or 'raise')"
            )
        self.illegal_action = illegal_action
        # None: the game's own forfeit reward (-1); a number replaces it, as truncation_reward does.
        self.illegal_reward = None if illegal_reward is None else float(illegal_reward)
        self.truncation_reward = None if truncation_reward is None else float(truncation_reward)
        self.decision_cost = float(decision_cost)
        self.max_decisions = max_decisions
        self._decisions = 0
        self._warned_illegal = False
        self.game = game
        self.aec = envs.make(
            game, render_mode=render_mode, illegal_action=illegal_action, **(env_options or {})
        )
        self.shaping = float(shaping)
        self.gamma = float(gamma)
        check_shaping(self.shaping, self.aec)
        self._potential = 0.0
        self.render_mode = render_mode
        self.agents = list(self.aec.possible_agents)
        if learner_seat != "random" and learner_seat not in range(len(self.agents)):
            raise ValueError(
                f"learner_seat must be 'random' or 0..{len(self.agents) - 1}; got {learner_seat!r}"
            )
        self.learner_seat = learner_seat
        self.observation_space = self.aec.observation_space(self.agents[0])["observation"]
        self.action_space = self.aec.action_space(self.agents[0])
        # A pool shared by several envs (SelfPlayVecEnv) replaces the one opponents/network describe.
        self.pool = pool or OpponentPool(game, self.aec, opponents, window=snapshot_window, network=network)
        self._no_actions = np.zeros(self.action_space.n, dtype=np.int8)
        self._mask = self._no_actions
        self._seat = 0
        self._learner = self.agents[0]
        self._opponents: dict[str, Any] = {}
        self._labels: list[str] = []
        self._return = 0.0
        self._cut = False

    # ----- the gymnasium API --------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Deal a new game, draw the learner's seat and opponents, and play up to the learner's turn."""
        return _play(self.reset_moves(seed, options))

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Apply the learner's action, then the opponents' moves up to its next turn or the end."""
        return _play(self.step_moves(action))

    def reset_moves(self, seed: int | None = None, options: dict | None = None) -> Moves:
        """`reset()` as a generator: yields each opponent decision, receives its action."""
        super().reset(seed=seed)
        rng = self.np_random
        for _ in range(_MAX_EMPTY_GAMES):
            n = len(self.agents)
            self._seat = int(rng.integers(n)) if self.learner_seat == "random" else int(self.learner_seat)
            self._learner = self.agents[self._seat]
            self._opponents, self._labels = {}, []
            for i in range(1, n):
                agent = self.agents[(self._seat + i) % n]
                label, opponent = self.pool.draw(rng)
                self._opponents[agent] = opponent
                self._labels.append(label)
            self.aec.reset(seed=int(rng.integers(_SEED_LIMIT)))
            self._return = 0.0
            self._cut = False
            self._decisions = 0
            yield from self._opponent_moves()
            if not self._over():
                self._potential = self._phi()
                return self._observe(), {"learner_seat": self._seat, "opponents": list(self._labels)}
        raise RuntimeError(
            f"{_MAX_EMPTY_GAMES} games of {self.game} in a row ended before the learner's turn"
        )

    def step_moves(self, action: Any) -> Moves:
        """`step()` as a generator: yields each opponent decision, receives its action."""
        if self._over():
            raise RuntimeError("step() called after the episode ended; call reset() first")
        before = self._return
        # An illegal action raises IllegalActionError ("raise") or forfeits the game ("lose"); either
        # way the game itself is unchanged.
        self.aec.step(action)
        forfeit = self.aec.infos[self._learner].get("illegal_action")
        if forfeit is not None:
            return self._lose_on_illegal(forfeit, before)
        self._return += self.aec.rewards[self._learner]
        yield from self._opponent_moves()
        self._return -= self.decision_cost
        self._decisions += 1
        if self.max_decisions is not None and self._decisions >= self.max_decisions and not self._over():
            self._cut = True
        reward = self._return - before
        if self.shaping:
            potential = 0.0 if self._over() else self._phi()
            reward += self.shaping * (self.gamma * potential - self._potential)
            self._potential = potential
        observation = self._observe()
        terminated = truncated = False
        info: dict[str, Any] = {"learner_seat": self._seat}
        if self._over():
            terminated = bool(self.aec.terminations[self._learner]) and not self._cut
            truncated = not terminated
            if truncated and self.truncation_reward is not None:
                reward = self.truncation_reward
                self._return = before + reward
            info.update(self._episode_info())
        return observation, float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions now (all zeros once the episode is over)."""
        return self._mask.astype(bool)

    def render(self) -> str | None:
        """The AEC env's text picture of the table (render_mode='ansi')."""
        return self.aec.render() if self.render_mode == "ansi" else None

    # ----- the pool, reachable through VecEnv.env_method -------------------------------------------
    def set_latest(self, state: dict[str, np.ndarray]) -> None:
        """Give the `latest` opponent the learner's current weights."""
        self.pool.set_latest(state)

    def add_snapshot(self, name: str, state: dict[str, np.ndarray]) -> None:
        """Add an earlier learner to the pool's snapshot window."""
        self.pool.add_snapshot(name, state)

    def set_opponent_weights(
        self, weights: dict[str, float], snapshot_weights: dict[str, float] | None = None
    ) -> None:
        """Replace the pool's kind weights and per-snapshot weights (a meta-strategy)."""
        self.pool.set_weights(weights, snapshot_weights)

    def snapshot_names(self) -> list[str]:
        """Names of the snapshots this env's pool holds."""
        return self.pool.snapshot_names()

    @property
    def learner(self) -> str:
        """The AEC agent name of the learner's seat this episode."""
        return self._learner

    @property
    def opponent_labels(self) -> list[str]:
        """The kind of opponent in each other seat this episode, clockwise from the learner."""
        return list(self._labels)

    # ----- inside ------------------------------------------------------------------------------
    def _over(self) -> bool:
        return self._cut or self.aec.terminations[self._learner] or self.aec.truncations[self._learner]

    def _phi(self) -> float:
        return self.aec.unwrapped.game.potential(self._seat) if self.shaping else 0.0

    def _lose_on_illegal(self, forfeit: dict, before: float) -> tuple[np.ndarray, float, bool, bool, dict]:
        """The step on which the AEC env forfeited the learner's game for an illegal action."""
        if not self._warned_illegal:
            self._warned_illegal = True
            warnings.warn(
                f"SelfPlayEnv({self.game}): illegal action {forfeit['action']!r} ends the episode as a loss "
                f"(reward {self._illegal_reward()}); pass the env's action_masks() to the learner, "
                "or illegal_action='raise' to fail instead",
                RuntimeWarning,
                stacklevel=5,  # the caller of step(), through step_moves and _play
            )
        reward = self._illegal_reward()
        self._return = before + reward
        observation = self._observe()
        info = {"learner_seat": self._seat, "illegal_action": forfeit, **self._episode_info()}
        return observation, reward, True, False, info

    def _illegal_reward(self) -> float:
        if self.illegal_reward is not None:
            return self.illegal_reward
        return float(self.aec.rewards[self._learner])

    def _opponent_moves(self) -> Moves:
        aec = self.aec
        while not self._over() and aec.agent_selection != self._learner:
            agent = aec.agent_selection
            opponent = self._opponents[agent]
            if type(opponent) is RandomAgent:
                # Encoding an observation costs 10-30 times the mask, and this agent never reads it.
                action = yield opponent, None, aec.unwrapped.game.legal_mask()
            else:
                obs = aec.observe(agent)
                action = yield opponent, obs["observation"], obs["action_mask"]
            aec.step(action)
            forfeit = aec.infos[agent].get("illegal_action")
            if forfeit is not None:
                # The pool's opponents read their masks: an illegal move is a bug, never a free win.
                raise IllegalActionError(f"opponent {opponent.name!r} in seat {agent}: {forfeit['error']}")
            self._return += aec.rewards[self._learner]

    def _observe(self) -> np.ndarray:
        obs = self.aec.observe(self._learner)
        self._mask = obs["action_mask"] if not self._over() else self._no_actions
        return obs["observation"]

    def _episode_info(self) -> dict[str, Any]:
        labels = set(self._labels)
        outcome = "win" if self._return > 0 else "loss" if self._return < 0 else "draw"
        return {
            "opponent": labels.pop() if len(labels) == 1 else "mixed",
            "outcome": outcome,
            "episode_return": self._return,
        }


def _play(moves: Moves) -> Any:
    """Run `reset_moves`/`step_moves` to the end, each opponent acting itself; their result."""
    try:
        opponent, observation, mask = next(moves)
        while True:
            opponent, observation, mask = moves.send(opponent.act(observation, mask))
    except StopIteration as done:
        return done.value
