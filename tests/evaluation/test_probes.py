"""Probe policies: what each one plays, that specs reach them, that seeds fix them."""

from __future__ import annotations

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.evaluation.agents import AgentSpecError, make_agent, parse_spec
from fowlplay.evaluation.matches import play_game
from fowlplay.evaluation.probe_agents import ProbeError, make_probe, probe_names
from fowlplay.evaluation.probes import ProbeRow, main, markdown, markdown_by_game, probe_row


def test_every_game_lists_the_common_probes_then_one_per_action_block():
    for game in envs.ENV_NAMES:
        names = probe_names(game)
        raw = envs.env_module(game).raw_env
        blocks = [b.name for b in raw.game_cls.action_layout(raw.options_cls()).blocks]
        assert names[:3] == ["first", "last", "random"]
        assert names[3 : 3 + len(blocks)] == blocks
        assert len(set(names)) == len(names), f"{game}: a probe name is listed twice"
    assert probe_names("chicken_v1")[-2:] == ["raise-by-one", "bid-max"]
    assert probe_names("murder_she_crows_v1")[-1] == "never-score"


def test_chicken_probes_transcript():
    # Mask of a bid phase at current bid 3 with 10 cards left: pass (0) and bids 4..10.
    mask = np.zeros(16, dtype=np.int8)
    mask[0] = 1
    mask[4:11] = 1
    obs = np.zeros(1, dtype=np.float32)
    chosen = {
        name: make_probe("chicken_v1", name, seed=0).act(obs, mask) for name in probe_names("chicken_v1")
    }
    assert chosen["first"] == 0 and chosen["pass"] == 0
    assert chosen["last"] == 10 and chosen["bid-max"] == 10
    assert chosen["raise-by-one"] == 4
    assert 4 <= chosen["bid"] <= 10
    only_pass = np.zeros(16, dtype=np.int8)
    only_pass[0] = 1
    assert make_probe("chicken_v1", "raise-by-one").act(obs, only_pass) == 0
    assert make_probe("chicken_v1", "bid", seed=3).act(obs, only_pass) == 0  # the fallback: any legal


def test_a_block_probe_prefers_its_block_and_never_scores_avoids_scoring():
    raw = envs.env_module("murder_she_crows_v1").raw_env
    layout = raw.game_cls.action_layout(raw.options_cls())
    mask = np.zeros(layout.size, dtype=np.int8)
    for name in ("reveal", "stop", "score_run"):
        mask[layout[name].start] = 1
    obs = np.zeros(1, dtype=np.float32)
    assert make_probe("murder_she_crows_v1", "stop").act(obs, mask) == layout["stop"].start
    never = make_probe("murder_she_crows_v1", "never-score", seed=1)
    assert {never.act(obs, mask) for _ in range(50)} == {layout["reveal"].start, layout["stop"].start}


def test_probe_specs_build_agents_and_bad_names_say_what_exists():
    env = envs.make("chicken_v1")
    spec = parse_spec("probe:pass")
    assert (spec.kind, spec.path, spec.label) == ("probe", "pass", "probe:pass")
    assert make_agent("probe:raise-by-one", env, seed=0).name == "probe:raise-by-one"
    with pytest.raises(AgentSpecError, match="chicken_v1 has no probe 'stop'; its probes: first, last"):
        make_agent("probe:stop", env)
    with pytest.raises(AgentSpecError, match="names no probe"):
        parse_spec("probe:")
    with pytest.raises(ProbeError, match="its probes"):
        make_probe("chicken_v1", "nope")


def test_baseline_v0_is_chicken_only():
    assert make_agent("baseline-v0", envs.make("chicken_v1")).name == "baseline-v0"
    with pytest.raises(AgentSpecError, match="only Chicken keeps one"):
        make_agent("baseline-v0", envs.make("murray_frog_v0", num_players=3))


@pytest.mark.parametrize("game", envs.ENV_NAMES)
def test_a_seeded_random_probe_game_is_the_same_game_twice(game):
    players = min(envs.player_counts(game))
    env = envs.make(game, num_players=players)
    results = []
    for _ in range(2):
        agents = [make_agent("probe:random", env)] + [make_agent("baseline", env) for _ in range(players - 1)]
        results.append(play_game(env, agents, seed=7, agent_seeds=list(range(players))))
    assert results[0]["error"] is None
    assert results[0]["returns"] == results[1]["returns"]
    assert results[0]["decisions"] == results[1]["decisions"]


def test_the_command_lists_probes(capsys):
    assert main(["--game", "chicken_v1"]) == 0
    assert (
        capsys.readouterr().out.strip() == "chicken_v1: first, last, random, pass, bid, raise-by-one, bid-max"
    )


def test_always_passing_beats_the_frozen_chicken_baseline_but_not_todays():
    # The exploit issue 32 found: two-player Chicken's old baseline lost about 3 games in 4 to "pass".
    old = probe_row("chicken_v1", 2, "pass", matches=20, against="baseline-v0")
    assert old.clearly_below and old.reward < -0.3, old
    new = probe_row("chicken_v1", 2, "pass", matches=20)
    assert new.holds, new


@pytest.mark.parametrize("game", envs.ENV_NAMES)
def test_no_probe_clearly_beats_the_baseline_at_the_smallest_table(game):
    # The docs' probe table plays 50 deals per row at every player count; this plays 4 at the fewest.
    players = min(envs.player_counts(game))
    rows = [probe_row(game, players, probe, matches=4) for probe in probe_names(game)]
    assert [r.probe for r in rows if r.clearly_below] == []
    assert all(r.games == 4 * players for r in rows)


def test_a_probe_row_counts_shared_wins_and_caps():
    row = probe_row("chicken_v1", 2, "raise-by-one", matches=2)
    assert (row.games, row.capped, row.reward, row.wins) == (4, 4, 1.0, 1.0)
    assert "| chicken_v1 | 2 | `raise-by-one` | 4 | +1.000 ± 0.000 | 1.000 (0.500) | 4 | holds |" in markdown(
        [row]
    )


def test_the_table_by_game_puts_player_counts_in_columns_and_marks_failures():
    rows = [
        ProbeRow("chicken_v1", 2, "pass", 40, 0.0, 0.0, 0.5, 0.5, 0),
        ProbeRow("chicken_v1", 3, "pass", 60, -0.2, 0.05, 0.5, 2 / 3, 0),
        ProbeRow("chicken_v1", 2, "raise-by-one", 40, 1.0, 0.0, 1.0, 0.5, 40),
    ]
    text = markdown_by_game(rows)
    assert "| probe | 2 players | 3 players |" in text
    assert "| `pass` | +0.000 ± 0.000 | **-0.200 ± 0.050 FAILS** |" in text
    assert "| `raise-by-one` | +1.000 ± 0.000 (40 capped) |  |" in text
    assert "chicken_v1: the bar holds in 2 of 3 cells" in text


def test_the_command_refuses_an_agent_that_does_not_fit_the_game(capsys):
    assert main(["--table", "--game", "murray_frog_v0", "--against", "baseline-v0", "--matches", "1"]) == 2
    assert "only Chicken keeps one" in capsys.readouterr().err
