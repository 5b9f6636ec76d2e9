"""Murder, She Crows' speedups change nothing: the incremental `encode` writes what `encode_full` (a
fresh observer's `fill`) writes, the lazily written log says what it said when it was recorded, and
deliberately broken twins of each fail those comparisons."""

from __future__ import annotations

import pytest
from fowlplay import envs
from fowlplay.envs.crows import observation, rules
from fowlplay.envs.crows.observation import CrowsObserver
from fowlplay.envs.crows.rules import CrowsGame

from tests.envs.incremental_encode import encode_mismatches as shared_encode_mismatches
from tests.envs.lazy_log import log_changes

NAME = "murder_she_crows_v1"
COUNTS = list(envs.player_counts(NAME))


def encode_mismatches(num_players: int, observer_cls=CrowsObserver, games: int = 4, seed: int = 0) -> int:
    """`incremental_encode.encode_mismatches` for this game."""
    return shared_encode_mismatches(NAME, num_players, observer_cls, games, seed)


@pytest.mark.parametrize("num_players", COUNTS)
def test_the_incremental_encode_writes_what_a_full_encode_writes(num_players):
    assert encode_mismatches(num_players) == 0


def broken(**methods) -> type[CrowsObserver]:
    """A `CrowsObserver` with some methods replaced (a deliberately broken twin)."""
    return type("BrokenCrowsObserver", (CrowsObserver,), methods)


def _keep_first_head(self, player, kind, acting, turn):
    """A head cache keyed without the acting seat: a claim shows the turn player acting."""
    key = (player, kind, 0, turn)
    if key not in self._heads:
        self._heads[key] = CrowsObserver._head(self, player, kind, acting, turn)
    self._heads[player, kind, acting, turn] = self._heads[key]
    return self._heads[key]


@pytest.mark.parametrize(
    "twin",
    [
        broken(_write_runs=lambda self, runs, player, seen, mem: None),
        broken(_write_sets=lambda self, sets, player, seen, mem, copies: None),
        broken(_count_row=lambda self, counts: bytes(4 * self._v)),
        broken(_head=_keep_first_head),
        broken(_write_available=lambda self, available, vector, marks, copies: None),
    ],
    ids=[
        "runs-never-rewritten",
        "sets-never-rewritten",
        "counts-left-zero",
        "head-without-acting-seat",
        "no-available",
    ],
)
def test_a_broken_incremental_encode_is_caught(twin):
    assert encode_mismatches(3, twin) > 0


def test_marks_left_from_the_last_call_are_caught(monkeypatch):
    """A broken twin: the few-card entries of the last call are never cleared."""
    ignored = property(lambda self: [], lambda self, value: None)
    monkeypatch.setattr(observation._SeatState, "marks", ignored, raising=False)
    assert encode_mismatches(2) > 0


@pytest.mark.parametrize("num_players", COUNTS)
def test_the_log_says_what_it_said_when_recorded(num_players):
    assert log_changes(NAME, num_players) == 0


def test_a_log_that_records_a_live_list_is_caught(monkeypatch):
    """A broken twin: the opening reveal is recorded as the live `revealed` list, which a keep empties."""
    start_turn = CrowsGame._start_turn

    def careless(self, player):
        start_turn(self, player)
        line, (seat, _) = self._log[-1]
        self._log[-1] = (line, (seat, self.revealed))

    monkeypatch.setattr(CrowsGame, "_start_turn", careless)
    assert log_changes(NAME, 2) > 0


def test_the_log_lines_read_as_before():
    """A transcript: the recorded events written out as the game always wrote them."""
    game = CrowsGame.stacked(rules.CrowsOptions(), [2, 5, 3, 6], runs=[[3, 4], []], sets=[[6, 6], []])
    assert game.log == ["player_0 reveals [2, 5]"]
    game.apply(game.layout["keep_run"].start + 4)  # the 5 onto RUN 3 4
    assert game.log == ["player_0 keeps 5 in RUN"]
    game.apply(game.layout["reveal"].start)
    assert game.log == ["player_0 reveals 3", "player_0 busts on 3; available [3]"]
    game.apply(game.layout["claim_set"].start + 2)  # player_1 claims the 3 into an empty SET
    assert game.log == [
        "player_1 claims 3",
        "discard pile shuffled into a new deck of 1",
        "player_1 reveals [2, 6]",
    ]


def test_dispatch_follows_the_handler_table():
    """Every action id runs the handler its block names in the handler table, with its index."""
    for v in (2, 6, 9):
        layout = rules.action_layout(rules.CrowsOptions(max_value=v))
        for action, (handler, block, index) in enumerate(rules._dispatch(v)):
            assert (block, index) == layout.decode(action)
            assert handler is rules._HANDLERS[block]
