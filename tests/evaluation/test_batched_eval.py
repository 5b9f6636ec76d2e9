"""The batched duplicate evaluation on the twins: it agrees with fowlplay-eval's games, seats every
arrangement of each deal, and a checkpoint's pure JAX policy is the distribution its agent plays."""

from __future__ import annotations

import pytest

pytest.importorskip("jax")

from fowlplay import envs
from fowlplay.evaluation.agents import parse_specs
from fowlplay.evaluation.batched_eval import batched_evaluation, main
from fowlplay.evaluation.matches import EvalConfig, run_games
from fowlplay.evaluation.stats import pairwise
from fowlplay.training.jitted import duplicate

GAME, MATCHES = "chicken_v1", 24


def _score(records, agent, opponent):
    (record,) = [r for r in records if (r["agent"], r["opponent"]) == (agent, opponent)]
    return record


@pytest.fixture(scope="module")
def batched():
    """Baseline against random on the twins (compiled once for this module)."""
    return batched_evaluation(GAME, parse_specs(["baseline", "random"]), MATCHES, 2, seed=3)


def test_baseline_against_random_agrees_with_fowlplay_eval(batched, tmp_path):
    config = EvalConfig(GAME, tuple(parse_specs(["baseline", "random"])), MATCHES, 2, seed=3)
    rows, _ = run_games(config, tmp_path, workers=1, progress=False)
    python = _score(pairwise(rows, config.labels, 2), "baseline", "random")
    twin = _score(batched["pairwise"], "baseline", "random")
    assert twin["games"] == python["games"] == 2 * MATCHES
    # Each score lies in the other's interval (different deals, the same game and agents).
    assert python["score_lo"] <= twin["score"] <= python["score_hi"]
    assert twin["score_lo"] <= python["score"] <= twin["score_hi"]
    assert twin["score"] > 0.8  # the baseline beats random, seen from the right side


def test_every_deal_is_played_under_both_seatings(batched):
    rows = batched["rows"]
    assert len(rows) == 2 * MATCHES
    for m in range(MATCHES):
        seats = sorted(tuple(r["seats"]) for r in rows if r["match"] == m)
        assert seats == [("baseline", "random"), ("random", "baseline")]
    assert all(r["length"] > 0 for r in rows)
    # Returns are the game's zero-sum win rewards.
    assert all(abs(sum(r["returns"])) < 1e-6 for r in rows)


def test_seatings_are_fowlplay_evals():
    from fowlplay.evaluation.matches import arrangements

    for players in (2, 3, 4, 5):
        pattern = tuple(s % 2 for s in range(players))
        assert duplicate.pairs(players).tolist() == [list(a) for a in arrangements(pattern)]
    assert duplicate.one_vs_rest(3).tolist() == [[0, 1, 1], [1, 0, 1], [1, 1, 0]]


def test_results_do_not_depend_on_how_many_games_run_side_by_side(batched):
    import jax
    from fowlplay.training.jitted import policies

    twin = envs.make_jax(GAME, num_players=2)
    actors = [policies.baseline(GAME, num_players=2), policies.uniform]
    play = duplicate.make_play(twin, actors, [duplicate.pairs(2)], MATCHES, lanes=5)
    (few,) = duplicate.fetch(play(jax.random.PRNGKey(3)))
    rows = iter(batched["rows"])  # the fixture's games, played 48 at a time
    for m in range(MATCHES):
        for a in range(2):
            row = next(rows)
            assert few["returns"][m, a].tolist() == row["returns"] and few["length"][m, a] == row["length"]


def test_the_command_refuses_python_only_agents_in_one_line(capsys):
    assert main(["--game", GAME, "--agents", "baseline", "ismcts:10", "--matches", "1"]) == 2
    err = capsys.readouterr().err
    assert "plays only in Python" in err and "Traceback" not in err and err.count("\n") == 1
