"""The ISMCTS agent: its spec, legal and reproducible play, blindness to hidden cards, a stacked win."""

from __future__ import annotations

import re

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs import murder_she_crows_v1
from fowlplay.envs.core.testing import apply_script
from fowlplay.envs.crows import CrowsGame
from fowlplay.evaluation.agents import AgentSpecError, make_agent, parse_spec, parse_specs
from fowlplay.evaluation.ismcts import (
    DEFAULT_HORIZONS,
    DEFAULT_MARGINS,
    LEAVES,
    ISMCTSAgent,
    ISMCTSSettings,
    parse_settings,
)
from fowlplay.evaluation.matches import EvalConfig
from fowlplay.evaluation.play import main as play_main
from fowlplay.evaluation.tournament import evaluate

from tests.envs.tiny_variants import TINY

PLAYERS = {"murray_frog_v0": 3}  # its minimum; every other game is played by two


def players(game: str) -> int:
    return PLAYERS.get(game, 2)


def position(game: str, seed: int, steps: int):
    """An env about `steps` random decisions into the deal of `seed`, at a choice of two or more actions."""
    env = envs.make(game, num_players=players(game))
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    taken = 0
    while not env.game.over and (taken < steps or env.game.legal_mask().sum() < 2):
        env.step(int(rng.choice(np.flatnonzero(env.game.legal_mask()))))
        taken += 1
    return env


def decide(agent: ISMCTSAgent, env) -> int:
    obs = env.observe(env.agent_selection)
    return agent.act(obs["observation"], obs["action_mask"])


# ----- the spec ------------------------------------------------------------------------------------
def test_the_spec_parses_with_its_budget_and_rollout():
    assert parse_settings("ismcts:50") == ISMCTSSettings(50, "baseline")
    assert parse_settings("ismcts:8:random") == ISMCTSSettings(8, "random")
    spec = parse_spec("ismcts:50")
    assert (spec.kind, spec.label) == ("ismcts", "ismcts:50")
    assert parse_spec("fast=ismcts:8:random").label == "fast"
    assert [s.label for s in parse_specs(["ismcts:4", "ismcts:4"])] == ["ismcts:4", "ismcts:4#2"]
    env = envs.make("chicken_v1")
    env.reset(seed=0)
    agent = make_agent("fast=ismcts:8:random", env, seed=1)
    assert isinstance(agent, ISMCTSAgent) and agent.settings == ISMCTSSettings(8, "random")


def test_the_spec_sets_the_horizon_and_margin_in_any_order():
    assert parse_settings("ismcts:400:h20") == ISMCTSSettings(400, horizon=20)
    assert parse_settings("ismcts:400:m1.5:h0") == ISMCTSSettings(400, horizon=0, margin=1.5)
    assert parse_settings("ismcts:9:random:h4") == ISMCTSSettings(9, "random", horizon=4)
    assert parse_settings("ismcts:9:h4:baseline:m0") == ISMCTSSettings(9, "baseline", margin=0.0, horizon=4)
    assert parse_settings("ismcts:400:v100") == ISMCTSSettings(400, validation=100)
    env = envs.make("murder_she_crows_v1")
    env.reset(seed=0)
    agent = make_agent("ismcts:6:h3:m.5", env, seed=1)
    assert (agent.horizon, agent.margin) == (3, 0.5)
    default = make_agent("ismcts:6", env, seed=1)  # the spec without options keeps the game's defaults
    assert (default.horizon, default.margin) == (
        DEFAULT_HORIZONS["murder_she_crows_v1"],
        DEFAULT_MARGINS["murder_she_crows_v1"],
    )


@pytest.mark.parametrize(
    ("text", "wrong"),
    [
        ("ismcts:", "simulation count ''"),
        ("ismcts:0", "simulation count '0'"),
        ("ismcts:-3", "simulation count '-3'"),
        ("ismcts:many", "simulation count 'many'"),
        ("ismcts:5:greedy", "'greedy' is not a rollout"),
        ("ismcts:5:random:x", "'x' is not a rollout"),
        ("ismcts:5:h", "'h' is not a rollout"),
        ("ismcts:5:h-1", "'h-1' is not a rollout"),
        ("ismcts:5:h2.5", "'h2.5' is not a rollout"),
        ("ismcts:5:mnan", "'mnan' is not a rollout"),
        ("ismcts:5:m-1", "'m-1' is not a rollout"),
        ("ismcts:5:h3:h4", "sets the horizon twice"),
        ("ismcts:5:random:baseline", "sets the rollout twice"),
        ("ismcts:5:random:m1", "margin mX applies to baseline rollouts only"),
        ("ismcts:5:v5", "validation must be an int from 0 to simulations - 1 = 4"),
        ("ismcts:5:random:v2", "validation checks the baseline's move"),
    ],
)
def test_a_bad_spec_says_what_is_wrong_and_what_is_accepted(text, wrong):
    with pytest.raises(AgentSpecError, match=re.escape(wrong)) as err:
        parse_spec(text)
    assert "ismcts:N[:ROLLOUT][:hK][:mX][:vK]" in str(err.value) or "baseline rollouts only" in str(err.value)
    assert "ismcts:N[:random][:hK][:mX][:vK]" in str(err.value)  # the list of every accepted agent kind


def test_an_agent_asked_about_another_env_refuses():
    env = position("murder_she_crows_v1", seed=0, steps=3)
    agent = ISMCTSAgent(envs.make("murder_she_crows_v1"), ISMCTSSettings(2, "random"), seed=0)
    with pytest.raises(ValueError, match="no game in progress"):
        decide(agent, env)
    agent = ISMCTSAgent(env, ISMCTSSettings(2, "random"), seed=0)
    with pytest.raises(ValueError, match=r"not player_\d's in the environment it was built on"):
        agent.act(np.zeros(1), np.ones(env.num_actions, dtype=np.int8))


# ----- legal, reproducible play ----------------------------------------------------------------------
@pytest.mark.parametrize("game", envs.ENV_NAMES)
def test_it_plays_only_legal_actions_to_the_end_of_a_game(game):
    env = envs.make(game, num_players=players(game))
    env.reset(seed=3)
    baseline = envs.env_module(game).BaselineAgent(env.options)
    agent = ISMCTSAgent(env, ISMCTSSettings(2, "random"), seed=0)
    while not env.game.over:
        obs = env.observe(env.agent_selection)
        seat = agent if env.agent_selection == "player_0" else baseline
        action = seat.act(obs["observation"], obs["action_mask"])
        assert obs["action_mask"][action]
        env.step(action)  # the env itself raises IllegalActionError on anything illegal
    assert agent.root_mismatches == 0  # every re-deal left its legal actions as they were
    for steps in (4, 20):  # baseline rollouts too, at two points of another deal
        env = position(game, seed=5, steps=steps)
        if not env.game.over:
            action = decide(ISMCTSAgent(env, ISMCTSSettings(3), seed=0), env)
            assert env.observe(env.agent_selection)["action_mask"][action]


@pytest.mark.parametrize("rollout", ["random", "baseline"])
def test_the_same_seed_gives_the_same_search(rollout):
    env = position("murder_most_fowl_v0", seed=2, steps=9)
    first = ISMCTSAgent(env, ISMCTSSettings(12, rollout), seed=7)
    action = decide(first, env)
    second = ISMCTSAgent(env, ISMCTSSettings(12, rollout), seed=7)
    assert decide(second, env) == action and second.last_search == first.last_search
    decide(second, env)  # the generator moves on ...
    second.reset(7)  # ... and a reset with the seed starts it over
    assert decide(second, env) == action and second.last_search == first.last_search
    assert sum(v for v, _ in first.last_search.values()) == 12


def _moves_of_a_game(game: str, spec: str, seed: int) -> list[int]:
    """Every action of one game between an ISMCTS agent (seat 0) and the baseline, from fresh objects."""
    env = envs.make(game, num_players=players(game))
    env.reset(seed=seed)
    seats = [make_agent(spec, env, seed=seed + 1)] + [
        envs.env_module(game).BaselineAgent(env.options) for _ in range(players(game) - 1)
    ]
    moves = []
    while not env.game.over:
        obs = env.observe(env.agent_selection)
        moves.append(seats[env.game.current_player].act(obs["observation"], obs["action_mask"]))
        env.step(moves[-1])
    return moves


@pytest.mark.parametrize(
    ("game", "spec"), [("murder_she_crows_v1", "ismcts:12"), ("chicken_v1", "ismcts:12:m0:h4")]
)
def test_two_runs_of_a_whole_game_make_the_same_moves(game, spec):
    """Baseline rollouts with a horizon and leaf, from the same seed: the same game, move for move."""
    first = _moves_of_a_game(game, spec, seed=6)
    assert first == _moves_of_a_game(game, spec, seed=6)
    assert len(first) > 10


def test_the_baselines_move_stands_unless_the_search_clearly_beats_it():
    env = position("murder_she_crows_v1", seed=3, steps=9)
    obs = env.observe(env.agent_selection)
    own = (
        envs.env_module("murder_she_crows_v1")
        .BaselineAgent(env.options)
        .act(obs["observation"], obs["action_mask"])
    )
    moves = {}
    for margin in (0.0, 1e9):
        agent = ISMCTSAgent(env, ISMCTSSettings(40, margin=margin), seed=3)
        moves[margin] = decide(agent, env)
    visits = agent.last_search
    most_visited = min(visits, key=lambda a: (-visits[a][0], -visits[a][1], a))
    assert most_visited != own  # the search alone would overrule the baseline here ...
    assert moves[0.0] == most_visited
    assert moves[1e9] == own  # ... but not by an unreachable margin


def test_validation_tests_the_searchs_choice_on_deals_the_search_never_saw():
    env = position("murder_she_crows_v1", seed=3, steps=9)  # the position above: the search overrules
    obs = env.observe(env.agent_selection)
    own = (
        envs.env_module("murder_she_crows_v1")
        .BaselineAgent(env.options)
        .act(obs["observation"], obs["action_mask"])
    )
    agent = ISMCTSAgent(env, ISMCTSSettings(40, margin=0.0, validation=10), seed=3)
    calls = []
    agent._validated = lambda *args: calls.append(args) or ISMCTSAgent._validated(agent, *args)
    move = decide(agent, env)
    ((_, _, _, best, first, budget),) = calls
    assert (first, budget) == (own, 10) and best != own and move in (best, own)
    assert sum(v for v, _ in agent.last_search.values()) == 40  # 30 to search, 5 fresh deals for each move
    searched = max(len(o) for o in agent._outcomes.values()) - 5  # the most deals any move saw before
    assert len(agent._deals) == searched + 5  # the five validation deals are new ones
    assert decide(ISMCTSAgent(env, ISMCTSSettings(40, margin=1e9, validation=10), seed=3), env) == own


def test_an_evaluation_with_ismcts_is_the_same_at_any_worker_count(tmp_path):
    cfg = EvalConfig("murder_most_fowl_v0", tuple(parse_specs(["ismcts:3:random", "random"])), 2, 2, seed=4)
    one = evaluate(cfg, tmp_path / "one", workers=1, progress=False, bootstrap=20)
    two = evaluate(cfg, tmp_path / "two", workers=2, progress=False, bootstrap=20)
    assert one["pairwise"] == two["pairwise"]
    assert one["games"]["illegal_actions"] == 0


def test_fowlplay_play_seats_an_ismcts_agent(capsys):
    assert (
        play_main(["--game", "murder_most_fowl_v0", "--agents", "ismcts:2:random", "random", "--quiet"]) == 0
    )
    assert "rewards: player_0" in capsys.readouterr().out


# ----- hidden information --------------------------------------------------------------------------
class PeekingISMCTS(ISMCTSAgent):
    """A deliberately broken twin: it searches the real deal instead of re-dealt ones."""

    def _determinize(self, me, seed):
        return self.env.clone()


def _searches_on_both_deals(cls, game: str, rollout: str) -> tuple[tuple, tuple]:
    """The search of `cls` (seed 11) on a position and on the same position with its hidden cards re-dealt."""
    env = position(game, seed=1, steps=12)
    me = env.agent_selection
    redealt = env.clone()
    redealt.resample_hidden(me, seed=99)
    assert redealt.game.state_dict() != env.game.state_dict()  # the real hidden cards did change
    assert np.array_equal(redealt.observe(me)["observation"], env.observe(me)["observation"])
    results = []
    for world in (env, redealt):
        agent = cls(world, ISMCTSSettings(6, rollout), seed=11)
        results.append((decide(agent, world), agent.last_search))
    return results[0], results[1]


@pytest.mark.parametrize("rollout", ["random", "baseline"])
@pytest.mark.parametrize("game", envs.ENV_NAMES)
def test_its_choice_does_not_change_when_the_real_hidden_cards_are_redealt(game, rollout):
    real, redealt = _searches_on_both_deals(ISMCTSAgent, game, rollout)
    assert real == redealt  # the same action, and every root visit count and mean with it


def test_a_twin_that_peeks_at_the_real_deal_is_caught():
    changed = [
        g
        for g in envs.ENV_NAMES
        if len(set(map(repr, _searches_on_both_deals(PeekingISMCTS, g, "random")))) > 1
    ]
    assert len(changed) >= 3, changed


# ----- a stacked position: it finds the winning move -------------------------------------------------
def test_it_scores_the_murder_that_ends_the_game_in_its_favour():
    """Crows, 2 players: player_1, last in the round, at 27 with SET 6 6 6 ready; player_0 at 28
    with SET 5 5 5. Scoring now (18 -> 20 -> 4 spaces) reaches 30 and the round, so the game, ends:
    a sure win. Anything else lets player_0 score 5 5 5 to 30 on their turn (a tie at best).
    """
    env = murder_she_crows_v1.env(num_players=2)
    env.reset(seed=0)
    deck = [5, 1, 6, 2, 4, 4, 3, 3, 1, 2, 3, 4, 5, 6]  # top first
    env.game = CrowsGame.stacked(env.options, deck, sets=[[5, 5], [6, 6]], track=[28, 27], rng=env.game.rng)
    env._mask = None
    env.agent_selection = env.possible_agents[env.game.current_player]
    game = env.game

    def aid(block, card=None):
        return game.layout[block].start + (card - 1 if card else 0)

    apply_script(env, [aid("keep_set", 5), aid("stop")])  # player_0 keeps 5 in SET 5 5 5 and stops
    apply_script(env, [aid("keep_set", 6)])  # player_1 reveals 6 and 2, keeps 6: SET 6 6 6
    assert (env.agent_selection, env.decision()) == ("player_1", "press")
    assert {env.action_name(a) for a in game.legal_actions()} == {
        "reveal",
        "stop",
        "score SET",
        "discard SET",
    }
    for rollout in ("random", "baseline"):
        agent = ISMCTSAgent(env, ISMCTSSettings(60, rollout), seed=0)
        action = decide(agent, env)
        assert env.action_name(action) == "score SET"
        assert agent.last_search[action][1] == 1.0  # it won every simulation through that move
        assert agent.last_search[aid("stop")][1] < 0.5
    apply_script(env, [action, aid("stop")])
    assert game.terminal and env.rewards == {"player_0": -1.0, "player_1": 1.0}


def test_it_beats_random_play_on_a_tiny_chicken(tmp_path):
    """Tiny Chicken (five cards, target 4): 16 random-rollout simulations a decision already win
    most duplicate games against uniform play, the lower end of the score's interval above 0.5."""
    cfg = EvalConfig(
        "chicken_v1",
        tuple(parse_specs(["ismcts:16:random", "random"])),
        matches=10,
        players=2,
        seed=0,
        options=TINY["chicken_v1"],
    )
    row = evaluate(cfg, tmp_path, workers=1, progress=False, bootstrap=20)["pairwise"][0]
    assert (row["agent"], row["opponent"]) == ("ismcts:16:random", "random")
    assert row["wins"] > 2 * row["losses"] and row["score_lo"] > 0.6, row


# ----- truncated rollouts and their leaf -----------------------------------------------------------
def test_a_leaf_estimates_the_win_reward_from_the_lead():
    env = envs.make("chicken_v1")
    env.reset(seed=0)
    agent = ISMCTSAgent(env, ISMCTSSettings(2), seed=0)
    env.game.scores = [30, 10]  # target 50: leads +0.4 and -0.4 on the score-mode scale
    gain = LEAVES["chicken_v1"][1]
    assert agent._leaf(env.game) == pytest.approx([np.tanh(gain * 0.4), -np.tanh(gain * 0.4)])
    scored = envs.make("chicken_v1", reward_mode="score")
    scored.reset(seed=0)
    scored.game.scores = [30, 10]
    assert ISMCTSAgent(scored, ISMCTSSettings(2), seed=0)._leaf(scored.game) == pytest.approx([0.4, -0.4])


@pytest.mark.parametrize("game", envs.ENV_NAMES)
def test_horizon_zero_rolls_out_to_the_end_and_a_horizon_stops_at_a_leaf(game):
    env = position(game, seed=4, steps=2)
    full = ISMCTSAgent(env, ISMCTSSettings(8, horizon=0), seed=1)
    decide(full, env)
    # Every simulation ended the game: a root mean times its visits is a sum of win rewards.
    steps = 1.0 if players(game) == 2 else 0.5  # 3 players: +1, -1/2 (and tie shares of 1/4)
    for visits, mean in full.last_search.values():
        assert (visits * mean / steps * 4) == pytest.approx(round(visits * mean / steps * 4))
    cut = ISMCTSAgent(env, ISMCTSSettings(8, horizon=3), seed=1)
    decide(cut, env)
    means = [mean for _, mean in cut.last_search.values()]
    assert all(-1.0 <= m <= 1.0 for m in means)
    assert cut.horizon == 3 and full.horizon == 0
    assert ISMCTSAgent(env, ISMCTSSettings(2), seed=1).horizon == DEFAULT_HORIZONS[game]


def test_a_bad_horizon_is_refused():
    with pytest.raises(ValueError, match="horizon must be None or an int >= 0"):
        ISMCTSSettings(5, horizon=-1)


# ----- a re-deal that finds no world ----------------------------------------------------------------
@pytest.mark.parametrize("fail_after", [0, 3])
def test_a_redeal_that_gives_up_stops_the_search_and_never_reads_the_real_cards(monkeypatch, fail_after):
    """Murray's re-deal search is bounded: when it raises RedealError the search stops and decides
    on what it has (nothing: the baseline's move), and the real game is left as it was."""
    from fowlplay.envs.core.errors import RedealError
    from fowlplay.envs.murray import MurrayGame

    env = position("murray_frog_v0", seed=2, steps=12)
    before = env.game.state_dict()
    real = MurrayGame.resample_hidden
    calls = []

    def give_up_later(game, player, rng):
        calls.append(player)
        if len(calls) > fail_after:
            raise RedealError("no replay fitted")
        real(game, player, rng)

    monkeypatch.setattr(MurrayGame, "resample_hidden", give_up_later)
    agent = ISMCTSAgent(env, ISMCTSSettings(20), seed=0)
    action = decide(agent, env)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][action]
    assert agent.redeal_failures == 1 and len(calls) == fail_after + 1  # one failure ends the search
    assert sum(visits for visits, _ in agent.last_search.values()) == fail_after
    if fail_after == 0:
        baseline = envs.env_module("murray_frog_v0").BaselineAgent(env.options)
        assert action == baseline.act(obs["observation"], obs["action_mask"])
    assert env.game.state_dict() == before


def test_an_evaluation_counts_the_decisions_whose_redeal_failed_and_says_so(monkeypatch, tmp_path):
    """Each decision whose re-deal gave up is kept in its game's row, summed per agent, and named
    in the report: a reader must know when a search rung played below its budget."""
    import json

    from fowlplay.envs.chicken.rules import ChickenGame
    from fowlplay.envs.core.errors import RedealError
    from fowlplay.evaluation.stats import redeal_failures

    real = ChickenGame.resample_hidden
    calls = []

    def every_fifth_gives_up(game, player, rng):
        calls.append(player)
        if len(calls) % 5 == 0:
            raise RedealError("no replay fitted")
        real(game, player, rng)

    monkeypatch.setattr(ChickenGame, "resample_hidden", every_fifth_gives_up)
    spec = "ismcts:4:random"
    cfg = EvalConfig(
        "chicken_v1", tuple(parse_specs([spec, "random"])), 3, 2, seed=0, options=TINY["chicken_v1"]
    )
    summary = evaluate(cfg, tmp_path, workers=1, progress=False, bootstrap=20)
    rows = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    failures = len(calls) // 5  # one failure ends that decision's search: one per failed decision
    counted = {a["agent"]: a["redeal_failures"] for a in summary["agents"]}
    assert failures > 0 and counted == {spec: failures, "random": 0}
    assert sum(sum(r["redeal_failures"]) for r in rows) == failures
    decisions = next(a["decisions"] for a in summary["agents"] if a["agent"] == spec)
    note = f"{spec} found no re-deal of the hidden cards at {failures} of its {decisions} decisions"
    assert any(n.startswith(note) for n in summary["notes"]) and note in (tmp_path / "report.md").read_text()
    # The league reads the same rows: its leaderboard names the rung that fell back.
    assert redeal_failures(rows) == {spec: (failures, decisions)}
