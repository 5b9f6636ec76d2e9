"""The shared walk every check reads: masked random games recorded as seeds and actions, the
per-decision tallies taken on the way, and revisiting sampled decisions by replaying them."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from fowlplay.envs.checks.play import choose_legal, live_decisions, mask_of, quick_key, try_action
from fowlplay.envs.checks.report import FAIL, PASS, SKIPPED, CheckResult
from fowlplay.envs.checks.target import Settings, Target


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
    #: `quick_key` of each decision's observation, to recognise the decision when it is replayed.
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


def walk_games(run: Run) -> None:
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
        for step, agent, obs in live_decisions(env, s.max_steps):
            steps = step + 1
            mask = mask_of(obs)
            where = {"seed": seed, "step": step, "agent": agent}
            if run.convention:
                _check_decision(run, env, space_of, agent, obs, mask, where, g % s.waiting_every == 0)
            action = choose_legal(env, agent, mask, rng)
            record.agents.append(agent)
            record.keys.append(quick_key(obs))
            record.has_legal.append(mask is not None and bool(mask.any()))
            if action is None:  # nothing legal to play: acting_has_legal has said so; abandon the game
                break
            refused, _ = try_action(env, agent, action)
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
        other_mask = mask_of(other_obs)
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


class DivergedError(Exception):
    """Replaying a walked game's actions from its seed did not reach the same decision."""


#: Revisited decisions per replayed game: a few games, spread over the walk, each replayed once.
_PICKS_PER_GAME = 8


def pick(run: Run, k: int, usable: Callable[[GameRecord, int], bool]) -> dict[int, list[int]]:
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


def replay_to(run: Run, record: GameRecord, step: int):
    """A fresh env replayed from the record's seed to its decision `step`; DivergedError if it went elsewhere."""
    env = run.target.make()
    env.reset(seed=record.seed)
    for i, agent, obs in live_decisions(env, step + 1):
        if agent != record.agents[i] or quick_key(obs) != record.keys[i]:
            raise DivergedError(record.seed, i)
        if i == step:
            return env
        env.step(record.actions[i])
    raise DivergedError(record.seed, step)


def revisit(run: Run, picks: dict[int, list[int]], visit: Callable[..., None]) -> None:
    """Replay each picked game once, calling `visit(env, record, step, agent, obs)` at its picked steps."""
    for g, steps in picks.items():
        record = run.games[g]
        env = run.target.make()
        env.reset(seed=record.seed)
        wanted = set(steps)
        for i, agent, obs in live_decisions(env, max(steps) + 1):
            if agent != record.agents[i] or quick_key(obs) != record.keys[i]:
                raise DivergedError(record.seed, i)
            if i in wanted:
                visit(env, record, i, agent, obs)
            env.step(record.actions[i])


def diverged_skip(name: str, err: DivergedError) -> CheckResult:
    seed, step = err.args
    return CheckResult(
        name,
        SKIPPED,
        f"could not revisit the walked decisions: replaying seed {seed} diverged at step {step} "
        "(the game is not fixed by reset(seed); see reset_seed_fixes_game)",
        {"seed": seed, "step": step},
    )
