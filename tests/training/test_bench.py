"""The training throughput benchmark: a real (tiny) run, its figures, and a load that always stops."""

from __future__ import annotations

import pytest
from fowlplay.training.bench import competing_load, default_config, format_rows, training_decisions_per_second

#: A run of 128 decisions that takes a second or two.
TINY = {"n_envs": 2, "ppo.n_steps": 64, "ppo.batch_size": 64, "ppo.n_epochs": 1, "ppo.net_arch": [16]}


def test_a_tiny_run_reports_its_rate_and_settings():
    row = training_decisions_per_second("chicken_v0", decisions=128, overrides=TINY)
    assert row["decisions"] == 128 and not row["cut"]
    assert row["decisions_per_s"] == pytest.approx(row["decisions"] / row["seconds"])
    assert row["config"] == str(default_config("chicken_v0"))
    assert (row["vec_env"], row["n_envs"], row["net_arch"], row["load"]) == ("batched", 2, [16], 0)
    assert "| chicken_v0 |" in format_rows([row])


def test_the_competing_load_runs_inside_the_block_and_stops_after():
    with pytest.raises(KeyError), competing_load(2) as busy:
        assert len(busy) == 2 and all(process.poll() is None for process in busy)
        raise KeyError("an error inside the block")
    assert all(process.poll() is not None for process in busy)


def test_bad_requests_are_refused():
    with pytest.raises(ValueError, match="unknown game"):
        training_decisions_per_second("no_such_game_v0")
    with pytest.raises(ValueError, match="decisions"):
        training_decisions_per_second("chicken_v0", decisions=0)
    with pytest.raises(ValueError, match="trains murder_most_fowl_v0, not chicken_v0"):
        training_decisions_per_second("chicken_v0", config_path=default_config("murder_most_fowl_v0"))
