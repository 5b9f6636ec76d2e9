"""Exact values (`fowlplay.evaluation.exact`) on a tiny Chicken: the EFG copy of the tree against
OpenSpiel's Python algorithms on the Python game itself, CFR+, and agents as policies."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from fowlplay.envs import openspiel  # noqa: E402
from fowlplay.evaluation import exact  # noqa: E402
from open_spiel.python import policy as os_policy  # noqa: E402
from open_spiel.python.algorithms import exploitability  # noqa: E402

#: One round of Chicken on the cards 1 and two feet: 275 states, every one walked in the tests.
TINY = dict(
    num_players=2, max_value=1, copies_per_value=1, feet=2, bid_cap=2, target=2, foot_bonus=1, max_rounds=1
)


@pytest.fixture(scope="module")
def tree():
    return exact.build_tree("chicken_v1", TINY)


@pytest.fixture(scope="module")
def efg(tree):
    return exact.efg_game(tree)


def _python_table(game, tree, choose):
    """The same policy as an OpenSpiel Python TabularPolicy of the Python game."""
    table = os_policy.TabularPolicy(game)
    for player, infos in enumerate(tree.infosets):
        for key, info in infos.items():
            probs = choose(player, key, info)
            row = table.policy_for_key(key)
            row[:] = 0
            for action in info.legal:
                row[action] = probs.get(action, 0.0)
    return table


def _skewed(player, key, info):
    """A different random distribution at every information set (seeded by its string)."""
    weights = np.random.default_rng(exact.info_seed(key)).dirichlet(np.ones(len(info.legal)))
    return dict(zip(info.legal, weights.tolist()))


@pytest.mark.parametrize("policy", ["uniform", "skewed"])
def test_the_efg_copy_gives_the_python_games_nash_conv(tree, efg, policy):
    """NashConv on the C++ EFG copy equals OpenSpiel's Python nash_conv walking the Python game."""
    choose = exact.uniform if policy == "uniform" else _skewed
    game = openspiel.load("chicken_v1", **TINY)
    expected = exploitability.nash_conv(game, _python_table(game, tree, choose))
    assert exact.nash_conv(tree, efg, exact.policy_table(tree, choose)) == pytest.approx(expected, abs=1e-9)
    assert expected > 0.01  # a policy with something to exploit, so the equality means something


def test_the_tree_counts_every_state(tree):
    assert (tree.states, tree.terminals, tree.num_infosets) == (275, 123, 116)
    assert tree.efg.count("\nt ") == tree.terminals and tree.efg.count("\nc ") == tree.chance_nodes


def test_cfr_plus_gets_below_the_target(efg):
    run = exact.cfr_plus(efg, target=0.01)
    assert run.curve[-1][1] < 0.01
    assert run.curve[0][1] > run.curve[-1][1]


def test_an_agent_is_a_legal_pure_policy(tree, efg):
    table = exact.policy_table(tree, exact.agent_policy(tree, "baseline"))
    assert all(sorted(p for _, p in row) == [0.0] * (len(row) - 1) + [1.0] for row in table.values())
    assert 0.0 <= exact.nash_conv(tree, efg, table) <= 2.0  # each seat's best response gains at most 1


def test_the_score_scale():
    assert exact.score(0.0, 2) == 0.5 and exact.score(2.0, 2) == 1.0 and exact.score(1.0, 3) is None
