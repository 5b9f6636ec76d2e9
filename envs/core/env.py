"""The AEC base class every game's environment is declared on.

It owns agent bookkeeping, reward accumulation, seeding, illegal actions (an error, or with
`illegal_action="lose"` a lost game), cloning,
re-dealing hidden information and render plumbing; a game's `env.py` only names its options,
engine and observer. It enforces the call order itself, so no `OrderEnforcingWrapper` (whose
per-attribute `__getattr__` is a measurable cost) is needed.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
from fowlplay.envs.core.errors import EnvOrderError, IllegalActionError, UnknownAgentError
from fowlplay.envs.core.game import Game
from fowlplay.envs.core.observer import Observer
from fowlplay.envs.core.options import build_options
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv

#: How many legal actions an illegal-action message lists by name before summarising.
_LISTED_LEGAL = 12

#: What `step` does with an illegal action: raise `IllegalActionError` (the default, it finds bugs),
#: or end the game at once, the offender losing -1 and the others sharing +1 (zero-sum).
ILLEGAL_ACTION_MODES = ("raise", "lose")
#: The mask's dtype, passed positionally: numpy's keyword parsing costs more than `frombuffer` itself.
_INT8 = np.dtype(np.int8)


class CardGameEnv(AECEnv):
    """PettingZoo AEC environment around one `Game` engine and its `Observer`."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "card_game",
        "render_modes": ["ansi", "human", "rgb_array"],
        "is_parallelizable": False,
        "render_fps": 1,
    }
    options_cls: ClassVar[type]
    game_cls: ClassVar[type[Game]]
    observer_cls: ClassVar[type[Observer]]

    def __init_subclass__(cls, name: str | None = None, **kwargs: Any) -> None:
        """`class raw_env(CardGameEnv, name="chicken_v1")` sets the metadata PettingZoo reads."""
        super().__init_subclass__(**kwargs)
        if name is not None:
            # Its own dict and list: wrappers append to `render_modes` and must not touch other games.
            base = CardGameEnv.metadata
            cls.metadata = {**base, "render_modes": list(base["render_modes"]), "name": name}

    def __init__(self, render_mode: str | None = None, illegal_action: str = "raise", **options: Any) -> None:
        super().__init__()
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(
                f"illegal_action={illegal_action!r} is not supported; allowed: {list(ILLEGAL_ACTION_MODES)}"
            )
        self.illegal_action = illegal_action
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode={render_mode!r} is not supported; allowed: "
                f"{[None, *self.metadata['render_modes']]}"
            )
        self.render_mode = render_mode
        self.options = build_options(self.options_cls, options)
        self.observer = self.observer_cls(self.options)
        num_players = self.options.num_players
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self._index = {agent: i for i, agent in enumerate(self.possible_agents)}
        self._zero_rewards = dict.fromkeys(self.possible_agents, 0.0)
        self.num_actions = self.game_cls.action_count(self.options)
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(self.observer.low, self.observer.high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(self.num_actions,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(self.num_actions) for a in self.possible_agents}
        self._no_actions = np.zeros(self.num_actions, dtype=np.int8)
        self._np_random: np.random.Generator | None = None
        self._np_random_seed: int | None = None
        self.game: Game | None = None
        #: The acting agent's legal mask as bytes (immutable: `step` checks an action against it
        #: while the arrays `observe` hands out are the caller's), until the state changes.
        self._mask: bytes | None = None
        self._forfeited = False  # the game ended on an illegal action (illegal_action="lose")

    # ----- spaces -------------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        """The Dict space of `agent`'s observation (the same object on every call); an agent that is
        not one of `possible_agents` is an `UnknownAgentError` naming them."""
        try:
            return self.observation_spaces[agent]
        except (KeyError, TypeError):
            self._player(agent)  # raises the error naming the agents
            raise

    def action_space(self, agent: str) -> spaces.Space:
        """The Discrete action space of `agent` (the same object on every call); an agent that is not
        one of `possible_agents` is an `UnknownAgentError` naming them."""
        try:
            return self.action_spaces[agent]
        except (KeyError, TypeError):
            self._player(agent)  # raises the error naming the agents
            raise

    # ----- the AEC loop -------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game; `seed` fixes the whole game, None continues the current generator."""
        if seed is not None or self._np_random is None:
            self._np_random, self._np_random_seed = seeding.np_random(seed)
        self.game = self.game_cls(self.options, self._np_random)
        self._mask = None
        self._forfeited = False
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.game.current_player]
        if self.game.over:
            # Options can deal a game that is already decided: nobody may move in it.
            self._finish(self.game)
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def step(self, action: Any) -> None:
        """Apply the acting agent's action; raises `IllegalActionError` and changes nothing if illegal."""
        # The hottest line of every loop: a live game and a legal int action take this path alone.
        # (While the game runs nobody is done and every reward is 0; both change only when it ends.)
        game = self.game
        if game is not None and not (game._terminal or game._truncated or self._forfeited):
            mask = self._mask
            if mask is None:
                mask = self._mask = game.legal_mask().tobytes()
            if type(action) is int and 0 <= action < self.num_actions and mask[action]:
                self._cumulative_rewards[self.agent_selection] = 0.0
                game.apply(action)
                self._mask = None
                if game._terminal or game._truncated:
                    self._finish(game)
                    self._accumulate_rewards()
                else:
                    self.agent_selection = self.possible_agents[game.current_player]
                if self.render_mode == "human":
                    self.render()
                return
        self._checked_step(action)

    def _checked_step(self, action: Any) -> None:
        """`step` for everything but a legal int in a live game: dead agents, order errors, illegal actions."""
        game = self.game if self.game is not None else self._require_game("step")
        agent = self.agent_selection if self.agents else self._require_agent("step")
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if game.over:  # only reachable by changing the game behind the env's back
            raise EnvOrderError(f"step() called for {agent} but the game is over; call env.reset()")
        mask = self._mask
        if mask is None:
            mask = self._mask = game.legal_mask().tobytes()
        if type(action) is not int or not 0 <= action < self.num_actions or not mask[action]:
            try:
                action = self._check_action(game, agent, action)
            except IllegalActionError as err:
                if self.illegal_action == "raise":
                    raise
                self._forfeit(agent, action, str(err))
                return
        self._cumulative_rewards[agent] = 0.0
        # Every agent is still in `rewards` while the game runs: one update zeroes them all.
        self.rewards.update(self._zero_rewards)
        game.apply(action)
        self._mask = None
        if game.over:
            self._finish(game)
            self._accumulate_rewards()
        else:
            # Every reward of a move that does not end the game is 0: nothing to accumulate.
            self.agent_selection = self.possible_agents[game.current_player]
        if self.render_mode == "human":
            self.render()

    def _forfeit(self, agent: str, action: Any, why: str) -> None:
        """End the game on `agent`'s illegal action: it gets -1, the others share +1; the game is kept."""
        self._forfeited = True
        self._cumulative_rewards[agent] = 0.0
        others = [a for a in self.agents if a != agent]
        for a in self.agents:
            self.rewards[a] = -1.0 if a == agent else 1.0 / len(others)
            self.terminations[a] = True
            self.infos[a] = {
                **self.infos[a],
                "illegal_action": {"agent": agent, "action": action, "error": why},
            }
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _finish(self, game: Game) -> None:
        """Pay the game's returns and mark every agent done (terminated, or truncated by a cap)."""
        returns = game.returns()
        truncated = game.truncated and not game.terminal
        for a in self.agents:
            self.rewards[a] = float(returns[self._index[a]])
            self.terminations[a] = not truncated
            self.truncations[a] = truncated

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """What `agent` may know, plus its action mask (all zeros unless it is its decision)."""
        game = self.game if self.game is not None else self._require_game("observe")
        player = self._index.get(agent) if type(agent) is str else None
        if player is None:
            player = self._player(agent)
        if player == game.current_player and not game.over and not self._forfeited:
            if self._mask is None:
                mask = game.legal_mask()  # a fresh array: the caller's; the env keeps its bytes
                self._mask = mask.tobytes()
            else:
                mask = np.frombuffer(bytearray(self._mask), _INT8)
        else:
            mask = self._no_actions.copy()
        return {"observation": self.observer.encode(game, player), "action_mask": mask}

    def last(self, observe: bool = True):
        """(observation, reward, terminated, truncated, info) of the agent whose turn it is."""
        if self.game is None:
            self._require_game("last")
        agent = self.agent_selection if self.agents else self._require_agent("last")
        observation = self.observe(agent) if observe else None
        return (
            observation,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def agent_iter(self, max_iter: int = 2**63):
        """Yield the agent whose turn it is until every agent is done (PettingZoo's loop)."""
        self._require_game("agent_iter")
        return self._agents_in_turn(max_iter)

    def _agents_in_turn(self, max_iter: int):
        # A generator resumes faster than PettingZoo's AECIterator.__next__; the same stops.
        while self.agents and max_iter > 0:
            max_iter -= 1
            yield self.agent_selection

    def _action_id(self, action: Any) -> int | None:
        """`action` as an int if it is an integer in range, else None (floats and bools are not)."""
        if isinstance(action, np.ndarray) and action.shape == ():
            action = action.item()
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            return None
        return int(action) if 0 <= action < self.num_actions else None

    def _check_action(self, game: Game, agent: str, action: Any) -> int:
        """The action as an int if it is legal; otherwise an `IllegalActionError` naming the choices."""
        action_id = self._action_id(action)
        if action_id is None:
            self._illegal(game, agent, action, self._not_an_id(action))
        action = action_id
        mask = self._legal_mask(game)
        if not mask[action]:
            self._illegal(game, agent, action, f"not legal now ({game.action_name(action)})", mask)
        return action

    def _legal_mask(self, game: Game) -> np.ndarray:
        if self._mask is None:
            self._mask = game.legal_mask().tobytes()
        return np.frombuffer(self._mask, _INT8)

    def _illegal(self, game: Game, agent: str, action: Any, why: str, mask=None) -> None:
        mask = game.legal_mask() if mask is None else mask
        legal = np.flatnonzero(mask).tolist()
        named = ", ".join(f"{a} ({game.action_name(a)})" for a in legal[:_LISTED_LEGAL])
        more = f", ... {len(legal) - _LISTED_LEGAL} more" if len(legal) > _LISTED_LEGAL else ""
        raise IllegalActionError(
            f"action {action!r} is {why} for {agent}, who is deciding '{game.decision()}'; "
            f"legal actions: {named}{more}"
        )

    def _not_an_id(self, action: Any) -> str:
        """Why `action` (which `_action_id` refused) is no action id."""
        if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
            return f"out of range 0..{self.num_actions - 1}"
        return f"not an integer action id (0..{self.num_actions - 1})"

    def _require_game(self, call: str) -> Game:
        if self.game is None:
            raise EnvOrderError(f"{call}() called before reset(); call env.reset() first")
        return self.game

    def _require_agent(self, call: str) -> str:
        """The selected agent, unless every agent is done (then the game needs a reset)."""
        if not self.agents:
            raise EnvOrderError(
                f"{call}() called after every agent is done; the game is over, call env.reset()"
            )
        return self.agent_selection

    def _player(self, agent: Any) -> int:
        """The seat of `agent`, or an `UnknownAgentError` naming the agents."""
        try:
            return self._index[agent]
        except (KeyError, TypeError):
            raise UnknownAgentError(f"unknown agent {agent!r}; agents are {self.possible_agents}") from None

    # ----- extras for search agents, tests and people ----------------------------------------
    def clone(self) -> CardGameEnv:
        """An independent copy: same state, its own copy of the generator."""
        game = self._require_game("clone")
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other.game = game.clone()
        other._mask = None
        other._np_random = other.game.rng
        other.agents = list(self.agents)
        other.rewards = dict(self.rewards)
        other._cumulative_rewards = dict(self._cumulative_rewards)
        other.terminations = dict(self.terminations)
        other.truncations = dict(self.truncations)
        other.infos = {a: dict(info) for a, info in self.infos.items()}
        return other

    def resample_hidden(self, agent: str | None, seed: int | None = None) -> None:
        """Re-deal in place everything `agent` cannot see, consistently with what it has seen; with
        `agent=None`, only what no player has seen (the deck's order: every hand stays face up)."""
        game = self._require_game("resample_hidden")
        player = None if agent is None else self._player(agent)
        deal_seed, future_seed = np.random.SeedSequence(seed).spawn(2)
        game.resample_hidden(player, np.random.default_rng(deal_seed))
        self._mask = None  # the acting player's own cards may have been re-dealt
        # Future chance events are hidden too: give them fresh randomness as well.
        game.rng = self._np_random = np.random.default_rng(future_seed)

    def view(self, agent: str) -> str:
        """The table as `agent` sees it (its own cards, public cards, counts), never hidden cards."""
        game = self._require_game("view")
        return self.observer.view(game, self._player(agent))

    def has_potential(self) -> bool:
        """True if this game defines `Game.potential` (training's reward shaping reads it)."""
        return self.game_cls.potential is not Game.potential

    def action_name(self, action: int) -> str:
        """Human-readable name of `action` in the current state."""
        game = self._require_game("action_name")
        action_id = self._action_id(action)
        if action_id is None:
            raise IllegalActionError(f"action {action!r} is {self._not_an_id(action)}")
        return game.action_name(action_id)

    def decision(self) -> str:
        """The kind of decision the acting agent is making."""
        return self._require_game("decision").decision()

    def render(self) -> str | np.ndarray | None:
        """The table: text returned for 'ansi' and printed for 'human'; for 'rgb_array' an (H, W, 3)
        uint8 image of the table as a spectator sees it (hidden cards face down)."""
        if self.render_mode is None:
            warnings.warn(
                "render() called without a render_mode; pass render_mode='ansi', 'human' or 'rgb_array'",
                stacklevel=2,
            )
            return None
        if self.render_mode == "rgb_array":
            return self.picture()
        text = self._require_game("render").render()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def picture(self, agent: str | None = None) -> np.ndarray:
        """The table as an (H, W, 3) uint8 image: as a spectator sees it (None) or as `agent` sees it
        (its own hidden cards face up, nothing else hidden shown); needs Pillow (the `render` extra)."""
        from fowlplay.envs.core.picture import draw, to_array

        game = self._require_game("picture")
        viewer = None if agent is None else self._player(agent)
        return to_array(draw(game, viewer))

    def close(self) -> None:
        """Nothing to release; defined because `render` is."""


def deprecated_version(current: type[CardGameEnv], old_name: str, old_options: dict[str, Any]) -> type:
    """The AEC class of an older version of a game: `current` with the old rule options as defaults,
    warning at each construction that the name is deprecated (PettingZoo: a rules change is a new
    version; here the old name keeps its old rules)."""
    new_name = current.metadata["name"]
    changed = ", ".join(f"{key}={value!r}" for key, value in old_options.items())

    class raw_env(current, name=old_name):  # noqa: N801 - PettingZoo's naming convention
        __doc__ = f"Deprecated: `{new_name}` with {changed}."

        def __init__(self, **kwargs: Any) -> None:
            warnings.warn(
                f"{old_name} is deprecated: use {new_name}. {old_name} is {new_name} with {changed}",
                DeprecationWarning,
                stacklevel=3,
            )
            super().__init__(**{**old_options, **kwargs})

    raw_env.__module__ = current.__module__
    return raw_env
