"""The baseline twins (`fowlplay.envs.make_jax_baseline`) decide as the Python baselines do.

For every game with a twin and every player count, the observations and masks of every decision of
the golden baseline games (tests/envs/test_baseline_golden.py's seeded games, checked against the
golden file's digest) and of seeded masked-random games go through one jitted, vmapped call of the
twin, whose actions must equal `BaselineAgent.act`'s exactly; a deliberately broken twin must fail.
"""

from __future__ import annotations

import functools
import hashlib
import json

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from fowlplay import envs  # noqa: E402
from fowlplay.envs.core.baseline_twin import quotient  # noqa: E402

from tests.envs.test_baseline_golden import GAMES, GOLDEN  # noqa: E402

#: Games whose baseline has a twin.
TWINNED = ("murder_she_crows_v1", "chicken_v1", "murray_frog_v0", "murder_most_fowl_v0")
CASES = [(name, n) for name in TWINNED for n in envs.player_counts(name)]
#: Decisions taken from seeded masked-random games per game and player count (Fowl's twin costs
#: milliseconds a decision on a CPU, the others microseconds).
RANDOM_DECISIONS = {"murder_most_fowl_v0": 300}
RANDOM_DEFAULT = 3000


def _play(name: str, n: int, seeds, random: bool, limit: int | None = None, options=None):
    """(observations, masks, baseline actions, sha256 of the baselines' golden-style digest) of every
    decision of seeded games (with rule `options`): baselines in every seat, or masked-random play."""
    module = envs.env_module(name)
    observations, masks, actions = [], [], []
    digest = hashlib.sha256()
    for seed in seeds:
        env = envs.make(name, num_players=n, **(options or {}))
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        agents = {
            agent: module.BaselineAgent(env.unwrapped.options, seed=seat)
            for seat, agent in enumerate(env.possible_agents)
        }
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            obs, mask = observation["observation"], observation["action_mask"]
            action = int(agents[agent].act(obs, mask))
            observations.append(np.array(obs, np.float32))
            masks.append(np.array(mask, bool))
            actions.append(action)
            digest.update(action.to_bytes(4, "little"))
            if limit is not None and len(actions) >= limit:
                return observations, masks, actions, digest.hexdigest()
            env.step(int(rng.choice(np.flatnonzero(mask))) if random else action)
    return observations, masks, actions, digest.hexdigest()


@functools.cache
def decisions(name: str, n: int):
    """The golden games' decisions and RANDOM_DECISIONS masked-random ones, as arrays, and how many
    of them are the golden games'."""
    obs, masks, actions, digest = _play(name, n, range(GAMES[name]), random=False)
    golden = json.loads(GOLDEN.read_text())[f"{name}/{n}p"]
    assert {"sha256": digest, "decisions": len(actions)} == golden, "these must be the golden games"
    more = _play(name, n, range(1000, 2000), random=True, limit=RANDOM_DECISIONS.get(name, RANDOM_DEFAULT))
    return np.stack(obs + more[0]), np.stack(masks + more[1]), np.array(actions + more[2]), len(actions)


#: Decisions per vmapped call: every call has this shape, so each twin compiles once.
CHUNK = 512


def batched(decide):
    """`decide` over a batch, compiled once and run CHUNK decisions at a time (the last chunk padded):
    Fowl's twin holds a few megabytes per decision."""
    run = jax.jit(jax.vmap(decide))

    def over(obs, masks):
        obs, masks = np.asarray(obs), np.asarray(masks)
        out = []
        for at in range(0, len(obs), CHUNK):
            o, m = obs[at : at + CHUNK], masks[at : at + CHUNK]
            pad = CHUNK - len(o)
            o = np.concatenate([o, np.repeat(o[:1], pad, axis=0)])
            m = np.concatenate([m, np.repeat(m[:1], pad, axis=0)])
            out.append(np.asarray(run(jnp.asarray(o), jnp.asarray(m)))[: CHUNK - pad])
        return np.concatenate(out)

    return over


@pytest.mark.parametrize(("name", "n"), CASES, ids=[f"{name}/{n}p" for name, n in CASES])
def test_the_twin_decides_as_the_baseline(name, n):
    obs, masks, actions, golden = decisions(name, n)
    decide = batched(envs.make_jax_baseline(name, num_players=n))
    got = np.asarray(decide(jnp.asarray(obs), jnp.asarray(masks)))
    wrong = np.flatnonzero(got != actions)
    assert wrong.size == 0, (
        f"{wrong.size} of {len(actions)} decisions differ ({np.sum(wrong < golden)} of the {golden} golden "
        f"ones); first at {wrong[0]}: twin {got[wrong[0]]}, baseline {actions[wrong[0]]}"
    )
    assert masks[np.arange(len(got)), got].all()


#: Rule options off the defaults (other deck shapes, scales whose float32 steps are inexact).
VARIANTS = {
    "murder_she_crows_v1": {
        "max_value": 8,
        "copies_per_value": 13,
        "min_murder": 4,
        "pile_discards_per_turn": 2,
    },
    "chicken_v1": {
        "max_value": 3,
        "copies_per_value": 13,
        "feet": 15,
        "bid_cap": 20,
        "foot_bonus": 7,
        "target": 30,
    },
    "murray_frog_v0": {"max_swarms": 4, "pond_size": 4, "big_swarm": 3, "big_swarm_points": 7},
    "murder_most_fowl_v0": {"max_value": 8, "grid_size": 7, "min_route": 3, "murder_margin": 2},
}


@pytest.mark.parametrize("name", TWINNED)
def test_the_twin_decides_as_the_baseline_under_other_options(name):
    n = envs.player_counts(name)[-1]
    options = VARIANTS[name]
    limit = 300 if name == "murder_most_fowl_v0" else 1500
    obs, masks, actions, _ = _play(name, n, range(100, 200), random=True, limit=limit, options=options)
    decide = batched(envs.make_jax_baseline(name, num_players=n, **options))
    got = np.asarray(decide(jnp.asarray(np.stack(obs)), jnp.asarray(np.stack(masks))))
    assert (got != np.array(actions)).sum() == 0


def test_a_broken_twin_is_caught(monkeypatch):
    """A Crows twin whose press test reveals one provisional card longer must differ somewhere."""
    from fowlplay.envs.crows import baseline_twin

    name, n = "murder_she_crows_v1", 2
    obs, masks, actions, _ = decisions(name, n)
    original = baseline_twin.BaselineTwin.decide

    def off_by_one(self, observation, legal_action_mask):
        # The twin is shown one provisional RUN card fewer: its press threshold moves by one card.
        at = self.observer.offsets["provisional_run"]
        held = jnp.asarray(observation, jnp.float32)
        held = held.at[at.start + jnp.argmax(held[at] != 0)].set(0.0)
        return original(self, held, legal_action_mask)

    monkeypatch.setattr(baseline_twin.BaselineTwin, "decide", off_by_one)
    decide = batched(envs.make_jax_baseline(name, num_players=n))
    got = np.asarray(decide(jnp.asarray(obs), jnp.asarray(masks)))
    assert (got != actions).any()


def test_quotient_is_numpys_float32_division():
    small = np.array([(a, d) for d in range(1, 300) for a in range(d + 1)], np.int32)
    d = np.random.default_rng(0).integers(1, 1 << 15, 20000)
    large = np.stack([(d * np.random.default_rng(1).random(d.size)).astype(np.int64), d], axis=1)
    extremes = [(1, 32767), (32766, 32767), (32767, 32767), (0, 32767), (5, 0)]
    a, d = np.concatenate([small, large, extremes]).astype(np.int32).T
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.where(d > 0, a.astype(np.float32) / d.astype(np.float32), np.float32(0.0))
    got = np.asarray(jax.jit(quotient)(jnp.asarray(a), jnp.asarray(d)))
    assert np.array_equal(got.view(np.int32), want.view(np.int32))


def test_make_jax_baseline_errors():
    with pytest.raises(ValueError):
        envs.make_jax_baseline("murder_she_crows_v1", num_players=9)
    with pytest.raises(ValueError):
        envs.make_jax_baseline("no_such_game")
