"""`fowlplay-bench --batched`: the random legal policy, a tiny run of one twin, a missing twin skipped
with a note, and the flags' errors."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from fowlplay import envs  # noqa: E402
from fowlplay.evaluation.benchmark import batched as batched_bench  # noqa: E402
from fowlplay.evaluation.benchmark.cli import main  # noqa: E402


def test_the_random_policy_is_legal_and_uniform():
    mask = jnp.asarray([[True, False, True, False, True]] * 3000 + [[False, False, False, False, True]] * 10)
    actions = np.asarray(batched_bench.random_legal_actions(jax.random.PRNGKey(0), mask))
    assert np.asarray(mask)[np.arange(len(actions)), actions].all()
    counts = np.bincount(actions[:3000], minlength=5)
    assert counts[[1, 3]].sum() == 0 and counts[[0, 2, 4]].min() > 900  # about 1000 each


def test_a_tiny_run_measures_a_twin_beside_its_aec_figure():
    rows = batched_bench.run(
        {"chicken_v1": [2]}, batch_sizes=[4], steps=5, seconds=0.05, repeats=1, pgx_leduc=False
    )
    (row,) = rows
    assert (row["game"], row["players"], row["batch"]) == ("chicken_v1", 2, 4)
    assert row["decisions_per_s"] > 0 and row["aec_decisions_per_s"] > 0 and row["compile_s"] > 0
    assert row["ratio_to_aec"] == pytest.approx(row["decisions_per_s"] / row["aec_decisions_per_s"])
    assert row["state_bytes_per_game"] > 0
    table = batched_bench.format_table(rows)
    assert "| chicken_v1 | 2 | 4 |" in table
    assert "best of chicken_v1" in batched_bench.verdict(rows)


def test_rounds_keep_each_games_fastest_aec_figure_measured_after_the_rollouts(monkeypatch):
    from fowlplay.evaluation.benchmark import aec as benchmark

    rates, order = iter([3.0, 7.0, 5.0]), []
    monkeypatch.setattr(
        batched_bench,
        "bench_batched",
        lambda *args: order.append("rollouts") or [{"batch": 1, "decisions_per_s": 70.0}],
    )
    monkeypatch.setattr(
        benchmark, "aec_decisions_per_second", lambda env, seconds: order.append("aec") or next(rates)
    )
    (row,) = batched_bench.run({"chicken_v1": [2]}, batch_sizes=[1], seconds=0.01, pgx_leduc=False, rounds=3)
    assert order == ["rollouts", "aec", "aec", "aec"]
    assert row["aec_decisions_per_s"] == 7.0 and row["ratio_to_aec"] == pytest.approx(10.0)


def test_a_game_without_a_twin_is_skipped_with_a_note(monkeypatch, capsys):
    monkeypatch.setitem(envs._TWINS, "chicken_v1", "fowlplay.envs.chicken.no_such_twin")
    assert (
        batched_bench.run({"chicken_v1": [2]}, batch_sizes=[1], steps=1, seconds=0.01, pgx_leduc=False) == []
    )
    assert "chicken_v1: skipped, its batched twin cannot be imported" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--steps", "5"], "--batch-sizes and --steps go with --batched"),
        (["--batched", "--training"], "--batched and --training are separate runs"),
        (["--batched", "--batch-sizes", "0"], "must be an integer >= 1"),
    ],
)
def test_bad_flags_are_refused_in_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err
