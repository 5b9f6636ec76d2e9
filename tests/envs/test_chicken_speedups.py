"""Chicken's speedups change nothing: the incremental `encode` writes what `encode_full` (a fresh
observer's `fill`) writes, the cached legal masks are the rules' masks, the lazily written log says
what it said when it was recorded, and deliberately broken twins of each fail those comparisons."""

from __future__ import annotations

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.chicken import observation, rules
from fowlplay.envs.chicken.observation import ChickenObserver
from fowlplay.envs.chicken.rules import ChickenGame, ChickenOptions
from fowlplay.envs.core.testing import random_legal

from tests.envs.incremental_encode import encode_mismatches as shared_encode_mismatches
from tests.envs.lazy_log import log_changes

NAME = "chicken_v1"
COUNTS = list(envs.player_counts(NAME))


def encode_mismatches(num_players: int, observer_cls=ChickenObserver, games: int = 4, seed: int = 0) -> int:
    """`incremental_encode.encode_mismatches` for this game."""
    return shared_encode_mismatches(NAME, num_players, observer_cls, games, seed)


@pytest.mark.parametrize("num_players", COUNTS)
def test_the_incremental_encode_writes_what_a_full_encode_writes(num_players):
    assert encode_mismatches(num_players) == 0


def broken(**methods) -> type[ChickenObserver]:
    """A `ChickenObserver` with some methods replaced (a deliberately broken twin)."""
    return type("BrokenChickenObserver", (ChickenObserver,), methods)


def test_hands_never_rewritten_are_caught():
    assert encode_mismatches(2, broken(_write_hands=lambda self, game, player, mem: None)) > 0


@pytest.mark.parametrize("field", ["marks", "active", "scores", "bid", "round"])
def test_a_piece_never_rewritten_is_caught(field, monkeypatch):
    """A broken twin: one input of the cache always reads as what the vector already shows."""

    class Same:
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        def __iter__(self):
            return iter(())

    monkeypatch.setattr(
        observation._SeatState, field, property(lambda self: Same(), lambda self, value: None), raising=False
    )
    assert encode_mismatches(3) > 0


def reference_mask(game: ChickenGame) -> np.ndarray:
    """The rules' mask written out plainly: pass, and every bid above the current one up to max_bid()."""
    mask = np.zeros(1 + game.options.bid_cap, dtype=np.int8)
    mask[0] = 1
    for bid in range(game.bid + 1, game.max_bid() + 1):
        mask[bid] = 1
    return mask


def mask_mismatches(num_players: int, options: dict, games: int = 6, seed: int = 0) -> int:
    """Masked random games; count decisions whose legal mask is not the plain reference's."""
    options = ChickenOptions(num_players=num_players, **options)
    rng = np.random.default_rng(seed)
    wrong = 0
    for game_seed in range(games):
        game = ChickenGame(options, np.random.default_rng(game_seed))
        while not game.over:
            mask, truth = game.legal_mask(), reference_mask(game)
            wrong += mask.tobytes() != truth.tobytes()
            mask[:] = 0  # the caller's to write: the cached mask behind it must not change
            game.apply(random_legal(truth, rng))
    return wrong


@pytest.mark.parametrize("num_players", COUNTS)
@pytest.mark.parametrize(
    "options", [{}, {"bid_cap": 3, "feet": 2, "copies_per_value": 2}], ids=["house", "small"]
)
def test_cached_masks_are_the_rules_masks(num_players, options):
    assert mask_mismatches(num_players, options) == 0


def test_a_mask_cache_that_hands_out_its_own_array_is_caught(monkeypatch):
    """A broken twin: the cached mask itself leaves (writable), so a caller's write changes the next."""
    kept: dict[tuple[int, int, int], np.ndarray] = {}

    def shared(game: ChickenGame) -> np.ndarray:
        key = (game.options.bid_cap, game.bid, game.max_bid())
        if key not in kept:
            kept[key] = rules._mask(*key).copy()
        return kept[key]

    monkeypatch.setattr(ChickenGame, "legal_mask", shared)
    assert mask_mismatches(2, {}) > 0


def test_a_mask_cache_keyed_without_the_bid_is_caught(monkeypatch):
    """A broken twin: masks cached by the deck's cap alone keep offering bids already made."""
    build = rules._mask.__wrapped__  # the function behind the cache
    monkeypatch.setattr(rules, "_mask", lambda cap, bid, top: build(cap, 0, top))
    assert mask_mismatches(3, {}) > 0


@pytest.mark.parametrize("num_players", COUNTS)
def test_the_log_says_what_it_said_when_recorded(num_players):
    assert log_changes(NAME, num_players) == 0


def test_a_log_that_records_a_live_list_is_caught(monkeypatch):
    """A broken twin: the round's end records the new round's feet, which the next draws change."""
    end_round = ChickenGame._end_round

    def careless(self):
        end_round(self)
        line, (round_, tally, _) = self._log[-1]
        self._log[-1] = (line, (round_, tally, self.feet))

    monkeypatch.setattr(ChickenGame, "_end_round", careless)
    assert log_changes(NAME, 2) > 0


def test_the_log_lines_read_as_before():
    """A transcript: the recorded events written out as the game always wrote them."""
    game = ChickenGame(ChickenOptions(), np.random.default_rng(0))
    game.apply(2)
    assert game.log == ["player_0 bids 2"]
    game.apply(0)
    assert game.log == ["player_1 passes", "player_0 draws 2: 2 numbers, 0 feet"]
    while game.round < 3:
        lines = game.log
        game.apply(0)
    assert game.log == [
        "player_1 passes",
        "everyone passed: the starting player draws 1",
        "player_0 draws 1: 0 numbers, 1 foot",
        "round 2 ends: tally [-22, 31], scores [-36, 43]",
    ]
    assert lines == ["player_0 passes"]
