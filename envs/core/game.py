"""The pure rules-engine interface every game implements (no RL library is imported here)."""

from __future__ import annotations

import abc
import copy
from typing import Any

import numpy as np
from fowlplay.envs.core.actions import ActionLayout


class Game(abc.ABC):
    """One game in progress: a state, its legal actions, applying one, the returns.

    Subclasses keep every random draw on `self.rng`, the generator handed to them by the
    environment, so a seed fixes the whole game and `clone()` copies the generator too.
    """

    #: Size of the flat action space; set by each game (may depend on the options).
    num_players: int
    rng: np.random.Generator

    @abc.abstractmethod
    def __init__(self, options: Any, rng: np.random.Generator) -> None:
        """Deal a new game for `options`, drawing every card order from `rng` (kept as `self.rng`)."""

    @classmethod
    @abc.abstractmethod
    def action_layout(cls, options: Any) -> ActionLayout:
        """The named action blocks for these options (documented in the game's rules page)."""

    @classmethod
    def action_count(cls, options: Any) -> int:
        """Size of the flat Discrete action space for these options."""
        return cls.action_layout(options).size

    # ----- what the environment asks -----------------------------------------------------
    #: The seat whose decision it is; the engine keeps it up to date.
    to_act: int = 0
    #: Set by the engine when the game ends by its rules, or is cut off by its documented cap.
    _terminal: bool = False
    _truncated: bool = False

    @property
    def current_player(self) -> int:
        """Seat whose decision it is (meaningless once the game is over)."""
        return self.to_act

    @property
    def terminal(self) -> bool:
        """True once the game has ended by its rules."""
        return self._terminal

    @property
    def truncated(self) -> bool:
        """True once the game was cut off by its documented cap."""
        return self._truncated

    @abc.abstractmethod
    def legal_mask(self) -> np.ndarray:
        """A new int8 mask of length `action_count(options)`, 1 per legal action of `current_player` (the env hands it out)."""

    @abc.abstractmethod
    def apply(self, action: int) -> None:
        """Apply a legal action of `current_player` (the environment checked it is legal)."""

    @abc.abstractmethod
    def returns(self) -> list[float]:
        """Final reward of every seat (zero-sum); only meaningful once the game is over."""

    @abc.abstractmethod
    def decision(self) -> str:
        """Short name of the kind of decision `current_player` is making."""

    @abc.abstractmethod
    def action_name(self, action: int) -> str:
        """Human-readable name of `action` in the current state."""

    @abc.abstractmethod
    def render(self) -> str:
        """A text picture of the table (everything, as an umpire sees it)."""

    @abc.abstractmethod
    def resample_hidden(self, player: int | None, rng: np.random.Generator) -> None:
        """Re-deal in place everything `player` cannot see, consistently with what they saw; with
        `player=None` only what no player has seen, keeping every card any player holds or saw."""

    @abc.abstractmethod
    def state_dict(self) -> dict[str, Any]:
        """The whole state as plain Python values (for tests, debugging and equality)."""

    # ----- helpers with sensible defaults -------------------------------------------------
    @property
    def over(self) -> bool:
        """True once the game ended or was truncated."""
        # The fields behind `terminal` and `truncated`: the env reads this several times a step.
        return self._terminal or self._truncated

    def potential(self, player: int) -> float | None:
        """How well `player` stands, in [-1, 1], from public facts only; None if the game defines none.

        Training may shape rewards with it (potential-based shaping leaves the best policy as it
        is); the game's own rewards never use it.
        """
        return None

    def seat_log(self, player: int) -> list[str]:
        """What happened since the last decision as `player` saw it; by default the public `log`
        (a game whose seats see private events, such as their own draws, tells them here)."""
        return list(getattr(self, "log", ()))

    def legal_actions(self) -> list[int]:
        """Legal action ids of `current_player`."""
        return np.flatnonzero(self.legal_mask()).tolist()

    def clone(self) -> Game:
        """An independent copy, including its own copy of the generator."""
        return copy.deepcopy(self)


def copy_rng(rng: np.random.Generator) -> np.random.Generator:
    """A generator with the same state that draws independently from now on."""
    other = np.random.Generator(type(rng.bit_generator)())
    other.bit_generator.state = rng.bit_generator.state
    return other
