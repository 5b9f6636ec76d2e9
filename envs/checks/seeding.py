"""Checks of determinism: `reset(seed)` fixes the game (here, in a fresh process, beside other
code's use of the global generators), and different seeds give different games."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from typing import Any

from fowlplay.envs.checks.play import quiet, trajectory, with_global_noise
from fowlplay.envs.checks.report import FAIL, PASS, SKIPPED, CheckResult
from fowlplay.envs.checks.target import resolve_target
from fowlplay.envs.checks.walk import Run


def trajectory_digest(
    target: str, kwargs: dict[str, Any], seed: int, action_seed: int, max_steps: int
) -> str:
    """One hex digest of `trajectory` for an env built from a `module:callable` target."""
    fn, _ = resolve_target(target)
    with quiet():
        steps = trajectory(fn(**kwargs), seed, action_seed, max_steps)
    return hashlib.sha256(repr(steps).encode()).hexdigest()


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
            with_global_noise(
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
        "import sys; from fowlplay.envs.checks.seeding import trajectory_digest as d; import json; "
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
