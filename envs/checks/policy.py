"""`check_policy`: how often a policy picks, or puts probability on, actions its mask rules out.

The policy plays every seat of masked games for a budget of decisions. It is whatever makes a
learner's masking code testable: an object with `act(observation, action_mask)` (a fowlplay
`Agent`), a class of such objects (one per seat), a callable that maps (observation, action_mask)
to an action or to a probability vector, or a `PolicyLoader` that builds one of these per seat
once the env exists. Agent specs (`random`, `ckpt:RUN_DIR`, ...) are read above this toolkit, by
the evaluation tools' `fowlplay-check --policy` command. Where the env offers
`illegal_action="lose"` it is built with it, so a masked-out choice ends that game (as in training
with PettingZoo classic's rule) instead of stopping the run; elsewhere the game is abandoned after
the violation.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from fowlplay.envs.checks.play import live_decisions, quiet
from fowlplay.envs.checks.target import importable_name, resolve_target

#: Probability on masked-out actions at or below this counts as none (float rounding of a softmax).
PROBABILITY_TOLERANCE = 1e-6


class PolicyError(ValueError):
    """A policy that cannot be played: it did not load, or it answered neither an action nor probabilities."""


@dataclass(frozen=True)
class PolicyLoader:
    """A policy made once the env is built: `load(env, seed)` gives one policy per seat of `env`
    (each an object with `act` or a callable of (observation, action_mask)); seat i's is seeded
    `seed + i` where the loader seeds what it makes."""

    load: Callable[[Any, int], list[Any]]


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
            raise PolicyError(
                f"the policy returned {np.asarray(out).shape}-shaped output; expected an action id or "
                f"{num_actions} non-negative probabilities"
            )
        probs = probs / probs.sum()
        return int(rng[0].choice(num_actions, p=probs)), probs

    def reset(new_seed: int) -> None:
        rng[0] = np.random.default_rng(new_seed)

    return _Seat(decide, reset)


def policy_per_seat(policy: Any, env) -> list[Any]:
    """One policy per agent of `env`: a class is made once per seat, anything else plays every seat."""
    if isinstance(policy, type):  # a policy class: one instance per seat
        return [policy() for _ in env.possible_agents]
    return [policy for _ in env.possible_agents]


def _seats(policy: Any, env, seed: int) -> list[_Seat]:
    """One `_Seat` per agent of `env`: seat i's callable draws from a generator seeded `seed + i`."""
    num_actions = int(env.action_space(env.possible_agents[0]).n)
    made = policy.load(env, seed) if isinstance(policy, PolicyLoader) else policy_per_seat(policy, env)
    return [
        _from_agent(m) if hasattr(m, "act") else _from_callable(m, num_actions, seed + i)
        for i, m in enumerate(made)
    ]


def check_policy(
    env_fn: Callable[..., Any] | str,
    policy: Any,
    *,
    name: str | None = None,
    players: int | None = None,
    decisions: int = 2000,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
) -> PolicyReport:
    """Play `policy` in every seat for `decisions` decisions; count masked-out picks and probability.

    `name` is how the report names the policy (default: its importable name, else its repr)."""
    fn, spec = resolve_target(env_fn) if isinstance(env_fn, str) else (env_fn, importable_name(env_fn))
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
    report = PolicyReport(spec or repr(fn), name or importable_name(policy) or repr(policy))
    masses: list[float] = []
    with quiet():
        game = 0
        while report.decisions < decisions:
            env.reset(seed=seed + game)
            for i, agent in enumerate(env.possible_agents):
                seats[agent].reset(seed + 1000 * game + i)
            report.games += 1
            for step, agent, obs in live_decisions(env, decisions - report.decisions):
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
