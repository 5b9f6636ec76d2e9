"""fowlplay-play: a seeded game between agents, and a person typing actions at the prompt."""

from __future__ import annotations

import io
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.core.agents import RandomAgent
from fowlplay.evaluation.narration import Narrator
from fowlplay.evaluation.play import HumanAgent, main, play, prompt_text

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_play_prints_the_table_and_the_final_rewards(name, capsys):
    n = envs.player_counts(name)[0]
    assert (
        main(["--game", name, "--agents", "baseline", *["random"] * (n - 1), "--seed", "3", "--quiet"]) == 0
    )
    out = capsys.readouterr().out
    assert "decisions; rewards:" in out and "player_0" in out


def test_the_same_seed_plays_the_same_game(capsys):
    main(["--game", "chicken_v1", "--agents", "baseline", "random", "--seed", "5"])
    first = capsys.readouterr().out
    main(["--game", "chicken_v1", "--agents", "baseline", "random", "--seed", "5"])
    assert capsys.readouterr().out == first


def test_human_agent_reprompts_until_a_legal_action_is_typed():
    env = envs.make("chicken_v1")
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
        main(["--game", "chicken_v1", "--agents", "baseline", "nonsense"])
    assert "accepted: random, baseline" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--game", "chicken_v1", "--agents", "baseline"])
    assert "2-4 players" in capsys.readouterr().err


def test_human_agent_gives_up_cleanly_at_end_of_input():
    env = envs.make("chicken_v1")
    env.reset(seed=0)
    human = HumanAgent(env, stream_in=io.StringIO(""), stream_out=io.StringIO())
    with pytest.raises(SystemExit, match="abandoned"):
        human.act(np.zeros(16, np.float32), env.observe("player_0")["action_mask"])


# ----- what a person typing sees and types ---------------------------------------------------------
@pytest.mark.parametrize("typed", ["--1", "²", "9" * 5000, "1_0", "٣", "+3", "3.0", " "])
def test_typed_text_that_is_no_action_id_is_asked_again(typed):
    env = envs.make("chicken_v1")
    env.reset(seed=0)
    out = io.StringIO()
    human = HumanAgent(env, stream_in=io.StringIO(f"{typed}\n3\n"), stream_out=out)
    obs = env.observe(env.agent_selection)
    assert human.act(obs["observation"], obs["action_mask"]) == 3
    assert "is not one of the legal action ids" in out.getvalue()
    assert len(out.getvalue()) < 2000  # a 5000-digit answer is not echoed back whole


class Typist:
    """Types the lowest legal action id for the human seat, and records what was on screen."""

    def __init__(self, env, out: io.StringIO, human: str) -> None:
        self.env, self.out, self.human = env, out, human
        self.seen = 0
        self.screens: list[tuple[str, str]] = []  # (text printed since the last answer, prompt)

    def readline(self) -> str:
        env = self.env
        assert env.agent_selection == self.human
        mask = env.observe(self.human)["action_mask"]
        legal = np.flatnonzero(mask).tolist()
        text = self.out.getvalue()[self.seen :]
        self.seen = len(self.out.getvalue())
        prompt = prompt_text(env, self.human, legal)
        self.screens.append((text, prompt))
        # What the seat is shown depends only on what it may know: re-dealing everything it cannot
        # see leaves it unchanged, while the umpire's table changes.
        for seed in range(3):
            twin = env.clone()
            twin.resample_hidden(self.human, seed=seed)
            assert prompt_text(twin, self.human, legal) == prompt
            self.umpire_changed |= twin.render() != env.render()
        return f"{legal[0]}\n"

    umpire_changed = False


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_a_human_seat_is_shown_only_its_own_view_until_the_game_is_over(name):
    n = envs.player_counts(name)[0]
    env = envs.make(name, num_players=n, render_mode="ansi")
    env.reset(seed=3)
    human = env.possible_agents[1]
    out = io.StringIO()
    typist = Typist(env, out, human)
    agents = {a: RandomAgent(i) for i, a in enumerate(env.possible_agents)}
    agents[human] = HumanAgent(env, stream_in=typist, stream_out=out)
    specs = {a: "random" for a in env.possible_agents} | {human: "human"}
    narrator = Narrator(env.unwrapped.game)
    play(env, agents, specs, out, narrator=narrator)
    assert typist.screens
    # The check has teeth: the umpire's table does show what the seat may not know (Crows hides
    # only the deck order, which no table shows).
    assert typist.umpire_changed == (name != "murder_she_crows_v1")
    told = []
    for text, prompt in typist.screens:
        # Between two answers the screen shows what the seat was told of every move since (its own
        # included), then the seat's own view with its choices: nothing else.
        assert text.endswith(prompt + "\nyour action id> ")
        for line in text[: -len(prompt + "\nyour action id> ")].splitlines():
            assert line.startswith("-- "), line
            told.append(line[3:])
    seat = env.possible_agents.index(human)
    assert told == narrator.history[seat][: len(told)]
    assert any(line.startswith(f"you ({human}): ") for line in told)
    # The whole table once the game is over.
    assert f"{env.render()}\ngame " in out.getvalue()[typist.seen :]


def test_a_human_seat_sees_the_games_view_when_it_has_one(monkeypatch):
    env = envs.make("chicken_v1", render_mode="ansi")
    env.reset(seed=0)
    monkeypatch.setattr(type(env.unwrapped.observer), "view", lambda self, game, player: f"VIEW OF {player}")
    assert prompt_text(env, "player_1", [0]).startswith("VIEW OF 1\nplayer_1, you are deciding")


def test_a_negative_seed_is_a_clear_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--agents", "baseline", "random", "--seed", "-1"])
    assert exit_info.value.code == 2
    assert "--seed: must be an integer >= 0, got -1" in capsys.readouterr().err


def test_ctrl_c_at_the_prompt_is_one_line(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "fowlplay.evaluation.play", "--agents", "human", "baseline"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        seen = ""
        while "your action id> " not in seen:
            char = proc.stdout.read(1)
            assert char, proc.stderr.read()
            seen += char
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert "Traceback" not in err
    assert err.strip() == (
        "fowlplay-play: interrupted; the game is abandoned (nothing is saved: the same --seed and "
        "agents deal it again)"
    )
