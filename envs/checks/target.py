"""What to check: the env factory, its keyword arguments, its importable name, and the budgets."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fowlplay.envs.checks.report import one_line

#: `module:callable`: an importable module and an attribute path in it (the form of every target).
TARGET_FORMAT = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class TargetError(ValueError):
    """An env target (`module:callable` or a registered game name) that cannot be turned into an env."""


@dataclass
class Settings:
    """The budgets of one run (games and decisions, never seconds)."""

    players: int | None = None
    games: int = 8
    seed: int = 0
    #: Decisions at which every candidate action is tried (`mask_exact`).
    exact_decisions: int = 24
    #: At most this many candidate actions per decision (all of them when the space is no larger).
    max_actions: int = 32
    #: Decisions at which hidden information is re-dealt (`no_leak`, `redeal_changes_hidden`).
    hidden_samples: int = 16
    #: `num_cycles` of PettingZoo's `api_test` and `seed_test`.
    api_cycles: int = 100
    #: A walked game that has not ended after this many decisions fails `games_end`.
    max_steps: int = 10_000
    #: Waiting agents are observed in every game whose index is a multiple of this (1: every game).
    waiting_every: int = 1


@dataclass
class Target:
    """How to build the env under test: a factory, its keyword arguments and, if known, its import name."""

    fn: Callable[..., Any]
    kwargs: dict[str, Any]
    spec: str | None  # "module:callable", importable in a fresh process

    def make(self):
        """A fresh env."""
        return self.fn(**self.kwargs)


def resolve_target(target: str) -> tuple[Callable[..., Any], str]:
    """(factory, "module:callable") for a `module:callable` string or a registered fowlplay game name."""
    from fowlplay import envs

    if target in envs.ENV_NAMES:
        module = envs.env_module(target)
        return module.env, f"{module.__name__}:env"
    if not TARGET_FORMAT.match(target):
        raise TargetError(
            f"{target!r} is neither MODULE:CALLABLE (e.g. mypackage.myenv:env) nor a registered game "
            f"({', '.join(envs.ENV_NAMES)})"
        )
    module_name, _, attr = target.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as err:
        raise TargetError(f"{target!r}: module {module_name!r} does not import ({one_line(err)})") from err
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise TargetError(f"{target!r}: module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise TargetError(f"{target!r} is not callable; it must build an AEC env")
    return obj, target


def importable_name(fn: Callable[..., Any]) -> str | None:
    """`module:qualname` of `fn` when importing that name gives `fn` back, else None."""
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if not module or not qualname or module == "__main__" or "<" in qualname:
        return None
    try:
        found, _ = resolve_target(f"{module}:{qualname}")
    except TargetError:
        return None
    return f"{module}:{qualname}" if found is fn else None
