"""The observers' speed caches never change an observation: a warm observer, used for every seat in
turn and on clones, encodes exactly what a fresh observer (empty caches) encodes."""

from __future__ import annotations

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.core.testing import random_legal

CASES = [(name, n) for name in envs.ENV_NAMES for n in envs.player_counts(name)]
IDS = [f"{name}-{n}p" for name, n in CASES]
#: Masked random games per game and player count.
GAMES = 3


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_a_warm_observer_encodes_what_a_fresh_one_does(name, n):
    env = envs.make(name, num_players=n)
    rng = np.random.default_rng(7)
    for seed in range(GAMES):
        env.reset(seed=seed)
        twin = None
        for step in range(10_000):
            game = env.game
            if twin is not None:  # a clone shares the observer and its caches
                assert_same_encoding(env.observer, twin.game, n)
            assert_same_encoding(env.observer, game, n)
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                break
            if step % 7 == 3:
                twin = env.clone()
                twin.resample_hidden(agent, seed=step)
            env.step(random_legal(env.observe(agent)["action_mask"], rng))


def assert_same_encoding(observer, game, n: int) -> None:
    """Every seat's vector from the shared (warm) observer equals a fresh observer's, to the byte."""
    fresh = type(observer)(observer.options)
    for player in (*range(n), *reversed(range(n))):
        warm = observer.encode(game, player)
        cold = fresh.encode(game, player)
        assert warm.tobytes() == cold.tobytes(), f"seat {player}: {observer.decode(warm - cold)}"


def test_a_dense_piece_must_be_written_whole():
    """A deliberately broken twin: a dense piece that `fill` skips keeps the last seat's values."""
    env = envs.make("murder_most_fowl_v0")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    while not env.game.grids.max() >= 0:  # play until some card lies in a grid
        env.step(random_legal(env.observe(env.agent_selection)["action_mask"], rng))

    class Broken(type(env.observer)):
        def fill(self, game, player, parts):
            if player == 0:
                super().fill(game, player, parts)  # seat 1's grids are left from seat 0's vector

    broken = Broken(env.observer.options)
    broken.encode(env.game, 0)
    fresh = Broken(env.observer.options)
    assert broken.encode(env.game, 1).tobytes() != fresh.encode(env.game, 1).tobytes()
