"""The rules pages' measured sections, held to the code where that is cheap: the "How games go"
tables (one row regenerated), the probe tables (every probe of the game listed), the cap rule."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fowlplay import envs
from fowlplay.evaluation import how_games_go
from fowlplay.evaluation.probe_agents import probe_names

PAGES = Path(__file__).resolve().parents[2] / "docs" / "games"


def page(game: str) -> str:
    return (PAGES / f"{game}.md").read_text()


def section(text: str, title: str) -> str:
    """The body of a `## title` section, up to the next `## `."""
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


@pytest.mark.parametrize("game", envs.ENV_NAMES)
def test_how_games_go_names_its_command_and_has_a_row_per_player_count(game):
    body = section(page(game), "How games go")
    assert f"python -m fowlplay.evaluation.how_games_go --game {game} --games 200" in body
    counts = [int(n) for n in re.findall(r"^\| (\d+) \| 200 \|", body, flags=re.M)]
    assert counts == list(envs.player_counts(game))


@pytest.mark.parametrize("game", ["chicken_v1", "murder_she_crows_v1"])
def test_the_two_player_row_is_what_the_command_prints(game):
    table = how_games_go.markdown(game, [how_games_go.play(game, 2, 200)])
    assert table.splitlines()[-1] in section(page(game), "How games go")


@pytest.mark.parametrize("game", envs.ENV_NAMES)
def test_the_probe_table_lists_every_probe_of_the_game(game):
    body = section(page(game), "Baseline agent")
    assert "python -m fowlplay.evaluation.probes --table --game " + game in body
    listed = re.findall(r"^\| `([\w-]+)` \|", body, flags=re.M)
    assert listed == probe_names(game)
    assert "FAILS" not in body


@pytest.mark.parametrize(
    ("game", "option", "name_v0"),
    [("chicken_v1", "max_rounds", "chicken_v0"), ("murder_she_crows_v1", "max_turns", "murder_she_crows_v0")],
)
def test_the_cap_is_a_house_rule_that_ends_by_the_standings(game, option, name_v0):
    text = page(game)
    default = getattr(envs.env_module(game).raw_env.options_cls(), option)
    assert envs.env_module(game).raw_env.options_cls().cap_ending == "standings"
    end = section(text, "End of the game")
    assert f"*(house rule)* After {default} " in end
    assert "ends by the standings" in end
    assert 'cap_ending="draw"' in end and f"`{name_v0}`" in end
