"""fowlplay-play: a seeded game between agents, and a person typing actions at the prompt."""

from __future__ import annotations

import io

import numpy as np
import pytest

import envs
from evaluation.play import HumanAgent, main


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_play_prints_the_table_and_the_final_rewards(name, capsys):
    n = envs.player_counts(name)[0]
    assert (
        main(["--game", name, "--agents", "baseline", *["random"] * (n - 1), "--seed", "3", "--quiet"]) == 0
    )
    out = capsys.readouterr().out
    assert "decisions; rewards:" in out and "player_0" in out


def test_the_same_seed_plays_the_same_game(capsys):
    main(["--game", "chicken_v0", "--agents", "baseline", "random", "--seed", "5"])
    first = capsys.readouterr().out
    main(["--game", "chicken_v0", "--agents", "baseline", "random", "--seed", "5"])
    assert capsys.readouterr().out == first


def test_human_agent_reprompts_until_a_legal_action_is_typed():
    env = envs.make("chicken_v0")
    env.reset(seed=0)
    out = io.StringIO()
    human = HumanAgent(env, stream_in=io.StringIO("bid\n99\n3\n"), stream_out=out)
    obs = env.observe(env.agent_selection)
    assert human.act(obs["observation"], obs["action_mask"]) == 3
    text = out.getvalue()
    assert "'bid' is not one of the legal action ids" in text
    assert "'99' is not one of the legal action ids" in text
    assert "3: bid 3" in text


def test_bad_agent_specs_and_counts_are_clear_errors(capsys):
    with pytest.raises(SystemExit):
        main(["--game", "chicken_v0", "--agents", "baseline", "nonsense"])
    assert "accepted: random, baseline" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--game", "chicken_v0", "--agents", "baseline"])
    assert "2-4 players" in capsys.readouterr().err


def test_human_agent_gives_up_cleanly_at_end_of_input():
    env = envs.make("chicken_v0")
    env.reset(seed=0)
    human = HumanAgent(env, stream_in=io.StringIO(""), stream_out=io.StringIO())
    with pytest.raises(SystemExit, match="abandoned"):
        human.act(np.zeros(16, np.float32), env.observe("player_0")["action_mask"])
