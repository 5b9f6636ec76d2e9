"""`fowlplay-check`: check an AEC environment's action-mask contract, or a policy's use of masks.

The checks are `fowlplay.envs.checks`, which plays policies and callables; this module reads the
command line and the policy specs (`fowlplay-eval`'s agent specs, or MODULE:CALLABLE) above it.

    fowlplay-check chicken_v1
    fowlplay-check mypackage.myenv:env --players 3 --games 20 --json report.json
    fowlplay-check chicken_v1 --policy mypackage.agents:my_policy

Exit status: 0 when every check passes (skipped checks allowed), 1 when one fails, 2 for a usage error.
With --api-only the checks of fowlplay's own conventions are still run and shown, but only a failed
check of PettingZoo's API gives 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from fowlplay.envs import checks
from fowlplay.envs.checks import CHECK_NAMES, CONVENTION_CHECKS, TargetError, check_aec_env, resolve_target
from fowlplay.envs.checks.policy import PolicyError, PolicyLoader, policy_per_seat
from fowlplay.envs.checks.target import TARGET_FORMAT, Settings

USAGE_ERROR = 2


#: Agent kinds of `fowlplay.evaluation.agents` whose specs hold a colon (its `CHECKPOINT_PREFIXES` and
#: `ismcts:`, `oracle:`, `zoo:`), so that they are not read as MODULE:CALLABLE.
_AGENT_PREFIXES = ("ckpt", "ckpt-det", "ismcts", "oracle", "zoo")


class PolicySpecError(PolicyError):
    """A policy spec that names no agent kind and no importable `module:callable`."""


def _looks_like_module_callable(spec: str) -> bool:
    """True for `module:callable`; agent kinds with a colon (`ckpt:PATH`, `ismcts:N`) are not."""
    return bool(TARGET_FORMAT.match(spec)) and spec.partition(":")[0] not in _AGENT_PREFIXES


def policy_from_spec(spec: str) -> PolicyLoader:
    """The policy a `--policy` spec names: an agent spec of `fowlplay-eval` or MODULE:CALLABLE, loaded
    once the env exists (a spec naming nothing raises PolicySpecError then)."""
    if _looks_like_module_callable(spec):
        return PolicyLoader(lambda env, seed: _load_module_callable(spec, env))
    return PolicyLoader(lambda env, seed: _load_agents(spec, env, seed))


def _load_module_callable(spec: str, env) -> list:
    """One policy per seat from the object `module:callable` names."""
    try:
        obj, _ = resolve_target(spec)
    except TargetError as err:
        raise PolicySpecError(str(err).replace("it must build an AEC env", "it must be a policy")) from err
    return policy_per_seat(obj, env)


def _load_agents(spec: str, env, seed: int) -> list:
    """One `fowlplay-eval` agent per seat, seat i's seeded `seed + i`."""
    try:
        from fowlplay.evaluation.agents import make_agent
    except ImportError as err:
        raise PolicySpecError(
            f"policy spec {spec!r} needs fowlplay.evaluation ({err}); install it with: pip install 'fowlplay[eval]'"
        ) from err
    try:
        return [make_agent(spec, env, seed=seed + i) for i in range(len(env.possible_agents))]
    except (ValueError, ImportError) as err:  # AgentSpecError is a ValueError
        raise PolicySpecError(
            f"{err}; or MODULE:CALLABLE, a function of (observation, action_mask) returning an action or probabilities"
        ) from err


def check_policy(
    env_fn,
    spec: str,
    *,
    players: int | None = None,
    decisions: int = 2000,
    seed: int = 0,
    env_kwargs: dict | None = None,
) -> checks.PolicyReport:
    """`fowlplay.envs.checks.check_policy` for a policy spec (what `--policy` takes); the report names it."""
    return checks.check_policy(
        env_fn,
        policy_from_spec(spec),
        name=spec,
        players=players,
        decisions=decisions,
        seed=seed,
        env_kwargs=env_kwargs,
    )


# ----- the command line ---------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit 2)."""

    def error(self, message: str):
        """Print one line naming what is wrong, then exit 2."""
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    parser = _Parser(
        prog="fowlplay-check",
        description="Check a PettingZoo AEC environment's action masks (and more), or a policy's use of them.",
        epilog="Checks: " + ", ".join(CHECK_NAMES) + ". See docs/checking.md.",
    )
    parser.add_argument("target", help="MODULE:CALLABLE building the env, or a registered fowlplay game name")
    parser.add_argument("--players", type=int, help="passed to the env as num_players")
    parser.add_argument("--games", type=_positive, default=Settings.games, help="masked random games walked")
    parser.add_argument("--seed", type=_seed, default=0, help="base seed (>= 0): game g is reset with seed+g")
    parser.add_argument(
        "--exact-decisions",
        type=_positive,
        default=Settings.exact_decisions,
        help="decisions where every action is tried",
    )
    parser.add_argument(
        "--skip", nargs="+", default=[], choices=CHECK_NAMES, metavar="CHECK", help="checks not to run"
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the report as JSON to FILE")
    parser.add_argument(
        "--api-only",
        action="store_true",
        help="exit 0 when every check of PettingZoo's API passes; fowlplay's own conventions ("
        + ", ".join(CONVENTION_CHECKS)
        + ") are still run and reported",
    )
    parser.add_argument(
        "--policy",
        metavar="SPEC",
        help="instead of the env checks, play this policy and count masked-out choices: an agent spec "
        "of fowlplay-eval (random, baseline, ckpt:RUN_DIR, ...) or MODULE:CALLABLE of (observation, action_mask)",
    )
    parser.add_argument(
        "--decisions", type=_positive, default=2000, help="decisions the --policy plays (all seats together)"
    )
    return parser


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive integer")
    return value


def _seed(text: str) -> int:
    """A seed: an integer from 0 (reset seeds are never negative) to 2**63 - 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"{value} is not a seed: give an integer from 0 to 2**63 - 1")
    return value


def main(argv: list[str] | None = None) -> int:
    """Run the checks; 0 if all pass, 1 if any fails, 2 for a usage error."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.json is not None:  # refused before the checks run, not after
        if args.json.is_dir():
            parser.error(f"--json {args.json} is a folder; give the path of the file to write")
        if not args.json.parent.is_dir():
            parser.error(f"--json {args.json}: the folder {args.json.parent} does not exist")
    if "" not in sys.path and os.getcwd() not in sys.path:
        # MODULE:CALLABLE names a module of the current directory as `python -m` would find it
        sys.path.insert(0, os.getcwd())
    try:
        fn, spec = resolve_target(args.target)
        kwargs = {} if args.players is None else {"num_players": args.players}
        try:
            fn(**kwargs)
        except Exception as err:
            raise TargetError(f"{spec}({_call_args(kwargs)}) raised {type(err).__name__}: {err}") from err
        if args.policy is not None:
            report = check_policy(
                args.target, args.policy, players=args.players, decisions=args.decisions, seed=args.seed
            )
        else:
            report = check_aec_env(
                args.target,
                players=args.players,
                games=args.games,
                seed=args.seed,
                exact_decisions=args.exact_decisions,
                skip=args.skip,
            )
    except (TargetError, PolicyError) as err:
        print(f"fowlplay-check: error: {_first_line(err)}", file=sys.stderr)
        return USAGE_ERROR
    print(report.table())
    if args.json is not None:
        try:
            args.json.write_text(report.to_json() + "\n")
        except OSError as err:
            print(f"fowlplay-check: error: cannot write {args.json}: {err.strerror or err}", file=sys.stderr)
            return USAGE_ERROR
    if args.policy is None and args.api_only:
        return 0 if report.api_ok else 1
    return 0 if report.ok else 1


def _call_args(kwargs: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


def _first_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return lines[0] if lines else repr(err)


if __name__ == "__main__":
    sys.exit(main())
