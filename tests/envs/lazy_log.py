"""A check shared by the games whose `game.log` is written only when read (Chicken, Murder, She Crows,
Murder Most Fowl).

Such a game records each event as `(line maker, values)` in `game._log`; the lines are made when
`game.log` is read. A value recorded as a live list that play goes on to change would rewrite
history, so the check reads the log at every decision and writes it again from the same entries at
the game's end.
"""

from __future__ import annotations

import numpy as np
from fowlplay import envs
from fowlplay.envs.core.testing import random_legal


def log_changes(name: str, num_players: int, games: int = 4, seed: int = 0) -> int:
    """Masked random games of `name`; count decisions whose log lines, written again at the end, changed."""
    env = envs.make(name, num_players=num_players)
    rng = np.random.default_rng(seed)
    changed = 0
    for game_seed in range(games):
        env.reset(seed=game_seed)
        written = []  # (recorded entries, their lines as read then) of every decision so far
        while not env.game.over:
            env.step(random_legal(env.game.legal_mask(), rng))
            written.append((list(env.game._log), env.game.log))
        changed += sum([line(*values) for line, values in entries] != lines for entries, lines in written)
    return changed
