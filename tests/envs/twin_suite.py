"""What every twin's alignment suite (tests/envs/test_twin_<game>.py) does the same way: read a
golden playthrough's actions, play the baseline golden games on both engines, seed keys and compare
two samples' laws. Imported only by those suites, which skip without JAX."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import jax
import numpy as np
from fowlplay import envs
from fowlplay.envs.core.playthrough import filename
from fowlplay.envs.core.twin_alignment import Aligner, AlignmentCount

from tests.envs.test_baseline_golden import GAMES

HERE = Path(__file__).resolve().parent


def playthrough_actions(name: str, num_players: int) -> tuple[list[int], int]:
    """The actions of a golden playthrough file and the decision count its last lines give."""
    text = (HERE / "playthroughs" / filename(name, num_players)).read_text()
    actions = [int(a) for a in re.findall(r"^(?:action: |\d+: player_\d+ '[^']+' )(\d+)", text, re.MULTILINE)]
    decisions = int(re.search(r"^## end \(\w+\) after (\d+) decisions", text, re.MULTILINE).group(1))
    return actions, decisions


def baseline_golden_games(aligner: Aligner, name: str) -> tuple[AlignmentCount, dict, dict]:
    """Align the seeded games of tests/envs/test_baseline_golden.py, baselines in every seat.

    Returns the count, the sha256 and decision count of the baselines' decisions (as that test
    hashes them), and the golden file's entry for the game and player count: when the two are
    equal, these were exactly the golden games."""
    n = aligner.twin.num_players
    module = envs.env_module(name)
    seats, chosen = {}, {}

    def baseline(env, legal, rng) -> int:
        if id(env) not in seats:
            options = env.unwrapped.options
            seats[id(env)] = [module.BaselineAgent(options, seed=seat) for seat in range(n)]
            chosen[id(env)] = []
        seen = env.observe(env.agent_selection)
        agent = seats[id(env)][env.unwrapped.game.current_player]
        action = int(agent.act(seen["observation"], seen["action_mask"]))
        chosen[id(env)].append(action)
        return action

    golden = json.loads((HERE / "baseline_golden.json").read_text())[f"{name}/{n}p"]
    count = aligner.games(range(GAMES[name]), policy=baseline)
    digest = hashlib.sha256()
    for actions in chosen.values():  # in seed order: the references were made in that order
        for action in actions:
            digest.update(action.to_bytes(4, "little"))
    return count, {"sha256": digest.hexdigest(), "decisions": count.steps}, golden


def keys(seed: int, count: int):
    """`count` keys split from the seed's key."""
    return jax.random.split(jax.random.PRNGKey(seed), count)


def same_law(reference: list, twin: list) -> float:
    """The p-value of a two-sample chi-square test of two samples of a discrete feature (cells that
    hold fewer than 10 of both samples pooled)."""
    from scipy import stats

    cells = sorted(set(reference) | set(twin))
    table = np.array([[sample.count(cell) for cell in cells] for sample in (reference, twin)], float)
    small = table.sum(axis=0) < 10
    if small.any():
        table = np.concatenate([table[:, ~small], table[:, small].sum(axis=1, keepdims=True)], axis=1)
    return stats.chi2_contingency(table).pvalue
