"""Exact re-deals: `resample_hidden` against a rejection sample of the worlds a player cannot tell apart.

For each game's tiny variant (tests/envs/tiny_variants.py) a masked random game is played; at
several decision points, for several viewers, every seed whose replay of the same actions shows
the viewer byte-identical observations and masks after every step is a world the viewer cannot
rule out, drawn with the chance process's own weights. `resample_hidden(viewer)` must (a) only
produce such worlds and (b) produce them with the same frequencies (chi-square homogeneity).
A sampler that keeps the true world (no re-deal at all) must fail, so the test has power; each
game's own tests show that a sampler ignoring one of its public facts fails too.
"""

from __future__ import annotations

import pytest
from fowlplay import envs
from fowlplay.envs.core.testing import (
    compare_worlds,
    posterior_worlds,
    random_actions,
    record_history,
    resampled_worlds,
)

from tests.envs.tiny_variants import TINY, TINY_PLAYERS

#: Consistent worlds collected per case, and re-deals drawn to compare with them.
WORLDS = 400
#: Seeds tried per case before giving up on collecting WORLDS (a rarer history keeps fewer).
TRIES = 60_000
#: Fewest consistent worlds a case needs to be tested (rarer histories are skipped).
MIN_WORLDS = 60
#: Trajectories per game, and the decision points cut from each (fractions of the game).
GAMES = 3
CUTS = (0.1, 0.25, 0.4, 0.55, 0.7, 0.85)
#: A correct sampler's p-values stay far above this; a wrong one's fall far below (seeds are fixed).
ALPHA = 1e-4

NAMES = [name for name in envs.ENV_NAMES if name in TINY]


def make_tiny(name: str):
    return envs.make(name, num_players=TINY_PLAYERS[name], **TINY[name])


def cases(name: str):
    """(game index, actions, viewer) triples: prefixes of random games and who looks at them."""
    env = make_tiny(name)
    out = []
    for game in range(GAMES):
        actions = random_actions(env, seed=game, action_seed=1000 + game)
        for cut in CUTS:
            prefix = actions[: max(1, int(cut * len(actions)))]
            viewer = env.possible_agents[(game + int(cut * 10)) % len(env.possible_agents)]
            out.append((game, prefix, viewer))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_resample_hidden_draws_from_the_exact_posterior(name):
    checked = nontrivial = caught = 0
    for game, actions, viewer in cases(name):
        env = make_tiny(name)
        history = record_history(env, game, actions, viewer)
        seeds = range(10_000, 10_000 + TRIES)
        posterior = posterior_worlds(lambda: make_tiny(name), history, seeds, want=WORLDS)
        n = sum(posterior.values())
        if n < MIN_WORLDS:
            continue  # too rare a history to estimate its posterior within TRIES seeds
        result = compare_worlds(posterior, resampled_worlds(env, viewer, n, seed=game))
        where = f"{name} game {game}, {len(actions)} actions, viewer {viewer}: {result}"
        assert not result.outside, f"re-deal outside the consistent worlds: {where}\n{result.outside[0]}"
        assert result.p_value > ALPHA, f"re-deals are not distributed as the posterior: {where}"
        checked += 1
        nontrivial += result.worlds > 1
        broken = compare_worlds(
            posterior, resampled_worlds(env, viewer, n, seed=game, sampler=_keep_true_world)
        )
        caught += broken.p_value < ALPHA
    assert checked >= len(CUTS), f"only {checked} cut points of {name} had a history common enough to test"
    assert nontrivial >= 2, f"{name}'s tiny variant leaves the viewer almost nothing to guess"
    assert caught >= 1, "a sampler that does not re-deal at all passed: the test has no power"


def _keep_true_world(env, viewer, seed):
    """A broken twin: no re-deal at all (what a search agent that peeks effectively does)."""
