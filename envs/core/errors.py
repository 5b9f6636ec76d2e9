"""Errors raised by every fowlplay environment."""

from __future__ import annotations


class IllegalActionError(ValueError):
    """An action that is out of range or masked out; the game is left exactly as it was."""


class EnvOrderError(RuntimeError):
    """An AEC call made out of order (for example `step` before `reset`)."""


class UnknownAgentError(ValueError):
    """An agent name that is not one of the environment's `possible_agents`."""


class RedealError(RuntimeError):
    """`resample_hidden` found no world the player could not tell from the real one (its search is
    bounded); the game is left exactly as it was."""
