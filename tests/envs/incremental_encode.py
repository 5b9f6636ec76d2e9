"""One check for the games whose observer encodes incrementally: `encode` against `encode_full`."""

from __future__ import annotations

import numpy as np
from fowlplay import envs
from fowlplay.envs.core.testing import random_legal


def encode_mismatches(name: str, num_players: int, observer_cls: type, games: int = 4, seed: int = 0) -> int:
    """Masked random games; count (state, seat) pairs where the incremental encode differs from a full one.

    `observer_cls` (the game's observer, or a broken twin of it) encodes; a fresh observer of the
    env's own class is the reference. The acting seat is encoded at every decision (as the AEC loop
    does); every third decision every seat is too, in turn order and reversed, and every fifth every
    seat of a clone with the hidden cards re-dealt (a clone shares the env's observer).
    """
    env = envs.make(name, num_players=num_players)
    observer = observer_cls(env.options)
    reference = type(env.observer)(env.options)
    rng = np.random.default_rng(seed)
    wrong = 0

    def check(game, player: int) -> int:
        return observer.encode(game, player).tobytes() != reference.encode_full(game, player).tobytes()

    for game_seed in range(games):
        env.reset(seed=game_seed)
        step = 0
        while not env.game.over:
            game = env.game
            wrong += check(game, game.current_player)
            if step % 3 == 0:
                order = range(num_players) if step % 2 else reversed(range(num_players))
                wrong += sum(check(game, player) for player in order)
            if step % 5 == 4:
                twin = env.clone()
                twin.resample_hidden(env.agent_selection, seed=step)
                wrong += sum(check(twin.game, player) for player in range(num_players))
            env.step(random_legal(game.legal_mask(), rng))
            step += 1
        wrong += sum(check(env.game, player) for player in range(num_players))  # the finished table
    return wrong
