"""The omniscient reference `oracle:N`: the ISMCTS search with every hand face up.

Its determinizations re-deal only the deck's order (`resample_hidden(None, seed)`), so every world
it searches holds the real hands; its choice therefore follows the real hidden cards (the fair
search's never does), and it plays whole games in the evaluation harness.
"""

from __future__ import annotations

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.evaluation.agents import AgentSpecError, parse_spec, parse_specs
from fowlplay.evaluation.ismcts import ISMCTSAgent, ISMCTSSettings, parse_settings
from fowlplay.evaluation.matches import EvalConfig
from fowlplay.evaluation.tournament import evaluate

from tests.evaluation.test_ismcts import decide, position


def test_the_oracle_spec_takes_the_search_options():
    assert parse_settings("oracle:20") == ISMCTSSettings(20, oracle=True)
    assert parse_settings("oracle:8:random:h0") == ISMCTSSettings(8, "random", horizon=0, oracle=True)
    assert not parse_settings("ismcts:20").oracle
    spec = parse_spec("oracle:20")
    assert (spec.kind, spec.label) == ("ismcts", "oracle:20")
    with pytest.raises(AgentSpecError, match="simulation count"):
        parse_spec("oracle:x")


def _hands(state: dict) -> dict:
    return {k: v for k, v in state.items() if k != "deck"}


@pytest.mark.parametrize("game", envs.ENV_NAMES)
def test_every_world_the_oracle_searches_holds_the_real_hands(game):
    env = position(game, seed=1, steps=12)
    me, real = env.agent_selection, env.game.state_dict()
    oracle = ISMCTSAgent(env, ISMCTSSettings(6, oracle=True), seed=0)
    for seed in range(8):
        world = oracle._determinize(me, seed).game.state_dict()
        assert _hands(world) == _hands(real) and sorted(world["deck"]) == sorted(real["deck"])


def test_the_fair_searchs_worlds_fail_that_check():
    """The check above has teeth: the fair search's worlds move hidden hand cards."""
    moved = []
    for game in envs.ENV_NAMES:
        env = position(game, seed=1, steps=12)
        fair = ISMCTSAgent(env, ISMCTSSettings(6), seed=0)
        real = _hands(env.game.state_dict())
        if any(_hands(fair._determinize(env.agent_selection, s).game.state_dict()) != real for s in range(8)):
            moved.append(game)
    assert len(moved) >= 2, moved


def test_the_oracles_choice_follows_the_real_hidden_cards():
    """The fair search chooses alike whatever the hidden cards are (test_ismcts); the oracle's search
    (its root visits and means) changes with them (six simulations of Murder Most Fowl's long turns,
    cut at a leaf of public scores, often read nothing of a hand, so two games must show it)."""
    changed = set()
    for game in envs.ENV_NAMES:
        for seed in range(1, 5):
            env = position(game, seed=seed, steps=12)
            redealt = env.clone()
            redealt.resample_hidden(env.agent_selection, seed=99)
            searches = []
            for world in (env, redealt):
                agent = ISMCTSAgent(world, ISMCTSSettings(6, "random", oracle=True), seed=11)
                searches.append((decide(agent, world), agent.last_search))
            if searches[0] != searches[1]:
                changed.add(game)
                break
    assert {"chicken_v1", "murray_frog_v0"} <= changed, changed


def test_the_oracle_plays_whole_games_in_an_evaluation(tmp_path):
    cfg = EvalConfig("murder_most_fowl_v0", tuple(parse_specs(["oracle:3:random", "random"])), 1, 2, seed=4)
    summary = evaluate(cfg, tmp_path, workers=1, progress=False, bootstrap=20)
    assert summary["games"]["illegal_actions"] == 0
    assert np.isfinite(summary["pairwise"][0]["score"])


def test_in_murder_she_crows_the_oracle_is_the_fair_search():
    """Crows hides nothing but the deck's order, so the two re-deals are one: the same moves and the
    same root statistics for one seed (an independent check of the no-viewer re-deal's law there)."""
    env = position("murder_she_crows_v1", seed=2, steps=10)
    fair = ISMCTSAgent(env, ISMCTSSettings(8, "random"), seed=5)
    oracle = ISMCTSAgent(env, ISMCTSSettings(8, "random", oracle=True), seed=5)
    assert (decide(fair, env), fair.last_search) == (decide(oracle, env), oracle.last_search)
