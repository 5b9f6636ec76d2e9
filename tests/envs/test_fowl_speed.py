"""Murder Most Fowl's speed-ups change nothing a reader sees: the log written only when read says what
the game always said, and the card and cell name tables name what `card_name` and `cell_name` name;
a deliberately broken twin of each fails its check."""

from __future__ import annotations

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.fowl import rules
from fowlplay.envs.fowl.rules import FowlGame, FowlOptions

from tests.envs.lazy_log import log_changes

NAME = "murder_most_fowl_v0"
COUNTS = list(envs.player_counts(NAME))


@pytest.mark.parametrize("num_players", COUNTS)
def test_the_log_says_what_it_said_when_recorded(num_players):
    assert log_changes(NAME, num_players) == 0


def test_a_log_that_records_a_live_list_is_caught(monkeypatch):
    """A broken twin: a card taken from a pile is recorded as the taker's hand, which play changes."""
    apply_draw = FowlGame._apply_draw

    def careless(self, me, relative_pile):
        apply_draw(self, me, relative_pile)
        for i, (line, values) in enumerate(self._log):
            if line is rules._TAKES:
                self._log[i] = (line, (values[0], self.hands[me], values[2]))

    monkeypatch.setattr(FowlGame, "_apply_draw", careless)
    assert log_changes(NAME, 2) > 0


def test_the_log_lines_read_as_before():
    """A transcript: seed 1's first turns, the recorded events written out as the game always wrote them."""
    game = FowlGame(FowlOptions(), np.random.default_rng(1))
    lines = []
    for action in [1, 0, 41, 65, 151, 2, 0, 8, 79, 151, 2, 0, 44, 52, 150, 2, 0, 41, 57, 162]:
        game.apply(action)
        lines.append(game.log)
    for action in [0, 0, 15, 55, 139, 0, 2, 44, 87, 270]:
        game.apply(action)
    assert lines[:5] == [
        ["player_0 takes Runceys 9 from player_0's pile"],
        ["player_0 draws from the deck"],
        ["player_0 discards Runceys 9"],
        ["player_0 plays Grushes 9"],
        ["player_0 puts Grushes 9 on (5,5)"],
    ]
    assert lines[10] == ["player_0 takes Birbles 6 from player_1's pile"]
    assert lines[12] == ["player_0 discards Discard wile"]
    assert game.log == ["... into player_0's grid at (5,3)"]


def name_mismatches(options: FowlOptions, card_names: tuple[str, ...], cell_names: tuple[str, ...]) -> int:
    """Card ids and cells whose table name differs from the game's own `card_name` / `cell_name`."""
    game = FowlGame(options, np.random.default_rng(0))
    wrong = sum(card_names[card] != game.card_name(card) for card in range(options.num_kinds))
    wrong += sum(cell_names[cell] != game.cell_name(cell) for cell in range(options.cells))
    return wrong + (len(card_names) != options.num_kinds) + (len(cell_names) != options.cells)


OPTIONS = [FowlOptions(), FowlOptions(num_players=4), FowlOptions(num_types=3, max_value=7, grid_size=5)]


@pytest.mark.parametrize("options", OPTIONS, ids=["default", "4p", "small"])
def test_the_name_tables_name_what_the_game_names(options):
    names = rules.card_names(options.max_value, options.num_kinds)
    assert name_mismatches(options, names, rules.cell_names(options.grid_size)) == 0


def test_a_name_table_off_by_one_is_caught():
    """A broken twin: the card names of a game with one bird value more, and a grid one wider."""
    options = FowlOptions()
    names = rules.card_names(options.max_value + 1, options.num_kinds)
    assert name_mismatches(options, names, rules.cell_names(options.grid_size)) > 0
    names = rules.card_names(options.max_value, options.num_kinds)
    assert name_mismatches(options, names, rules.cell_names(options.grid_size + 2)) > 0
