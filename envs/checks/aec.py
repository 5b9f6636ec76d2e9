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

The checks live by concern: `contract` (PettingZoo's API and the masks), `endings` (games end,
rewards), `seeding` (determinism) and `hidden` (clones, re-deals); they read the walk of `walk`,
which plays through `play`; `target` says what is checked and with which budgets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fowlplay.envs.checks.contract import (
    check_acting_has_legal,
    check_dict_convention,
    check_mask_exact,
    check_mask_shape_dtype,
    check_observation_in_space,
    check_pettingzoo_api,
    check_pettingzoo_seed,
    check_waiting_masks_zero,
)
from fowlplay.envs.checks.endings import check_games_end, check_rewards
from fowlplay.envs.checks.hidden import check_clone_independent, check_no_leak, check_redeal_changes_hidden
from fowlplay.envs.checks.play import quiet
from fowlplay.envs.checks.report import FAIL, PASS, SKIPPED, CheckReport, CheckResult, one_line
from fowlplay.envs.checks.seeding import (
    check_reset_seed_across_processes,
    check_reset_seed_fixes_game,
    check_seeds_differ,
)
from fowlplay.envs.checks.target import Settings, Target, TargetError, importable_name, resolve_target
from fowlplay.envs.checks.walk import Run, walk_games

#: The checks that read the action mask; skipped when the env does not follow the dict convention.
MASK_CHECKS = ("mask_shape_dtype", "acting_has_legal", "waiting_masks_zero", "mask_exact")
#: Checks of fowlplay's own contract, beyond what PettingZoo's API promises (a correct PettingZoo env,
#: such as classic's `leduc_holdem_v4`, which shows a waiting player its legal actions, may fail them).
CONVENTION_CHECKS = ("waiting_masks_zero", "clone_independent", "no_leak", "redeal_changes_hidden")

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
        fn, spec = env_fn, importable_name(env_fn)
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
    with quiet():
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
        walk_games(run)
    except Exception as err:  # reset or observe raised: the walk is cut short, games_end says so
        games = len(run.games)
        run.tally("games_end").fail(
            f"the walk stopped: the env raised {type(err).__name__}: {one_line(err)}",
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
            name, FAIL, f"the env raised {type(err).__name__} during this check: {one_line(err)}"
        )
