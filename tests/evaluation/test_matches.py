"""Duplicate matches: seating, seeds, playing, parallel workers and resuming an interrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.core.agents import Agent, RandomAgent
from fowlplay.evaluation.agents import parse_specs
from fowlplay.evaluation.matches import (
    EvalConfig,
    ResumeError,
    agent_seed,
    arrangements,
    deal_seed,
    plan,
    play_game,
    run_games,
    tables,
)
from fowlplay.evaluation.tournament import evaluate


def config(matches=4, players=2, agents=("random", "baseline"), seed=3, seating="pairs", game="chicken_v1"):
    return EvalConfig(game, tuple(parse_specs(list(agents))), matches, players, seed, {}, seating)


# ----- seats -------------------------------------------------------------------------------------
def test_two_players_play_both_orders():
    assert tables(3, 2) == [(0, 1), (0, 2), (1, 2)]
    assert arrangements((0, 1)) == [(0, 1), (1, 0)]


@pytest.mark.parametrize("players", [3, 4, 5])
def test_pair_tables_give_each_agent_every_seat_and_the_majority_equally(players):
    (table,) = tables(2, players)
    seatings = arrangements(table)
    assert len(seatings) == (2 * players if players % 2 else 2)
    for seat in range(players):
        assert Counter(s[seat] for s in seatings) == {0: len(seatings) // 2, 1: len(seatings) // 2}
    majority = Counter(Counter(s).most_common(1)[0][0] for s in seatings if players % 2)
    assert majority[0] == majority[1]


def test_combination_tables_rotate_distinct_agents():
    assert tables(4, 3, "combinations") == [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]
    assert arrangements((0, 1, 3), "combinations") == [(0, 1, 3), (1, 3, 0), (3, 0, 1)]
    with pytest.raises(ValueError, match="at least 3 agents"):
        tables(2, 3, "combinations")


def test_plan_is_match_major_and_complete():
    tasks = plan(config(matches=3, agents=("random", "baseline", "random")))
    assert len(tasks) == 3 * 3 * 2
    assert [t.match for t in tasks] == sorted(t.match for t in tasks)
    assert len({t.key for t in tasks}) == len(tasks)


# ----- seeds -------------------------------------------------------------------------------------
def test_seeds_are_fixed_numbers_from_the_root_seed():
    assert deal_seed(0, 0) == 1286656552236609  # a SeedSequence output: stable across numpy versions
    assert deal_seed(0, 0) != deal_seed(0, 1) != deal_seed(1, 0)
    assert agent_seed(0, 0, 0, 0, 0) != agent_seed(0, 0, 0, 0, 1)
    assert all(0 <= deal_seed(7, m) < 2**53 for m in range(50))


def test_every_arrangement_of_a_match_plays_the_same_deal(tmp_path):
    rows, _ = run_games(config(matches=2), tmp_path, progress=False)
    by_match = {}
    for row in rows:
        by_match.setdefault(row["match"], set()).add(row["deal_seed"])
    assert all(len(seeds) == 1 for seeds in by_match.values())
    assert by_match[0] != by_match[1]


# ----- one game -----------------------------------------------------------------------------------
class CheatingAgent(Agent):
    """Picks the first masked-out action."""

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask == 0)[0])


def test_an_illegal_action_forfeits_the_game_and_never_reaches_the_env():
    env = envs.make("chicken_v1", num_players=3)
    result = play_game(env, [RandomAgent(), CheatingAgent(), RandomAgent()], seed=1, agent_seeds=[1, 2, 3])
    assert result["illegal"][1] == 1 and sum(result["illegal"]) == 1
    assert result["returns"] == [0.25, -0.5, 0.25]
    assert "player_1 chose illegal action" in result["error"]
    assert not result["terminated"] and not result["truncated"]


def test_a_game_is_replayed_exactly_from_its_seeds():
    env = envs.make("chicken_v1")
    baseline = envs.env_module("chicken_v1").BaselineAgent(env.options)
    first = play_game(env, [RandomAgent(), baseline], seed=9, agent_seeds=[4, 5])
    again = play_game(env, [RandomAgent(), baseline], seed=9, agent_seeds=[4, 5])
    other = play_game(env, [RandomAgent(), baseline], seed=9, agent_seeds=[6, 5])
    strip = ("time_ns",)
    assert {k: v for k, v in first.items() if k not in strip} == {
        k: v for k, v in again.items() if k not in strip
    }
    assert first["decisions"] != other["decisions"] or first["returns"] != other["returns"]
    assert first["terminated"] or first["truncated"]
    assert sum(first["returns"]) == pytest.approx(0.0)


# ----- workers and resuming ---------------------------------------------------------------------
def _results(out):
    """Everything that must not depend on workers or interruptions."""
    summary = json.loads((out / "summary.json").read_text())
    for key in ("timing", "command"):
        summary.pop(key)
    rows = sorted(
        (
            {k: v for k, v in json.loads(line).items() if k != "time_ns"}
            for line in (out / "games.jsonl").open()
        ),
        key=lambda r: (r["table"], r["match"], r["arrangement"]),
    )
    return (out / "pairwise.csv").read_text(), (out / "ratings.csv").read_text(), summary, rows


@pytest.fixture(scope="module")
def three_agents():
    return config(matches=5, players=3, agents=("random", "baseline", "random"))


@pytest.fixture(scope="module")
def reference(three_agents, tmp_path_factory):
    out = tmp_path_factory.mktemp("one_worker")
    evaluate(three_agents, out, workers=1, progress=False, bootstrap=50)
    return _results(out)


def test_same_seed_gives_the_same_results_at_any_worker_count(three_agents, reference, tmp_path):
    evaluate(three_agents, tmp_path, workers=2, progress=False, bootstrap=50)
    assert _results(tmp_path) == reference
    assert len(reference[3]) == 5 * 3 * 6


def test_an_interrupted_run_resumes_to_the_same_results(three_agents, reference, tmp_path):
    played = []

    def interrupt(row):
        played.append(row)
        if len(played) == 20:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        evaluate(three_agents, tmp_path, workers=1, progress=False, bootstrap=50, on_row=interrupt)
    assert len((tmp_path / "games.jsonl").read_text().splitlines()) == 20
    assert not (tmp_path / "summary.json").exists()
    with (tmp_path / "games.jsonl").open("a") as f:
        f.write('{"run": "cut off mid-wri')  # a kill during a write leaves half a line
    summary = evaluate(three_agents, tmp_path, workers=2, progress=False, bootstrap=50)
    assert summary["timing"]["games_resumed"] == 20
    assert summary["timing"]["games_played"] == 90 - 20
    assert _results(tmp_path) == reference


def test_more_matches_extend_a_finished_run(tmp_path):
    small, large = config(matches=2), config(matches=4)
    evaluate(small, tmp_path / "grown", progress=False, bootstrap=20)
    grown = evaluate(large, tmp_path / "grown", progress=False, bootstrap=20)
    evaluate(large, tmp_path / "fresh", progress=False, bootstrap=20)
    assert grown["timing"]["games_resumed"] == 4 and grown["timing"]["games_played"] == 4
    assert _results(tmp_path / "grown") == _results(tmp_path / "fresh")


def test_a_different_evaluation_refuses_to_resume_in_the_same_directory(tmp_path):
    evaluate(config(matches=1), tmp_path, progress=False, bootstrap=0)
    with pytest.raises(ResumeError, match="different evaluation"):
        run_games(config(matches=1, seed=4), tmp_path, progress=False)


def _processes_with(marker: str) -> list[int]:
    """Live (not zombie) processes of this user whose environment holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker.encode() not in (entry / "environ").read_bytes():
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue  # gone meanwhile, or not ours
        if state != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds the workers through /proc")
def test_a_killed_evaluation_leaves_no_worker_playing(tmp_path):
    # SIGKILL runs no clean-up, so the pool is never closed: each worker must notice by itself that
    # the evaluation has gone (`exit_when_gone`). Without it they play on through their queue
    # (search games of a few seconds each, queued by the hundred).
    token = uuid.uuid4().hex  # in the environment of the evaluation and every process it starts
    marker = f"FOWLPLAY_TEST_MARKER={token}"
    out = tmp_path / "eval"
    evaluation = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from fowlplay.evaluation.cli import main; main()",
            *("--game", "murray_frog_v0", "--agents", "ismcts:20", "baseline", "--matches", "2000"),
            *("--workers", "2", "--no-progress", "--out", str(out)),
        ],
        env={**os.environ, "FOWLPLAY_TEST_MARKER": token},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while len(_processes_with(marker)) < 4 and time.monotonic() < deadline:  # itself, forkserver, 2 workers
        time.sleep(0.1)
    assert len(_processes_with(marker)) >= 4, "the evaluation started no workers"
    time.sleep(3)  # the workers take their first games
    evaluation.kill()
    evaluation.wait()
    deadline = time.monotonic() + 15  # the workers check every second; their queue holds hours of games
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _processes_with(marker)
    for pid in left:  # a failed run must not leave them spinning either
        os.kill(pid, signal.SIGKILL)
    assert not left, f"{len(left)} evaluation processes outlived the killed evaluation"
