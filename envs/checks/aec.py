"""`check_aec_env`: the action-mask contract, checked on any PettingZoo AEC environment.

Every check is one small function with a stable name (`CHECK_NAMES`). Most of them read one shared
*walk*: `games` games of masked uniform-random play from `reset(seed + g)`, recorded as seeds and
actions. The checks that need to try other actions (`mask_exact`, `no_leak`, ...) revisit sampled
decisions of the walk by replaying its actions, and try each candidate on a `clone()` when the
env has one, else on a fresh env replayed to the same decision. Budgets are games and decisions.

An action is *refused* when `step` raises, or sets an info key naming "illegal" (fowlplay's
`illegal_action="lose"`), or logs PettingZoo's illegal-move warning (classic's
`TerminateIllegalWrapper`, which ends the game with the actor losing). A masked-out action that
`step` accepts silently, even one that ends the game with the actor losing, fails `mask_exact`: an
unannounced loss is what a rules bug looks like (a fold the mask hides, accepted at any time).
A legal action that ends the game with the actor losing is an ordinary result.

Most checks are of PettingZoo's API and its action-mask convention; `CONVENTION_CHECKS` go beyond
it (fowlplay's own contract), so a correct PettingZoo env may fail them, and a report says so.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import json
import math
import numbers
import os
import random
import re
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from fowlplay.envs.checks.report import FAIL, PASS, SKIPPED, CheckReport, CheckResult

#: The checks that read the action mask; skipped when the env does not follow the dict convention.
MASK_CHECKS = ("mask_shape_dtype", "acting_has_legal", "waiting_masks_zero", "mask_exact")
#: Checks of fowlplay's own contract, beyond what PettingZoo's API promises (a correct PettingZoo env,
#: such as classic's `leduc_holdem_v4`, which shows a waiting player its legal actions, may fail them).
CONVENTION_CHECKS = ("waiting_masks_zero", "clone_independent", "no_leak", "redeal_changes_hidden")
#: PettingZoo's `EnvLogger.warn_on_illegal_move` text, as `TerminateIllegalWrapper` logs it.
_ILLEGAL_WARNING = "illegal move made"

_TARGET_FORMAT = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class TargetError(ValueError):
    """An env target (`module:callable` or a registered game name) that cannot be turned into an env."""


# ----- what to check: the env factory, its kwargs, and its importable name ------------------------


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
    if not _TARGET_FORMAT.match(target):
        raise TargetError(
            f"{target!r} is neither MODULE:CALLABLE (e.g. mypackage.myenv:env) nor a registered game "
            f"({', '.join(envs.ENV_NAMES)})"
        )
    module_name, _, attr = target.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as err:
        raise TargetError(f"{target!r}: module {module_name!r} does not import ({_one_line(err)})") from err
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise TargetError(f"{target!r}: module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise TargetError(f"{target!r} is not callable; it must build an AEC env")
    return obj, target


def _importable_name(fn: Callable[..., Any]) -> str | None:
    """`module:qualname` of `fn` when importing that name gives `fn` back, else None."""
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if not module or not qualname or module == "__main__" or "<" in qualname:
        return None
    try:
        found, _ = resolve_target(f"{module}:{qualname}")
    except TargetError:
        return None
    return f"{module}:{qualname}" if found is fn else None


# ----- playing: decisions, masks, fingerprints -------------------------------------------------


def _decisions(env, limit: int) -> Iterator[tuple[int, str, Any]]:
    """Yield (step, agent, observation) at each live decision; the caller steps. Dead agents step here."""
    step = 0
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        if step >= limit:
            return
        yield step, agent, obs
        step += 1


def _mask_of(obs: Any) -> np.ndarray | None:
    if isinstance(obs, dict) and "action_mask" in obs:
        return np.asarray(obs["action_mask"])
    return None


def _choose(env, agent: str, mask: np.ndarray | None, rng: np.random.Generator) -> int | None:
    """A uniformly random legal action (any action of a Discrete space without a mask); None if none."""
    if mask is not None:
        legal = np.flatnonzero(mask)
        return int(legal[rng.integers(legal.size)]) if legal.size else None
    n = getattr(env.action_space(agent), "n", None)
    return int(rng.integers(n)) if n else None


def _fingerprint(value: Any) -> bytes:
    """A short digest of nested dicts, lists, arrays and scalars (dtype and shape included)."""
    digest = hashlib.sha256()
    _feed(digest, value)
    return digest.digest()[:16]


def _feed(digest, value: Any) -> None:
    if isinstance(value, dict):
        digest.update(b"{")
        for key in sorted(value, key=repr):
            digest.update(repr(key).encode())
            _feed(digest, value[key])
        digest.update(b"}")
    elif isinstance(value, np.ndarray):
        digest.update(f"{value.dtype.str}{value.shape}".encode())
        digest.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (list, tuple)):
        digest.update(b"[")
        for item in value:
            _feed(digest, item)
        digest.update(b"]")
    else:
        digest.update(repr(value).encode())


def trajectory(env, seed: int, action_seed: int, max_steps: int, between: Callable[[], None] | None = None):
    """Digests of a masked random game from `reset(seed)`: per decision its agent, observation,
    action and every reward that followed. `between` runs before each step (other code's noise)."""
    env.reset(seed=seed)
    return trajectory_from_here(env, np.random.default_rng(action_seed), max_steps, between)


def trajectory_from_here(
    env, rng: np.random.Generator, max_steps: int, between: Callable[[], None] | None = None
) -> list[tuple[str, int, bytes]]:
    """`trajectory` from the env's current state, as (agent, action, digest) per decision; a refused
    step ends it (its error is part of the digest)."""
    out = []
    for _, agent, obs in _decisions(env, max_steps):
        action = _choose(env, agent, _mask_of(obs), rng)
        if action is None:
            break
        if between is not None:
            between()
        try:
            env.step(action)
        except Exception as err:  # mask_exact reports refusals; here it only ends the game
            out.append((agent, action, _fingerprint((obs, type(err).__name__))))
            break
        out.append((agent, action, _fingerprint((obs, {a: float(r) for a, r in env.rewards.items()}))))
    return out


def trajectory_digest(
    target: str, kwargs: dict[str, Any], seed: int, action_seed: int, max_steps: int
) -> str:
    """One hex digest of `trajectory` for an env built from a `module:callable` target."""
    fn, _ = resolve_target(target)
    with _quiet():
        steps = trajectory(fn(**kwargs), seed, action_seed, max_steps)
    return hashlib.sha256(repr(steps).encode()).hexdigest()


def _quick_key(obs: Any) -> int:
    """A fast in-process hash of an observation (dict of arrays, or anything `_fingerprint` takes)."""
    if isinstance(obs, dict) and len(obs) == 2:  # the convention: two arrays
        values = obs.get("observation"), obs.get("action_mask")
        if isinstance(values[0], np.ndarray) and isinstance(values[1], np.ndarray):
            return hash((values[0].tobytes(), values[1].tobytes(), values[1].dtype.str))
    if isinstance(obs, dict) and all(isinstance(v, np.ndarray) for v in obs.values()):
        return hash(tuple((k, v.dtype.str, v.shape, v.tobytes()) for k, v in obs.items()))
    return hash(_fingerprint(obs))


def _illegal_flag(env) -> tuple[str, Any] | None:
    """(agent, key) of the first info key (of any agent) whose name holds 'illegal' and whose value is truthy."""
    for agent, info in getattr(env, "infos", {}).items():
        if not info:
            continue
        for key, value in info.items():
            if "illegal" in str(key).lower() and value:
                return agent, key
    return None


def _logged_messages() -> list:
    """PettingZoo's `EnvLogger` queue: every warning its envs and wrappers have logged, in order."""
    from pettingzoo.utils.env_logger import EnvLogger

    return EnvLogger.mqueue


def _try_action(env, agent: str, action: int) -> tuple[Refusal | None, bool]:
    """Step `action` on a throwaway env: (how it was refused, or None; whether the game ended at once
    with a negative reward for the actor)."""
    logged = _logged_messages()
    before = len(logged)
    try:
        env.step(action)
    except Exception as err:
        return Refusal(f"step raised {type(err).__name__}", f": {_one_line(err)}"), False
    flag = _illegal_flag(env)
    if flag:
        return Refusal(f"step set info key {flag[1]!r}", f" (infos[{flag[0]!r}])"), False
    if any(_ILLEGAL_WARNING in str(message).lower() for message in logged[before:]):
        return Refusal("PettingZoo's illegal-move warning"), False
    lost = float(env.rewards.get(agent, 0.0)) < 0
    return None, lost and all(env.terminations.get(a) or env.truncations.get(a) for a in env.agents)


@dataclass(frozen=True)
class Refusal:
    """How `step` refused an action: `how` names the kind (counted per kind), `detail` adds this case."""

    how: str
    detail: str = ""

    def __str__(self) -> str:
        return self.how + self.detail


# ----- the walk ---------------------------------------------------------------------------------


@dataclass
class Tally:
    """One check's findings over many decisions: how many were looked at, the first failure's evidence."""

    name: str
    looked: int = 0
    failures: int = 0
    message: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)

    def fail(self, message: str, **evidence: Any) -> None:
        """Count a failure; the first one's message and evidence are the ones reported."""
        self.failures += 1
        if self.failures == 1:
            self.message, self.evidence = message, evidence

    def result(self, passed: str, data: dict[str, Any] | None = None) -> CheckResult:
        """FAIL with the first failure (and how many there were), else PASS with `passed`."""
        data = {"looked": self.looked, "failures": self.failures, **(data or {})}
        if self.failures:
            more = f" ({self.failures} failures in {self.looked} looked at)" if self.failures > 1 else ""
            return CheckResult(self.name, FAIL, self.message + more, self.evidence, data)
        return CheckResult(self.name, PASS, passed, {}, data)


@dataclass
class GameRecord:
    """One walked game: its seed, the actions played and a digest of each decision's observation."""

    seed: int
    actions: list[int] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    #: `_quick_key` of each decision's observation, to recognise the decision when it is replayed.
    keys: list[int] = field(default_factory=list)
    #: Whether each decision's mask offered a legal action.
    has_legal: list[bool] = field(default_factory=list)


@dataclass
class Run:
    """Everything the checks share: the target, the settings, the walk and its tallies."""

    target: Target
    settings: Settings
    convention: bool = True
    games: list[GameRecord] = field(default_factory=list)
    tallies: dict[str, Tally] = field(default_factory=dict)
    returns: list[dict[str, float]] = field(default_factory=list)
    has_clone: bool = False
    #: Results computed together by one pass and handed out by several checks.
    shared: dict[str, CheckResult] = field(default_factory=dict)
    #: Each agent's number of actions (Discrete spaces), looked up once.
    action_counts: dict[str, int | None] = field(default_factory=dict)

    def tally(self, name: str) -> Tally:
        """The tally of check `name` (created on first use)."""
        found = self.tallies.get(name)
        if found is None:
            found = self.tallies[name] = Tally(name)
        return found


def _walk(run: Run) -> None:
    """Play `games` masked random games, checking every decision and every reward on the way."""
    s = run.settings
    env = run.target.make()
    space_of = env.observation_space
    for g in range(s.games):
        seed = s.seed + g
        record = GameRecord(seed)
        run.games.append(record)
        env.reset(seed=seed)
        rng = np.random.default_rng([s.seed, g])
        totals: dict[str, float] = {a: 0.0 for a in env.possible_agents}
        steps = 0
        for step, agent, obs in _decisions(env, s.max_steps):
            steps = step + 1
            mask = _mask_of(obs)
            where = {"seed": seed, "step": step, "agent": agent}
            if run.convention:
                _check_decision(run, env, space_of, agent, obs, mask, where, g % s.waiting_every == 0)
            action = _choose(env, agent, mask, rng)
            record.agents.append(agent)
            record.keys.append(_quick_key(obs))
            record.has_legal.append(mask is not None and bool(mask.any()))
            if action is None:  # nothing legal to play: acting_has_legal has said so; abandon the game
                break
            refused, _ = _try_action(env, agent, action)
            if refused:  # not recorded: revisiting replays accepted actions only
                run.tally("walk_refused").fail(
                    f"legal action {action} was refused: {refused}", **where, action=action
                )
                break
            record.actions.append(action)
            _check_rewards(run, env, totals, where)
        else:
            if steps >= s.max_steps and env.agents:
                run.tally("games_end").fail(
                    f"the game had not ended after {s.max_steps} decisions", seed=seed, step=steps
                )
            else:
                run.returns.append(totals)
        run.tally("games_end").looked += 1


def _check_decision(run: Run, env, space_of, agent, obs, mask, where, waiting_too: bool) -> None:
    """The per-decision checks: the mask's shape and dtype, the observation's space, acting and waiting masks."""
    space = space_of(agent)
    _check_mask_space(run, env, space, agent, mask, where)
    _check_observation_space(run, space, obs, where)
    acting = run.tally("acting_has_legal")
    acting.looked += 1
    if mask is None or not mask.any():
        acting.fail(f"the acting agent {agent} has no legal action (its mask is all zeros)", **where)
    waiting = run.tally("waiting_masks_zero")
    for other in env.agents if waiting_too else ():
        if other == agent:
            continue
        other_obs = env.observe(other)
        other_mask = _mask_of(other_obs)
        waiting.looked += 1
        if other_mask is not None and np.asarray(other_mask).any():
            legal = np.flatnonzero(other_mask)[:8].tolist()
            waiting.fail(
                f"waiting agent {other} has legal actions {legal} while {agent} is to act",
                **where,
                waiting=other,
            )
        _check_mask_space(run, env, space_of(other), other, other_mask, {**where, "observed": other})
        _check_observation_space(run, space_of(other), other_obs, {**where, "observed": other})


def _check_mask_space(run: Run, env, space, agent, mask, where) -> None:
    """`mask_shape_dtype`: the mask has the declared shape and dtype, holds only 0/1 and fits the actions."""
    tally = run.tally("mask_shape_dtype")
    tally.looked += 1
    declared = space["action_mask"]
    n = run.action_counts.get(agent, False)
    if n is False:
        n = run.action_counts[agent] = getattr(env.action_space(agent), "n", None)
    if mask is None:
        tally.fail(f"{agent}'s observation has no action_mask", **where)
    elif mask.shape != declared.shape or mask.dtype != declared.dtype:
        tally.fail(
            f"{agent}'s mask has shape {mask.shape} and dtype {mask.dtype}; the observation space "
            f"declares shape {declared.shape} and dtype {declared.dtype}",
            **where,
        )
    elif n is not None and mask.shape != (int(n),):
        tally.fail(f"{agent}'s mask has shape {mask.shape}; its action space has {n} actions", **where)
    elif not _zeros_and_ones(mask):
        tally.fail(f"{agent}'s mask holds values other than 0 and 1: {np.unique(mask).tolist()}", **where)


def _zeros_and_ones(mask: np.ndarray) -> bool:
    """True when every entry is 0 or 1."""
    if mask.dtype.kind in "iub":
        return mask.size == 0 or (mask.min() >= 0 and mask.max() <= 1)
    return bool(((mask == 0) | (mask == 1)).all())


def _check_observation_space(run: Run, space, obs, where) -> None:
    """`observation_in_space`: obs["observation"] lies in the declared space (the mask is the check above's)."""
    tally = run.tally("observation_in_space")
    tally.looked += 1
    inner = space["observation"]
    value = obs.get("observation") if isinstance(obs, dict) else None
    if _inside_box(value, inner):
        return
    if value is None or not inner.contains(value):
        detail = ""
        if isinstance(value, np.ndarray) and hasattr(inner, "low") and value.shape == inner.shape:
            outside = np.flatnonzero((value < inner.low) | (value > inner.high))
            detail = f" (indices outside the bounds: {outside[:8].tolist()})" if outside.size else ""
        tally.fail(f"obs['observation'] is outside the declared observation space{detail}", **where)


def _inside_box(value: Any, box) -> bool:
    """A fast sufficient test for `box.contains(value)` (same shape and dtype, within the bounds)."""
    low, high = getattr(box, "low", None), getattr(box, "high", None)
    return (
        isinstance(value, np.ndarray)
        and low is not None
        and value.shape == box.shape
        and value.dtype == box.dtype
        and bool((value >= low).all() and (value <= high).all())
    )


_PLAIN_NUMBERS = (float, int, np.float64, np.float32, np.int64)


def _check_rewards(run: Run, env, totals: dict[str, float], where) -> None:
    """`rewards`: after each step every live agent has a reward, a finite real number."""
    tally = run.tally("rewards")
    tally.looked += 1
    missing = [a for a in env.agents if a not in env.rewards]
    if missing:
        tally.fail(f"no reward for {missing} after a step", **where)
        return
    for agent, reward in env.rewards.items():
        # exact types first: isinstance against the numbers ABC is slow on the hot path
        number = type(reward) in _PLAIN_NUMBERS or (
            isinstance(reward, numbers.Real) and not isinstance(reward, (bool, np.bool_))
        )
        if not number:
            tally.fail(f"{agent}'s reward {reward!r} is a {type(reward).__name__}, not a number", **where)
        elif not math.isfinite(reward):
            tally.fail(f"{agent}'s reward is {reward!r}", **where)
        else:
            totals[agent] = totals.get(agent, 0.0) + float(reward)


# ----- revisiting sampled decisions of the walk --------------------------------------------------


class _DivergedError(Exception):
    """Replaying a walked game's actions from its seed did not reach the same decision."""


#: Revisited decisions per replayed game: a few games, spread over the walk, each replayed once.
_PICKS_PER_GAME = 8


def _pick(run: Run, k: int, usable: Callable[[GameRecord, int], bool]) -> dict[int, list[int]]:
    """About `k` (game, step) pairs of the walk: about k/8 games spread over the walk, and in them
    decisions spread evenly from the first to the last (replaying a game costs a game)."""
    usable_steps = {
        g: [i for i in range(len(rec.actions)) if usable(rec, i)] for g, rec in enumerate(run.games)
    }
    games = [g for g, steps in usable_steps.items() if steps]
    if not games or k <= 0:
        return {}
    want = min(len(games), -(-k // _PICKS_PER_GAME))
    spread = sorted({games[j] for j in np.linspace(0, len(games) - 1, want).round().astype(int)})
    pool = [(g, i) for g in spread for i in usable_steps[g]]
    chosen: dict[int, list[int]] = {}
    for j in sorted(set(np.linspace(0, len(pool) - 1, min(k, len(pool))).round().astype(int).tolist())):
        g, i = pool[j]
        chosen.setdefault(g, []).append(i)
    return chosen


def _replay_to(run: Run, record: GameRecord, step: int):
    """A fresh env replayed from the record's seed to its decision `step`; _DivergedError if it went elsewhere."""
    env = run.target.make()
    env.reset(seed=record.seed)
    for i, agent, obs in _decisions(env, step + 1):
        if agent != record.agents[i] or _quick_key(obs) != record.keys[i]:
            raise _DivergedError(record.seed, i)
        if i == step:
            return env
        env.step(record.actions[i])
    raise _DivergedError(record.seed, step)


def _revisit(run: Run, picks: dict[int, list[int]], visit: Callable[..., None]) -> None:
    """Replay each picked game once, calling `visit(env, record, step, agent, obs)` at its picked steps."""
    for g, steps in picks.items():
        record = run.games[g]
        env = run.target.make()
        env.reset(seed=record.seed)
        wanted = set(steps)
        for i, agent, obs in _decisions(env, max(steps) + 1):
            if agent != record.agents[i] or _quick_key(obs) != record.keys[i]:
                raise _DivergedError(record.seed, i)
            if i in wanted:
                visit(env, record, i, agent, obs)
            env.step(record.actions[i])


def _diverged_skip(name: str, err: _DivergedError) -> CheckResult:
    seed, step = err.args
    return CheckResult(
        name,
        SKIPPED,
        f"could not revisit the walked decisions: replaying seed {seed} diverged at step {step} "
        "(the game is not fixed by reset(seed); see reset_seed_fixes_game)",
        {"seed": seed, "step": step},
    )


# ----- the checks --------------------------------------------------------------------------------


def check_dict_convention(run: Run) -> CheckResult:
    """Observations are dicts {"observation", "action_mask"} and the observation space says so."""
    env = run.target.make()
    env.reset(seed=run.settings.seed)
    agent = env.agent_selection
    obs = env.observe(agent)
    space = env.observation_space(agent)
    keys = set(getattr(space, "spaces", {}) or {})
    problems = []
    if not isinstance(obs, dict) or not {"observation", "action_mask"} <= set(obs):
        problems.append(
            f"observe() returned {type(obs).__name__}"
            + (f" with keys {sorted(obs)}" if isinstance(obs, dict) else "")
        )
    if not {"observation", "action_mask"} <= keys:
        problems.append(
            f"observation_space is {type(space).__name__}" + (f" with keys {sorted(keys)}" if keys else "")
        )
    if problems:
        run.convention = False
        return CheckResult(
            "dict_convention",
            FAIL,
            "the env does not follow the convention observation = {'observation': ..., 'action_mask': "
            "int8 0/1 per action} (and a gymnasium Dict observation space with both keys): "
            f"{'; '.join(problems)}; "
            "the mask checks are skipped",
            {"seed": run.settings.seed, "agent": agent},
        )
    return CheckResult("dict_convention", PASS, "observations are {'observation', 'action_mask'} dicts")


def check_pettingzoo_api(run: Run) -> CheckResult:
    """PettingZoo's own `api_test`."""
    from pettingzoo.test import api_test

    return _pettingzoo_test(
        "pettingzoo_api",
        "api_test",
        lambda: api_test(run.target.make(), num_cycles=run.settings.api_cycles),
        run,
    )


def check_pettingzoo_seed(run: Run) -> CheckResult:
    """PettingZoo's own `seed_test` (two envs reset with one seed play alike)."""
    from pettingzoo.test import seed_test

    return _pettingzoo_test(
        "pettingzoo_seed",
        "seed_test",
        lambda: seed_test(run.target.make, num_cycles=run.settings.api_cycles),
        run,
    )


def _pettingzoo_test(name: str, test: str, call: Callable[[], Any], run: Run) -> CheckResult:
    """Run one of PettingZoo's own tests as check `name`: its exception, in one line, is the failure."""
    try:
        call()
    except Exception as err:
        return CheckResult(name, FAIL, f"pettingzoo.test.{test}: {type(err).__name__}: {_one_line(err)}")
    return CheckResult(name, PASS, f"pettingzoo.test.{test} passed ({run.settings.api_cycles} cycles)")


def check_mask_shape_dtype(run: Run) -> CheckResult:
    """Every mask seen (acting and waiting agents) has the declared shape and dtype and only 0/1."""
    return run.tally("mask_shape_dtype").result(
        "every mask has the declared shape and dtype and holds only 0/1"
    )


def check_observation_in_space(run: Run) -> CheckResult:
    """Every obs["observation"] seen lies in the declared observation space."""
    return run.tally("observation_in_space").result("every observation lies in its declared space")


def check_acting_has_legal(run: Run) -> CheckResult:
    """The acting agent always has at least one legal action."""
    return run.tally("acting_has_legal").result("the acting agent always had a legal action")


def check_waiting_masks_zero(run: Run) -> CheckResult:
    """Every agent that is not acting has an all-zero mask."""
    return run.tally("waiting_masks_zero").result("every waiting agent's mask was all zeros")


def check_mask_exact(run: Run) -> CheckResult:
    """At sampled decisions every masked-out action is refused and every legal action accepted."""
    s = run.settings
    tally = run.tally("mask_exact")
    walked = run.tallies.get("walk_refused")
    if walked and walked.failures:  # the walk itself played a legal action that was refused
        tally.fail(walked.message, **walked.evidence)
    rng = np.random.default_rng([s.seed, 1])
    tried = {"decisions": 0, "actions": 0}
    #: How masked-out actions were refused: kind -> count (reported by name in the message).
    refusals: dict[str, int] = {}

    def candidates(mask: np.ndarray) -> list[int]:
        legal, illegal = np.flatnonzero(mask), np.flatnonzero(mask == 0)
        if legal.size + illegal.size <= s.max_actions:
            return [*legal.tolist(), *illegal.tolist()]
        half = max(1, s.max_actions // 2)
        take_legal = min(legal.size, max(half, s.max_actions - illegal.size))
        take_illegal = min(illegal.size, s.max_actions - take_legal)
        return [
            *rng.choice(legal, take_legal, replace=False).tolist(),
            *rng.choice(illegal, take_illegal, replace=False).tolist(),
        ]

    def visit(env, record: GameRecord, step: int, agent: str, obs) -> None:
        mask = _mask_of(obs)
        tried["decisions"] += 1
        for action in candidates(mask):
            trial = env.clone() if run.has_clone else _replay_to(run, record, step)
            refused, lost_at_once = _try_action(trial, agent, action)
            tried["actions"] += 1
            tally.looked += 1
            where = {"seed": record.seed, "step": step, "agent": agent, "action": action}
            if mask[action] and refused:
                tally.fail(f"action {action} is legal in the mask but was refused: {refused}", **where)
            elif not mask[action] and refused:
                refusals[refused.how] = refusals.get(refused.how, 0) + 1
            elif not mask[action] and lost_at_once:
                tally.fail(
                    f"action {action} is masked out, yet step accepted it and ended the game with {agent} "
                    "losing, without announcing an illegal move (no exception, no info key naming "
                    "'illegal', no PettingZoo illegal-move warning): a silent loss, as from a rules bug",
                    **where,
                )
            elif not mask[action]:
                tally.fail(f"action {action} is masked out but step accepted it", **where)

    picks = _pick(run, s.exact_decisions, lambda rec, i: rec.has_legal[i])
    try:
        _revisit(run, picks, visit)
    except _DivergedError as err:
        return _diverged_skip("mask_exact", err)
    how = "on clones" if run.has_clone else "on replays from the same seed"
    refused = ", ".join(
        f"{kind} ({count})" for kind, count in sorted(refusals.items(), key=lambda kv: -kv[1])
    )
    said = f"; masked-out actions refused by: {refused}" if refused else ""
    return tally.result(
        f"the mask was exact at {tried['decisions']} decisions ({tried['actions']} actions tried {how}){said}",
        {**tried, "refusals": dict(refusals)},
    )


def check_games_end(run: Run) -> CheckResult:
    """Every walked game ended within `max_steps` decisions."""
    return run.tally("games_end").result(
        f"{len(run.games)} masked random games each ended within {run.settings.max_steps} decisions"
    )


def check_rewards(run: Run) -> CheckResult:
    """Rewards are finite numbers for every agent; whether returns sum to zero is reported, not judged."""
    returns = [sum(r.values()) for r in run.returns]
    zero_sum = bool(returns) and all(abs(total) < 1e-6 for total in returns)
    values = [v for r in run.returns for v in r.values()]
    data = {
        "zero_sum": zero_sum,
        "games": len(run.returns),
        "min_return": min(values, default=None),
        "max_return": max(values, default=None),
    }
    if not returns:
        note = "no walked game was played to its end, so zero-sum is unknown"
    elif zero_sum:
        note = "zero-sum in every game"
    else:
        note = "not zero-sum (the returns of some game do not sum to 0)"
    return run.tally("rewards").result(f"every reward was a finite number for every agent; {note}", data)


def check_reset_seed_fixes_game(run: Run) -> CheckResult:
    """reset(seed) fixes the game: same instance reseeded, a fresh instance, and with other code using
    the global `random` / `np.random` generators between steps, all play the same game."""
    s = run.settings
    seed = s.seed
    env = run.target.make()
    first = trajectory(env, seed, 0, s.max_steps)
    trajectory(env, seed + 1, 0, s.max_steps)
    variants = {
        "the same instance reset with the same seed again": lambda: trajectory(env, seed, 0, s.max_steps),
        "a fresh instance while other code reseeds and draws from random and np.random": lambda: (
            _with_global_noise(
                lambda noise: trajectory(run.target.make(), seed, 0, s.max_steps, between=noise)
            )
        ),
    }
    for what, play in variants.items():
        other = play()
        if other != first:
            step = next(
                (i for i, (a, b) in enumerate(zip(first, other)) if a != b), min(len(first), len(other))
            )
            evidence: dict[str, Any] = {"seed": seed, "step": step}
            if step < len(first):  # the decision as the first run met it
                evidence.update(agent=first[step][0], action=first[step][1])
            return CheckResult(
                "reset_seed_fixes_game",
                FAIL,
                f"{what} played a different game from step {step} on (observation, mask, action or rewards differ)",
                evidence,
            )
    return CheckResult(
        "reset_seed_fixes_game",
        PASS,
        f"reset(seed={seed}) replayed the same {len(first)} decisions (reseeded, fresh instance, global generators used)",
    )


def check_reset_seed_across_processes(run: Run) -> CheckResult:
    """The same seed plays the same game in a fresh Python process (other hash seed, nothing pickled)."""
    name = "reset_seed_across_processes"
    s, target = run.settings, run.target
    if target.spec is None:
        return CheckResult(
            name, SKIPPED, "env_fn has no importable name; pass it as 'module:callable' to run this check"
        )
    try:
        kwargs_json = json.dumps(target.kwargs)
    except TypeError:
        return CheckResult(
            name, SKIPPED, "the env kwargs are not JSON values, so a fresh process cannot rebuild the env"
        )
    here = trajectory_digest(target.spec, target.kwargs, s.seed, 0, s.max_steps)
    script = (
        "import sys; from fowlplay.envs.checks.aec import trajectory_digest as d; import json; "
        "print(d(sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), 0, int(sys.argv[4])))"
    )
    path = os.pathsep.join([os.getcwd(), *(p for p in sys.path if p)])
    child_env = {**os.environ, "PYTHONPATH": path, "PYTHONHASHSEED": "4242"}
    out = subprocess.run(
        [sys.executable, "-c", script, target.spec, kwargs_json, str(s.seed), str(s.max_steps)],
        capture_output=True,
        text=True,
        env=child_env,
    )
    if out.returncode != 0:
        tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
        return CheckResult(
            name, FAIL, f"the fresh process failed to play {target.spec}: {tail}", {"seed": s.seed}
        )
    if out.stdout.strip() != here:
        return CheckResult(
            name,
            FAIL,
            f"seed {s.seed} played a different game in a fresh process than in this one",
            {"seed": s.seed},
        )
    return CheckResult(name, PASS, f"seed {s.seed} played the same game in a fresh process ({target.spec})")


def check_seeds_differ(run: Run) -> CheckResult:
    """Different seeds give different games (skipped, not failed, when they never do: a game without chance)."""
    s = run.settings
    env = run.target.make()
    base = trajectory(env, s.seed, 0, s.max_steps)
    for other in range(s.seed + 1, s.seed + 4):
        if trajectory(env, other, 0, s.max_steps) != base:
            return CheckResult("seeds_differ", PASS, f"seeds {s.seed} and {other} gave different games")
    return CheckResult(
        "seeds_differ",
        SKIPPED,
        f"seeds {s.seed}..{s.seed + 3} gave the same game under the same actions: the game has no chance "
        "events, or reset ignores its seed",
    )


def check_clone_independent(run: Run) -> CheckResult:
    """Where `clone()` exists: a clone starts equal, playing it leaves the original as it was, and two
    clones given the same actions play alike."""
    name = "clone_independent"
    if not run.has_clone:
        return CheckResult(name, SKIPPED, "the env has no clone(); mask_exact replays from the seed instead")
    tally = run.tally(name)
    s = run.settings

    def visit(env, record: GameRecord, step: int, agent: str, obs) -> None:
        where = {"seed": record.seed, "step": step, "agent": agent}
        before = _snapshot(env)
        tally.looked += 1
        plays = []
        for _ in range(2):
            copy = env.clone()
            if _snapshot(copy) != before:
                tally.fail("a fresh clone differs from the original", **where)
                return
            plays.append(trajectory_from_here(copy, np.random.default_rng([s.seed, step]), s.max_steps))
        if _snapshot(env) != before:
            tally.fail("playing a clone changed the original", **where)
        elif plays[0] != plays[1]:
            tally.fail("two clones of one state given the same actions played differently", **where)

    try:
        _revisit(run, _pick(run, 3, lambda rec, i: True), visit)
    except _DivergedError as err:
        return _diverged_skip(name, err)
    return tally.result(f"clones were independent and faithful at {tally.looked} decisions")


def check_no_leak(run: Run) -> CheckResult:
    """Where `clone()` and `resample_hidden()` exist: re-dealing what an agent cannot see leaves its
    observation, mask and (if any) `view(agent)` unchanged."""
    return _hidden_checks(run)["no_leak"]


def check_redeal_changes_hidden(run: Run) -> CheckResult:
    """Where `resample_hidden()` exists: a re-deal changes other agents' hidden state at least sometimes."""
    return _hidden_checks(run)["redeal_changes_hidden"]


def _hidden_checks(run: Run) -> dict[str, CheckResult]:
    """Both hidden-information checks, from one pass (cached on the run)."""
    if "no_leak" in run.shared:
        return run.shared
    probe = run.target.make()
    if not (run.has_clone and callable(getattr(probe, "resample_hidden", None))):
        why = "the env has no clone() and resample_hidden(agent, seed); nothing to re-deal"
        run.shared.update({n: CheckResult(n, SKIPPED, why) for n in ("no_leak", "redeal_changes_hidden")})
        return run.shared
    s = run.settings
    leak = run.tally("no_leak")
    counts = {"samples": 0, "changed": 0, "compared": None}
    rng = np.random.default_rng([s.seed, 2])

    def visit(env, record: GameRecord, step: int, agent: str, obs) -> None:
        viewers = [agent]
        others = [a for a in env.agents if a != agent]
        if others:
            viewers.append(others[int(rng.integers(len(others)))])
        for viewer in viewers:
            where = {"seed": record.seed, "step": step, "agent": viewer}
            seen = env.observe(viewer)
            copy = env.clone()
            copy.resample_hidden(viewer, seed=int(rng.integers(2**31)))
            after = copy.observe(viewer)
            leak.looked += 1
            counts["samples"] += 1
            if _fingerprint(_obs_part(seen)) != _fingerprint(_obs_part(after)):
                leak.fail(
                    f"{viewer}'s observation changed when only what {viewer} cannot see was re-dealt", **where
                )
            elif _mask_of(seen) is not None and not np.array_equal(_mask_of(seen), _mask_of(after)):
                leak.fail(
                    f"{viewer}'s action mask changed when only what {viewer} cannot see was re-dealt", **where
                )
            elif callable(getattr(env, "view", None)) and env.view(viewer) != copy.view(viewer):
                leak.fail(
                    f"{viewer}'s view(agent) text changed when only what {viewer} cannot see was re-dealt",
                    **where,
                )
            elif copy.agent_selection != env.agent_selection:
                leak.fail(f"re-dealing {viewer}'s unknowns changed whose turn it is", **where)
            state = _state_dict(env)
            if state is not None:
                counts["compared"] = "state_dict()"
                changed = _fingerprint(state) != _fingerprint(_state_dict(copy))
            else:
                counts["compared"] = "other agents' observations"
                changed = any(
                    _fingerprint(env.observe(o)) != _fingerprint(copy.observe(o))
                    for o in env.agents
                    if o != viewer
                )
            counts["changed"] += changed

    picks = _pick(run, s.hidden_samples, lambda rec, i: True)
    try:
        _revisit(run, picks, visit)
    except _DivergedError as err:
        run.shared.update({n: _diverged_skip(n, err) for n in ("no_leak", "redeal_changes_hidden")})
        return run.shared
    data = dict(counts)
    out = {
        "no_leak": leak.result(
            f"{counts['samples']} re-deals left the viewer's observation, mask and view as they were", data
        )
    }
    name = "redeal_changes_hidden"
    if counts["samples"] == 0:
        out[name] = CheckResult(name, SKIPPED, "no decision to re-deal at", {}, data)
    elif counts["changed"] == 0:
        out[name] = CheckResult(
            name,
            FAIL,
            f"resample_hidden changed nothing in {counts['samples']} re-deals (compared {counts['compared']}): "
            "a re-deal that never re-deals makes no-leak tests vacuous",
            {"seed": run.games[0].seed},
            data,
        )
    else:
        out[name] = CheckResult(
            name,
            PASS,
            f"{counts['changed']} of {counts['samples']} re-deals changed the hidden state (compared {counts['compared']})",
            {},
            data,
        )
    run.shared.update(out)
    return run.shared


def _snapshot(env) -> bytes:
    """A digest of everything the AEC API shows of an env, and its state_dict() when it has one."""
    seen = {a: env.observe(a) for a in env.agents}
    return _fingerprint(
        (env.agent_selection, list(env.agents), dict(env._cumulative_rewards), seen, _state_dict(env))
    )


def _state_dict(env) -> Any:
    """`env.state_dict()`, or `env.game.state_dict()` (fowlplay's engines), or None."""
    for owner in (env, getattr(env, "game", None), getattr(getattr(env, "unwrapped", None), "game", None)):
        fn = getattr(owner, "state_dict", None)
        if callable(fn):
            return fn()
    return None


def _obs_part(obs: Any) -> Any:
    return obs.get("observation") if isinstance(obs, dict) else obs


#: name -> check function, in report order.
CHECKS: dict[str, Callable[[Run], CheckResult]] = {
    "dict_convention": check_dict_convention,
    "pettingzoo_api": check_pettingzoo_api,
    "pettingzoo_seed": check_pettingzoo_seed,
    "mask_shape_dtype": check_mask_shape_dtype,
    "observation_in_space": check_observation_in_space,
    "acting_has_legal": check_acting_has_legal,
    "waiting_masks_zero": check_waiting_masks_zero,
    "mask_exact": check_mask_exact,
    "games_end": check_games_end,
    "rewards": check_rewards,
    "reset_seed_fixes_game": check_reset_seed_fixes_game,
    "reset_seed_across_processes": check_reset_seed_across_processes,
    "seeds_differ": check_seeds_differ,
    "clone_independent": check_clone_independent,
    "no_leak": check_no_leak,
    "redeal_changes_hidden": check_redeal_changes_hidden,
}
#: Every check, in the order a report lists them.
CHECK_NAMES = tuple(CHECKS)


# ----- the entry point ---------------------------------------------------------------------------


def check_aec_env(
    env_fn: Callable[..., Any] | str,
    *,
    players: int | None = None,
    games: int = Settings.games,
    seed: int = Settings.seed,
    exact_decisions: int = Settings.exact_decisions,
    max_actions: int = Settings.max_actions,
    hidden_samples: int = Settings.hidden_samples,
    api_cycles: int = Settings.api_cycles,
    max_steps: int = Settings.max_steps,
    waiting_every: int = Settings.waiting_every,
    env_kwargs: dict[str, Any] | None = None,
    skip: tuple[str, ...] | list[str] = (),
) -> CheckReport:
    """Check an AEC env factory (a callable, `module:callable` or a registered game name) against the
    action-mask contract; `players` is passed as `num_players`. Returns a report, one result per check."""
    if isinstance(env_fn, str):
        fn, spec = resolve_target(env_fn)
    elif callable(env_fn):
        fn, spec = env_fn, _importable_name(env_fn)
    else:
        raise TargetError(
            f"env_fn must be a callable or a 'module:callable' string, not {type(env_fn).__name__}"
        )
    unknown = sorted(set(skip) - set(CHECK_NAMES))
    if unknown:
        raise ValueError(f"skip names unknown checks {unknown}; checks: {list(CHECK_NAMES)}")
    positive = {
        "games": games,
        "exact_decisions": exact_decisions,
        "max_actions": max_actions,
        "waiting_every": waiting_every,
    }
    for label, value in positive.items():
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{label} must be a positive integer, not {value!r}")
    kwargs = dict(env_kwargs or {})
    if players is not None:
        kwargs["num_players"] = players
    settings = Settings(
        players,
        games,
        seed,
        exact_decisions,
        max_actions,
        hidden_samples,
        api_cycles,
        max_steps,
        waiting_every,
    )
    run = Run(Target(fn, kwargs, spec), settings)
    try:
        run.target.make()
    except Exception as err:
        args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        raise TargetError(
            f"building the env failed: {spec or fn}({args}) raised {type(err).__name__}: {err}"
        ) from err
    name = spec or getattr(fn, "__qualname__", repr(fn))
    report = CheckReport(
        name,
        {
            "players": players,
            "games": games,
            "seed": seed,
            "exact_decisions": exact_decisions,
            "hidden_samples": hidden_samples,
            "env_kwargs": kwargs or None,
        },
    )
    with _quiet():
        _run_checks(run, report, skip)
    for result in report.results:
        result.convention = result.name in CONVENTION_CHECKS
    return report


def _run_checks(run: Run, report: CheckReport, skip) -> None:
    """The walk, then every check in report order, each result appended to `report`."""
    convention = _guarded("dict_convention", check_dict_convention, run)
    run.convention = run.convention and convention.status == PASS
    report.results.append(convention)
    run.has_clone = callable(getattr(run.target.make(), "clone", None))
    try:
        _walk(run)
    except Exception as err:  # reset or observe raised: the walk is cut short, games_end says so
        games = len(run.games)
        run.tally("games_end").fail(
            f"the walk stopped: the env raised {type(err).__name__}: {_one_line(err)}",
            seed=run.games[-1].seed if games else run.settings.seed,
            step=len(run.games[-1].agents) if games else 0,
        )
    for check_name, check in list(CHECKS.items())[1:]:
        if check_name in skip:
            report.results.append(CheckResult(check_name, SKIPPED, "skipped on request"))
        elif not run.convention and check_name in (*MASK_CHECKS, "observation_in_space"):
            report.results.append(
                CheckResult(
                    check_name,
                    SKIPPED,
                    "the env does not follow the {'observation', 'action_mask'} convention",
                )
            )
        else:
            report.results.append(_guarded(check_name, check, run))


def _guarded(name: str, check: Callable[[Run], CheckResult], run: Run) -> CheckResult:
    """Run one check; an exception the env raised inside it is that check's failure, not a crash."""
    try:
        return check(run)
    except Exception as err:
        return CheckResult(
            name, FAIL, f"the env raised {type(err).__name__} during this check: {_one_line(err)}"
        )


def _with_global_noise(play: Callable[[Callable[[], None]], Any]) -> Any:
    """Run `play(noise)` where `noise()` reseeds and draws from `random` and `np.random`; restore both after."""
    saved_random, saved_np = random.getstate(), np.random.get_state()
    draws = np.random.default_rng(12345)

    def noise() -> None:
        np.random.seed(int(draws.integers(2**31)))
        np.random.random()
        random.seed(int(draws.integers(2**31)))
        random.random()

    try:
        return play(noise)
    finally:
        random.setstate(saved_random)
        np.random.set_state(saved_np)


@contextmanager
def _quiet():
    """Silence warnings, PettingZoo's logger and api_test's prints while checks run."""
    from pettingzoo.utils.env_logger import EnvLogger

    with warnings.catch_warnings(), redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        EnvLogger.suppress_output()
        try:
            yield
        finally:
            EnvLogger.unsuppress_output()


def _one_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else repr(err)
