"""Playing an env for the checks: live decisions, masks, fingerprints, trajectories and refusals."""

from __future__ import annotations

import hashlib
import io
import random
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from typing import Any

import numpy as np
from fowlplay.envs.checks.report import one_line

#: PettingZoo's `EnvLogger.warn_on_illegal_move` text, as `TerminateIllegalWrapper` logs it.
_ILLEGAL_WARNING = "illegal move made"


def live_decisions(env, limit: int) -> Iterator[tuple[int, str, Any]]:
    """Yield (step, agent, observation) at each live decision; the caller steps. Dead agents step here."""
    step = 0
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        if step >= limit:
            return
        yield step, agent, obs
        step += 1


def mask_of(obs: Any) -> np.ndarray | None:
    if isinstance(obs, dict) and "action_mask" in obs:
        return np.asarray(obs["action_mask"])
    return None


def choose_legal(env, agent: str, mask: np.ndarray | None, rng: np.random.Generator) -> int | None:
    """A uniformly random legal action (any action of a Discrete space without a mask); None if none."""
    if mask is not None:
        legal = np.flatnonzero(mask)
        return int(legal[rng.integers(legal.size)]) if legal.size else None
    n = getattr(env.action_space(agent), "n", None)
    return int(rng.integers(n)) if n else None


def fingerprint(value: Any) -> bytes:
    """A short digest of nested dicts, lists, arrays and scalars (dtype and shape included)."""
    digest = hashlib.sha256()
    _feed(digest, value)
    return digest.digest()[:16]


def _feed(digest, value: Any) -> None:
    if isinstance(value, dict):
        digest.update(b"{")
        for key in sorted(value, key=repr):
            digest.update(repr(key).encode())
            _feed(digest, value[key])
        digest.update(b"}")
    elif isinstance(value, np.ndarray):
        digest.update(f"{value.dtype.str}{value.shape}".encode())
        digest.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (list, tuple)):
        digest.update(b"[")
        for item in value:
            _feed(digest, item)
        digest.update(b"]")
    else:
        digest.update(repr(value).encode())


def trajectory(env, seed: int, action_seed: int, max_steps: int, between: Callable[[], None] | None = None):
    """Digests of a masked random game from `reset(seed)`: per decision its agent, observation,
    action and every reward that followed. `between` runs before each step (other code's noise)."""
    env.reset(seed=seed)
    return trajectory_from_here(env, np.random.default_rng(action_seed), max_steps, between)


def trajectory_from_here(
    env, rng: np.random.Generator, max_steps: int, between: Callable[[], None] | None = None
) -> list[tuple[str, int, bytes]]:
    """`trajectory` from the env's current state, as (agent, action, digest) per decision; a refused
    step ends it (its error is part of the digest)."""
    out = []
    for _, agent, obs in live_decisions(env, max_steps):
        action = choose_legal(env, agent, mask_of(obs), rng)
        if action is None:
            break
        if between is not None:
            between()
        try:
            env.step(action)
        except Exception as err:  # mask_exact reports refusals; here it only ends the game
            out.append((agent, action, fingerprint((obs, type(err).__name__))))
            break
        out.append((agent, action, fingerprint((obs, {a: float(r) for a, r in env.rewards.items()}))))
    return out


def quick_key(obs: Any) -> int:
    """A fast in-process hash of an observation (dict of arrays, or anything `fingerprint` takes)."""
    if isinstance(obs, dict) and len(obs) == 2:  # the convention: two arrays
        values = obs.get("observation"), obs.get("action_mask")
        if isinstance(values[0], np.ndarray) and isinstance(values[1], np.ndarray):
            return hash((values[0].tobytes(), values[1].tobytes(), values[1].dtype.str))
    if isinstance(obs, dict) and all(isinstance(v, np.ndarray) for v in obs.values()):
        return hash(tuple((k, v.dtype.str, v.shape, v.tobytes()) for k, v in obs.items()))
    return hash(fingerprint(obs))


def _illegal_flag(env) -> tuple[str, Any] | None:
    """(agent, key) of the first info key (of any agent) whose name holds 'illegal' and whose value is truthy."""
    for agent, info in getattr(env, "infos", {}).items():
        if not info:
            continue
        for key, value in info.items():
            if "illegal" in str(key).lower() and value:
                return agent, key
    return None


def _logged_messages() -> list:
    """PettingZoo's `EnvLogger` queue: every warning its envs and wrappers have logged, in order."""
    from pettingzoo.utils.env_logger import EnvLogger

    return EnvLogger.mqueue


def try_action(env, agent: str, action: int) -> tuple[Refusal | None, bool]:
    """Step `action` on a throwaway env: (how it was refused, or None; whether the game ended at once
    with a negative reward for the actor)."""
    logged = _logged_messages()
    before = len(logged)
    try:
        env.step(action)
    except Exception as err:
        return Refusal(f"step raised {type(err).__name__}", f": {one_line(err)}"), False
    flag = _illegal_flag(env)
    if flag:
        return Refusal(f"step set info key {flag[1]!r}", f" (infos[{flag[0]!r}])"), False
    if any(_ILLEGAL_WARNING in str(message).lower() for message in logged[before:]):
        return Refusal("PettingZoo's illegal-move warning"), False
    lost = float(env.rewards.get(agent, 0.0)) < 0
    return None, lost and all(env.terminations.get(a) or env.truncations.get(a) for a in env.agents)


@dataclass(frozen=True)
class Refusal:
    """How `step` refused an action: `how` names the kind (counted per kind), `detail` adds this case."""

    how: str
    detail: str = ""

    def __str__(self) -> str:
        return self.how + self.detail


def with_global_noise(play: Callable[[Callable[[], None]], Any]) -> Any:
    """Run `play(noise)` where `noise()` reseeds and draws from `random` and `np.random`; restore both after."""
    saved_random, saved_np = random.getstate(), np.random.get_state()
    draws = np.random.default_rng(12345)

    def noise() -> None:
        np.random.seed(int(draws.integers(2**31)))
        np.random.random()
        random.seed(int(draws.integers(2**31)))
        random.random()

    try:
        return play(noise)
    finally:
        random.setstate(saved_random)
        np.random.set_state(saved_np)


@contextmanager
def quiet():
    """Silence warnings, PettingZoo's logger and api_test's prints while checks run."""
    from pettingzoo.utils.env_logger import EnvLogger

    with warnings.catch_warnings(), redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        EnvLogger.suppress_output()
        try:
            yield
        finally:
            EnvLogger.unsuppress_output()
