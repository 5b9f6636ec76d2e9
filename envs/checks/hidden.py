"""Checks of hidden information: clones are independent, and a re-deal of what an agent cannot see
changes nothing it sees while changing what it cannot, at least sometimes."""

from __future__ import annotations

from typing import Any

import numpy as np
from fowlplay.envs.checks.play import fingerprint, mask_of, trajectory_from_here
from fowlplay.envs.checks.report import FAIL, PASS, SKIPPED, CheckResult
from fowlplay.envs.checks.walk import DivergedError, GameRecord, Run, Tally, diverged_skip, pick, revisit


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
        revisit(run, pick(run, 3, lambda rec, i: True), visit)
    except DivergedError as err:
        return diverged_skip(name, err)
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
            problem = _leak_seen(env, copy, viewer, seen, after)
            if problem:
                leak.fail(problem, **where)
            counts["compared"], changed = _hidden_changed(env, copy, viewer)
            counts["changed"] += changed

    picks = pick(run, s.hidden_samples, lambda rec, i: True)
    try:
        revisit(run, picks, visit)
    except DivergedError as err:
        run.shared.update({n: diverged_skip(n, err) for n in ("no_leak", "redeal_changes_hidden")})
        return run.shared
    run.shared.update(_hidden_results(run, leak, counts))
    return run.shared


def _leak_seen(env, copy, viewer: str, seen, after) -> str | None:
    """What of `viewer`'s own view a re-deal of its unknowns changed (the first thing found), or None."""
    if fingerprint(_obs_part(seen)) != fingerprint(_obs_part(after)):
        return f"{viewer}'s observation changed when only what {viewer} cannot see was re-dealt"
    if mask_of(seen) is not None and not np.array_equal(mask_of(seen), mask_of(after)):
        return f"{viewer}'s action mask changed when only what {viewer} cannot see was re-dealt"
    if callable(getattr(env, "view", None)) and env.view(viewer) != copy.view(viewer):
        return f"{viewer}'s view(agent) text changed when only what {viewer} cannot see was re-dealt"
    if copy.agent_selection != env.agent_selection:
        return f"re-dealing {viewer}'s unknowns changed whose turn it is"
    return None


def _hidden_changed(env, copy, viewer: str) -> tuple[str, bool]:
    """(what was compared, whether the re-deal changed it): the state_dict() when the env has one,
    else the other agents' observations."""
    state = _state_dict(env)
    if state is not None:
        return "state_dict()", fingerprint(state) != fingerprint(_state_dict(copy))
    changed = any(
        fingerprint(env.observe(o)) != fingerprint(copy.observe(o)) for o in env.agents if o != viewer
    )
    return "other agents' observations", changed


def _hidden_results(run: Run, leak: Tally, counts: dict[str, Any]) -> dict[str, CheckResult]:
    """The two checks' results from the pass's tally and counts."""
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
    return out


def _snapshot(env) -> bytes:
    """A digest of everything the AEC API shows of an env, and its state_dict() when it has one."""
    seen = {a: env.observe(a) for a in env.agents}
    return fingerprint(
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
