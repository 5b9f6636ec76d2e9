"""The leaf-gain fit: it recovers a known gain, repeats itself from its seed, and its command runs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fowlplay.evaluation.ismcts import LEAVES
from fowlplay.evaluation.ismcts_fit import fit_gain, fit_game, main, self_play_points


def test_the_fit_recovers_the_gain_that_made_the_rewards():
    """Rewards drawn as +1 with probability (1 + tanh(g x)) / 2, else -1, have mean tanh(g x)."""
    rng = np.random.default_rng(0)
    leads = rng.uniform(-2.0, 2.0, size=20_000)
    for gain in (0.3, 1.5, 4.0):
        rewards = np.where(rng.random(leads.size) < (1 + np.tanh(gain * leads)) / 2, 1.0, -1.0)
        assert fit_gain(leads, rewards) == pytest.approx(gain, rel=0.1)


def test_points_are_leads_at_round_starts_paired_with_the_final_reward():
    (leads, rewards), *_ = self_play_points("chicken_v1", players=2, games=2, seed=0)
    assert leads.size == rewards.size and leads.size % 2 == 0
    assert np.allclose(leads[0::2], -leads[1::2])  # zero-sum leads of two seats
    assert set(rewards[0::2] + rewards[1::2]) == {0.0} and set(np.abs(rewards)) <= {0.0, 1.0}


def test_the_fit_is_the_same_from_the_same_seed():
    one = fit_game("murder_she_crows_v1", games=4, seed=3, bootstrap=5)
    assert one == fit_game("murder_she_crows_v1", games=4, seed=3, bootstrap=5)
    assert one != fit_game("murder_she_crows_v1", games=4, seed=4, bootstrap=5)
    assert one.code_gain == LEAVES["murder_she_crows_v1"][1] and one.gain_lo <= one.gain_hi


def test_the_command_prints_and_writes_each_fit(tmp_path, capsys):
    path = tmp_path / "fit.json"
    assert main(["--game", "chicken_v1", "--games", "3", "--bootstrap", "3", "--json", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("chicken_v1 | 2 | 3 |")
    (record,) = json.loads(path.read_text())
    assert record["game"] == "chicken_v1" and record["code_gain"] == LEAVES["chicken_v1"][1]
    assert main(["--game", "chicken_v1", "--games", "2", "--players", "9"]) == 2
    assert "chicken_v1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--games", "0"])
