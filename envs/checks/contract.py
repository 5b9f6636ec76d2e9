"""Checks of PettingZoo's API and the action-mask contract: the dict convention, PettingZoo's own
tests, each mask and observation seen on the walk, and exact masks at sampled decisions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from fowlplay.envs.checks.play import mask_of, try_action
from fowlplay.envs.checks.report import FAIL, PASS, CheckResult, one_line
from fowlplay.envs.checks.walk import DivergedError, GameRecord, Run, diverged_skip, pick, replay_to, revisit


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
        return CheckResult(name, FAIL, f"pettingzoo.test.{test}: {type(err).__name__}: {one_line(err)}")
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
        mask = mask_of(obs)
        tried["decisions"] += 1
        for action in candidates(mask):
            trial = env.clone() if run.has_clone else replay_to(run, record, step)
            refused, lost_at_once = try_action(trial, agent, action)
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

    picks = pick(run, s.exact_decisions, lambda rec, i: rec.has_legal[i])
    try:
        revisit(run, picks, visit)
    except DivergedError as err:
        return diverged_skip("mask_exact", err)
    how = "on clones" if run.has_clone else "on replays from the same seed"
    refused = ", ".join(
        f"{kind} ({count})" for kind, count in sorted(refusals.items(), key=lambda kv: -kv[1])
    )
    said = f"; masked-out actions refused by: {refused}" if refused else ""
    return tally.result(
        f"the mask was exact at {tried['decisions']} decisions ({tried['actions']} actions tried {how}){said}",
        {**tried, "refusals": dict(refusals)},
    )
