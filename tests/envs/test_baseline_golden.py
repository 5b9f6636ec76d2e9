"""Golden decisions of the rule-based baselines: seeded games between baselines, at every player
count, must choose exactly the actions they chose when the golden file was written.

The baselines are the ladder's second rung and the rollout policy of the ISMCTS rungs, so a speed-up
of a baseline must not change one decision (a changed decision changes every published rating).
After an intended change of a baseline's play, rewrite the file and read the diff before committing:

    .venv/bin/python tests/envs/test_baseline_golden.py --write
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest
from fowlplay import envs

GOLDEN = Path(__file__).resolve().parent / "baseline_golden.json"
#: Seeded games per game and player count (a few seconds in all).
GAMES = {"chicken_v1": 10, "murder_she_crows_v1": 10, "murder_most_fowl_v0": 6, "murray_frog_v0": 10}
CASES = [(name, n) for name in envs.ENV_NAMES for n in envs.player_counts(name)]


def decisions_digest(name: str, num_players: int, games: int) -> dict:
    """SHA-256 of every action the baselines chose in `games` seeded games, and how many."""
    module = envs.env_module(name)
    digest, count = hashlib.sha256(), 0
    for seed in range(games):
        env = envs.make(name, num_players=num_players)
        env.reset(seed=seed)
        agents = {
            agent: module.BaselineAgent(env.unwrapped.options, seed=seat)
            for seat, agent in enumerate(env.possible_agents)
        }
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            action = int(agents[agent].act(observation["observation"], observation["action_mask"]))
            digest.update(action.to_bytes(4, "little"))
            count += 1
            env.step(action)
    return {"sha256": digest.hexdigest(), "decisions": count}


def _key(name: str, n: int) -> str:
    return f"{name}/{n}p"


@pytest.mark.parametrize(("name", "n"), CASES, ids=[_key(name, n) for name, n in CASES])
def test_the_baselines_decide_as_the_golden_file_says(name, n):
    golden = json.loads(GOLDEN.read_text())
    assert _key(name, n) in golden, f"no golden entry for {_key(name, n)}: run this file with --write"
    assert decisions_digest(name, n, GAMES[name]) == golden[_key(name, n)], (
        f"the {name} baseline chose other actions at {n} players than the golden file says: an unintended "
        "change of its play? (if intended, rewrite it: python tests/envs/test_baseline_golden.py --write)"
    )


def test_a_changed_decision_is_caught(monkeypatch):
    """The broken twin: a Murray baseline that takes its second-best action once in a while."""
    module = envs.env_module("murray_frog_v0")
    act, calls = module.BaselineAgent.act, [0]

    def sometimes_other(self, observation, action_mask):
        calls[0] += 1
        chosen = act(self, observation, action_mask)
        legal = [int(a) for a in action_mask.nonzero()[0] if a != chosen]
        return legal[0] if legal and calls[0] % 50 == 0 else chosen

    monkeypatch.setattr(module.BaselineAgent, "act", sometimes_other)
    golden = json.loads(GOLDEN.read_text())
    assert decisions_digest("murray_frog_v0", 3, GAMES["murray_frog_v0"]) != golden[_key("murray_frog_v0", 3)]


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/envs/test_baseline_golden.py --write")
    table = {_key(name, n): decisions_digest(name, n, GAMES[name]) for name, n in CASES}
    GOLDEN.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN.name}: {len(table)} entries")
