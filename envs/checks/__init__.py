"""Action-mask testing toolkit: the fowlplay environment contract, for any PettingZoo AEC env.

    from fowlplay.envs.checks import check_aec_env
    report = check_aec_env(my_env_fn, players=3)   # or "mypackage.myenv:env", or "chicken_v1"
    print(report.table()); assert report.ok

`check_policy` plays a policy (an agent, a class of them, a callable or a `PolicyLoader`) and
measures how often it picks, or puts probability on, masked-out actions. The command line is
`fowlplay-check`, which lives with the evaluation tools because it also reads their agent specs;
docs/checking.md explains every check.
"""

from fowlplay.envs.checks.aec import CHECK_NAMES, CONVENTION_CHECKS, check_aec_env
from fowlplay.envs.checks.policy import PolicyError, PolicyLoader, PolicyReport, check_policy
from fowlplay.envs.checks.report import FAIL, PASS, SKIPPED, CheckReport, CheckResult
from fowlplay.envs.checks.target import TargetError, resolve_target

__all__ = [
    "CHECK_NAMES",
    "CONVENTION_CHECKS",
    "FAIL",
    "PASS",
    "SKIPPED",
    "CheckReport",
    "CheckResult",
    "PolicyError",
    "PolicyLoader",
    "PolicyReport",
    "TargetError",
    "check_aec_env",
    "check_policy",
    "resolve_target",
]
