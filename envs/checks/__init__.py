"""Action-mask testing toolkit: the fowlplay environment contract, for any PettingZoo AEC env.

    from fowlplay.envs.checks import check_aec_env
    report = check_aec_env(my_env_fn, players=3)   # or "mypackage.myenv:env", or "chicken_v1"
    print(report.table()); assert report.ok

`check_policy` plays a policy and measures how often it picks, or puts probability on, masked-out
actions. The command line is `fowlplay-check` (`python -m fowlplay.envs.checks`); docs/checking.md
explains every check.
"""

from fowlplay.envs.checks.aec import (
    CHECK_NAMES,
    CONVENTION_CHECKS,
    TargetError,
    check_aec_env,
    resolve_target,
)
from fowlplay.envs.checks.policy import PolicyReport, check_policy
from fowlplay.envs.checks.report import FAIL, PASS, SKIPPED, CheckReport, CheckResult

__all__ = [
    "CHECK_NAMES",
    "CONVENTION_CHECKS",
    "FAIL",
    "PASS",
    "SKIPPED",
    "CheckReport",
    "CheckResult",
    "PolicyReport",
    "TargetError",
    "check_aec_env",
    "check_policy",
    "resolve_target",
]
