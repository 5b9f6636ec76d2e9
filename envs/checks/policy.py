"""`check_policy`: how often a policy picks, or puts probability on, actions its mask rules out.

The policy plays every seat of masked games for a budget of decisions. It is whatever makes a
learner's masking code testable: an agent spec of `fowlplay-eval` (`random`, `baseline`,
`ckpt:RUN_DIR`, ...) or a `module:callable` that maps (observation, action_mask) to an action or
to a probability vector. Where the env offers `illegal_action="lose"` it is built with it, so a
masked-out choice ends that game (as in training with PettingZoo classic's rule) instead of
stopping the run; elsewhere the game is abandoned after the violation.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from fowlplay.envs.checks.aec import (
    _TARGET_FORMAT,
    TargetError,
    _decisions,
    _importable_name,
    _quiet,
    resolve_target,
)

#: Probability on masked-out actions at or below this counts as none (float rounding of a softmax).
PROBABILITY_TOLERANCE = 1e-6


#: Agent kinds of `fowlplay.evaluation.agents` whose specs hold a colon.
_AGENT_PREFIXES = ("ckpt", "ckpt-det", "ismcts")


class PolicySpecError(ValueError):
    """A policy spec that names no agent kind and no importable `module:callable`."""


@dataclass
class PolicyReport:
    """What a policy did with its masks: masked-out picks and the probability it put on them."""

    target: str
    policy: str
    decisions: int = 0
    games: int = 0
    violations: int = 0
    #: True when the policy exposed its action probabilities (then the two figures below are set).
    probabilities: bool = False
    masked_probability_mean: float | None = None
    masked_probability_max: float | None = None
    #: seed, step, agent, action and legal actions of the first masked-out pick.
    first_violation: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when the policy never picked, nor put probability on, a masked-out action."""
        mass = self.masked_probability_max or 0.0
        return self.violations == 0 and mass <= PROBABILITY_TOLERANCE

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values (with `ok`)."""
        return {**asdict(self), "ok": self.ok}

    def to_json(self, indent: int | None = 2) -> str:
        """`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)

    def table(self) -> str:
        """A few readable lines."""
        rate = self.violations / self.decisions if self.decisions else 0.0
        lines = [
            f"fowlplay-check {self.target} --policy {self.policy}",
            f"  decisions played          {self.decisions} (in {self.games} games)",
            f"  masked-out actions chosen {self.violations} ({rate:.2%})",
        ]
        if self.probabilities:
            lines.append(
                f"  probability on masked-out mean {self.masked_probability_mean:.3g}, "
                f"max {self.masked_probability_max:.3g}"
            )
        else:
            lines.append("  probability on masked-out (the policy exposes no probabilities)")
        if self.first_violation:
            shown = ", ".join(f"{k}={v!r}" for k, v in self.first_violation.items())
            lines.append(f"  first violation: {shown}")
        lines.append(
            "OK: the policy respected every mask" if self.ok else "FAILED: the policy used masked-out actions"
        )
        return "\n".join(lines)

    __str__ = table


class _Seat:
    """One seat's policy: `decide(observation, mask)` -> (action, probabilities or None)."""

    def __init__(self, decide: Callable[[np.ndarray, np.ndarray], tuple[int, np.ndarray | None]], reset=None):
        self.decide = decide
        self.reset = reset or (lambda seed: None)


def _from_agent(agent) -> _Seat:
    """A fowlplay `Agent`; its probabilities when it has `probabilities` (and `choose`, to draw once)."""
    probabilities = getattr(agent, "probabilities", None)
    choose = getattr(agent, "choose", None)

    def decide(observation, mask):
        if callable(probabilities) and callable(choose):
            probs = np.asarray(probabilities(observation, mask), dtype=np.float64)
            return int(choose(probs)), probs
        return int(agent.act(observation, mask)), None

    return _Seat(decide, lambda seed: agent.reset(seed=seed))


def _from_callable(fn: Callable[..., Any], num_actions: int, seed: int) -> _Seat:
    """A callable of (observation, action_mask) returning an action id or a probability vector."""
    rng = [np.random.default_rng(seed)]  # a list, so that reset can replace it

    def decide(observation, mask):
        out = fn(observation, mask)
        if np.ndim(out) == 0:
            return int(out), None
        probs = np.asarray(out, dtype=np.float64).reshape(-1)
        if probs.shape != (num_actions,) or (probs < 0).any() or not probs.sum() > 0:
            raise PolicySpecError(
                f"the policy returned {np.asarray(out).shape}-shaped output; expected an action id or "
                f"{num_actions} non-negative probabilities"
            )
        probs = probs / probs.sum()
        return int(rng[0].choice(num_actions, p=probs)), probs

    def reset(new_seed: int) -> None:
        rng[0] = np.random.default_rng(new_seed)

    return _Seat(decide, reset)


def _looks_like_module_callable(spec: str) -> bool:
    """True for `module:callable`; agent kinds with a colon (`ckpt:PATH`, `ismcts:N`) are not."""
    return bool(_TARGET_FORMAT.match(spec)) and spec.partition(":")[0] not in _AGENT_PREFIXES


def _seats(spec: str, env, seed: int) -> list[_Seat]:
    """One `_Seat` per agent of `env` for a policy spec."""
    agents = env.possible_agents
    num_actions = int(env.action_space(agents[0]).n)
    if _looks_like_module_callable(spec):
        try:
            obj, _ = resolve_target(spec)
        except TargetError as err:
            raise PolicySpecError(
                str(err).replace("it must build an AEC env", "it must be a policy")
            ) from err
        if isinstance(obj, type):  # a policy class: one instance per seat
            made = [obj() for _ in agents]
            return [
                _from_agent(m) if hasattr(m, "act") else _from_callable(m, num_actions, seed + i)
                for i, m in enumerate(made)
            ]
        if hasattr(obj, "act"):
            return [_from_agent(obj) for _ in agents]
        return [_from_callable(obj, num_actions, seed + i) for i in range(len(agents))]
    try:
        from fowlplay.evaluation.agents import make_agent
    except ImportError as err:
        raise PolicySpecError(
            f"policy spec {spec!r} needs fowlplay.evaluation ({err}); install it with: pip install 'fowlplay[eval]'"
        ) from err
    try:
        return [_from_agent(make_agent(spec, env, seed=seed + i)) for i in range(len(agents))]
    except (ValueError, ImportError) as err:  # AgentSpecError is a ValueError
        raise PolicySpecError(
            f"{err}; or MODULE:CALLABLE, a function of (observation, action_mask) returning an action or probabilities"
        ) from err


def check_policy(
    env_fn: Callable[..., Any] | str,
    policy: str,
    *,
    players: int | None = None,
    decisions: int = 2000,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
) -> PolicyReport:
    """Play `policy` in every seat for `decisions` decisions; count masked-out picks and probability."""
    fn, spec = resolve_target(env_fn) if isinstance(env_fn, str) else (env_fn, _importable_name(env_fn))
    kwargs = dict(env_kwargs or {})
    if players is not None:
        kwargs["num_players"] = players
    try:
        env = fn(**kwargs, illegal_action="lose")
        forfeits = True
    except TypeError:  # an env without fowlplay's option: a violating game is abandoned instead
        env = fn(**kwargs)
        forfeits = False
    seats = dict(zip(env.possible_agents, _seats(policy, env, seed)))
    report = PolicyReport(spec or repr(fn), policy)
    masses: list[float] = []
    with _quiet():
        game = 0
        while report.decisions < decisions:
            env.reset(seed=seed + game)
            for i, agent in enumerate(env.possible_agents):
                seats[agent].reset(seed + 1000 * game + i)
            report.games += 1
            for step, agent, obs in _decisions(env, decisions - report.decisions):
                observation, mask = obs["observation"], np.asarray(obs["action_mask"])
                action, probs = seats[agent].decide(observation, mask)
                report.decisions += 1
                if probs is not None:
                    masses.append(float(probs[mask == 0].sum()))
                if not (0 <= action < mask.size and mask[action]):
                    report.violations += 1
                    if not report.first_violation:
                        report.first_violation = {
                            "seed": seed + game,
                            "step": step,
                            "agent": agent,
                            "action": action,
                            "legal": np.flatnonzero(mask).tolist()[:16],
                        }
                    if not forfeits:
                        break
                env.step(action)
            game += 1
    if masses:
        report.probabilities = True
        report.masked_probability_mean = float(np.mean(masses))
        report.masked_probability_max = float(np.max(masses))
    return report
