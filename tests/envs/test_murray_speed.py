"""Murray's speed structures against their plain references, each with a broken twin that must fail.

The legal mask's create block is read from tables keyed by three capped counts, checked against
the combinations themselves; the observer's one-hots, its seat rows packed once for every seat
(`_SharedRows`) and its side-by-side packs are checked against `encode_full` (a fresh observer's
`fill` from scratch) over masked random play, clones and re-deals included. The stamps the rules
give swarms and table-seen rows are checked to change with every change of their rows, each
stamping path by a twin that forgets it; the action layout bound once per shape and the deck's
insect cards listed once per deck are checked against building them afresh.
"""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.core.testing import random_legal
from fowlplay.envs.murray import observation, rules
from fowlplay.envs.murray.cards import Card
from fowlplay.envs.murray.rules import MurrayGame, MurrayOptions

from tests.envs.test_observer_caches import mismatches


# ----- the legal mask's create tables -----------------------------------------------------------
def create_table_errors(tables) -> int:
    """Hands of 0..4 of each type of a value (and 0..2 Hawks): entries that differ from the combinations."""
    errors = 0
    for a, b, c, table in tables:
        types = tuple(dict.fromkeys(t for t in (a, b, c) if t != rules._HAWK))
        value = rules.VALUE[types[0]]
        for held in itertools.product(range(5), repeat=3):
            hand = [0] * rules.HAND_KINDS
            for t, count in zip((a, b, c), held):
                hand[t] = count
            expected = [
                i
                for i, combo in enumerate(rules.SWARM_COMBOS)
                if rules.VALUE[combo[0]] == value and all(hand[t] >= combo.count(t) for t in set(combo))
            ]
            x, y, z = (min(count, 3) for count in held)
            errors += list(table[x * 16 + y * 4 + z]) != expected
    return errors


def test_create_tables_keyed_by_three_counts_match_the_combinations():
    assert create_table_errors(rules._CREATE_TABLES) == 0


def _hawk_digit_read_as_the_last_type(types, table):
    """A broken twin: a two-type value's table keyed as if the Hawk were its second type."""
    a, b = types if len(types) == 2 else (None, None)
    if a is None:
        return (*types, table)
    return a, b, rules._HAWK, tuple(table[(key // 16) * 4 + key % 4] for key in range(64))


def test_a_create_table_reading_the_wrong_digit_is_caught():
    broken = tuple(_hawk_digit_read_as_the_last_type(types, table) for types, table in rules._CREATE_BY_VALUE)
    assert create_table_errors(broken) > 0


def create_block_mismatches(games: int = 40, seed: int = 11) -> int:
    """Masked random play: turn decisions whose create block differs from the combinations in hand."""
    env = envs.make("murray_frog_v0")
    rng = np.random.default_rng(seed)
    create = env.game_cls.action_layout(env.options)["create"]
    wrong = 0
    for game_seed in range(games):
        env.reset(seed=game_seed)
        for agent in env.agent_iter():
            observation_, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            game, mask = env.game, observation_["action_mask"]
            hand, size = game.hands[game.player], game.hand_sizes[game.player]
            spare = size - 2 if hand[Card.HAWK] else size - 1
            if game.decision() == "turn" and spare >= 3 and len(game.swarms[game.player]) < 8:
                expected = [
                    int(all(hand[t] >= combo.count(t) for t in set(combo))) for combo in rules.SWARM_COMBOS
                ]
                wrong += mask[create.start : create.stop].tolist() != expected
            env.step(random_legal(mask, rng))
    return wrong


def test_the_create_block_of_the_mask_is_the_combinations_in_hand():
    assert create_block_mismatches() == 0


def test_a_mask_read_from_broken_create_tables_is_caught(monkeypatch):
    broken = tuple(_hawk_digit_read_as_the_last_type(types, table) for types, table in rules._CREATE_BY_VALUE)
    monkeypatch.setattr(rules, "_CREATE_TABLES", broken)
    assert create_block_mismatches(games=10) > 0


def _deer_fly_table() -> MurrayGame:
    """player_0 holds a Deer Fly and a Hornet among four cards; the others hold a single card each."""
    game = MurrayGame(MurrayOptions(), np.random.default_rng(0))
    flies = [Card.FRUIT_FLY] * 12
    game.set_table(
        hands=[[Card.DEER_FLY, Card.HORNET, Card.MIDGE, Card.MIDGE], [Card.MAYFLY], [Card.HOUSE_FLY]],
        pond=[Card.FRUIT_FLY] * 3,
        deck=flies,
        draws=0,
    )
    return game


def test_deer_fly_and_hornet_need_another_player_holding_two_cards():
    """Only player_0 holds two cards or more: neither ability has a target, so neither is legal."""
    game = _deer_fly_table()
    use = game.layout["ability"].start
    mask = game.legal_mask()
    assert mask[use + rules.ABILITY_CARDS.index(Card.DEER_FLY)] == 0
    assert mask[use + rules.ABILITY_CARDS.index(Card.HORNET)] == 0
    game.hands[2][Card.HOUSE_FLY] += 1  # player_2 now holds two cards: both have a target
    game.hand_sizes[2] += 1
    mask = game.legal_mask()
    assert mask[use + rules.ABILITY_CARDS.index(Card.DEER_FLY)] == 1
    assert mask[use + rules.ABILITY_CARDS.index(Card.HORNET)] == 1


# ----- the observer's structures ----------------------------------------------------------------
@pytest.mark.parametrize("num_players", list(rules.PLAYER_COUNTS))
def test_the_incremental_encoder_matches_encode_full(num_players):
    env = envs.make("murray_frog_v0", num_players=num_players)
    assert mismatches(env, type(env.observer)(env.observer.options), games=3, seed=num_players) == 0


class _NeverLit:
    """A broken twin's record of the one-hots set: always empty, so the old ones are never cleared."""

    def __get__(self, state, owner=None):
        return []

    def __set__(self, state, value):
        pass


def test_one_hots_never_cleared_are_caught(monkeypatch):
    monkeypatch.setattr(observation._SeatState, "hot", _NeverLit(), raising=False)
    env = envs.make("murray_frog_v0")
    assert mismatches(env, type(env.observer)(env.observer.options), games=2) > 0


def test_shared_rows_laid_out_in_absolute_seat_order_are_caught(monkeypatch):
    """A broken twin: every seat sees the table's rows in absolute order, not from its own seat."""
    env = envs.make("murray_frog_v0")
    broken = type(env.observer)(env.observer.options)
    original = broken._shared_shown.rows

    def unrotated(current, stamps):
        snapshot, blobs = original(current, stamps)
        return snapshot, _SameForEverySeat(blobs)

    monkeypatch.setattr(broken._shared_shown, "rows", unrotated)
    assert mismatches(env, broken, games=3) > 0


class _SameForEverySeat(list):
    """Rows whose rotation (`rows[p:] + rows[:p]`) gives back the absolute order for every seat."""

    def __getitem__(self, index):
        if isinstance(index, slice):  # rows[p:] is every row, rows[:p] none
            return list(self) if index.stop is None else []
        return super().__getitem__(index)


def test_shared_rows_repack_exactly_the_rows_with_new_stamps():
    """`rows` against packing every row afresh, through changes; old stamp lists never change."""
    pack = observation._counts_packer()
    shared = observation._SharedRows(3, pack)
    current = [[0] * rules.HAND_KINDS for _ in range(3)]
    stamps = [0, 0, 0]
    rng = np.random.default_rng(5)
    kept = []
    for step in range(1, 201):
        seat, card = int(rng.integers(3)), int(rng.integers(rules.HAND_KINDS))
        current[seat][card] = int(rng.integers(4))
        stamps[seat] = step
        packed, blobs = shared.rows(current, stamps)
        assert packed == stamps and packed is not stamps
        assert blobs == [pack(row) for row in current]
        kept.append((packed, list(packed)))
    for packed, as_it_was in kept:
        assert packed == as_it_was


def test_shared_rows_that_never_repack_are_caught():
    """A broken twin of the check above: a row packed once is never packed again."""

    class Stale(observation._SharedRows):
        def rows(self, current, stamps):
            if self.blobs[0] is None:
                return super().rows(current, stamps)
            return list(stamps), self.blobs

    env = envs.make("murray_frog_v0")
    broken = type(env.observer)(env.observer.options)
    broken._shared_shown = Stale(env.options.num_players, observation._counts_packer())
    assert mismatches(env, broken, games=3) > 0


# ----- the stamps the rules give swarms and table-seen rows --------------------------------------
def stamp_misses(num_players: int, games: int, seed: int = 0) -> int:
    """Masked random play (with clones): seat rows that changed while their stamp stayed the same."""
    env = envs.make("murray_frog_v0", num_players=num_players)
    rng = np.random.default_rng(seed)
    missed = 0
    for game_seed in range(games):
        env.reset(seed=seed * 1000 + game_seed)
        step = 0
        while not env.game.over:
            step += 1
            if step % 5 == 2:  # a clone goes its own way from here: its stamps must too
                env = env.clone()
            game = env.game
            swarms, shown = game.swarms, game.shown
            before = [
                (
                    list(map(list, swarms[seat])),
                    list(shown[seat]),
                    game.swarm_stamps[seat],
                    game.shown_stamps[seat],
                )
                for seat in range(num_players)
            ]
            env.step(random_legal(game.legal_mask(), rng))
            for seat, (swarms, shown, swarm_stamp, shown_stamp) in enumerate(before):
                missed += game.swarms[seat] != swarms and game.swarm_stamps[seat] == swarm_stamp
                missed += game.shown[seat] != shown and game.shown_stamps[seat] == shown_stamp
    return missed


@pytest.mark.parametrize("num_players", list(rules.PLAYER_COUNTS))
def test_every_change_to_swarms_or_table_seen_rows_gets_a_new_stamp(num_players):
    assert stamp_misses(num_players, games=20, seed=num_players) == 0


#: Every call that stamps a change, by the rules method it is made from.
STAMP_CALLS = [
    ("_swarms_changed", "_apply_turn"),  # create, add
    ("_swarms_changed", "_apply_murray"),
    ("_swarms_changed", "_apply_take"),  # Firefly, Robber Fly
    ("_shown_changed", "_play_from_hand"),
    ("_shown_changed", "_take_into_hand"),
    ("_shown_changed", "_swap_with_pond"),
    ("_shown_changed", "_take_from"),  # Deer Fly, Hornet
]


@pytest.mark.parametrize(("stamp", "caller"), STAMP_CALLS)
def test_a_stamp_forgotten_on_any_path_is_caught(monkeypatch, stamp, caller):
    """Broken twins: each one forgets the stamp of one path; both checks must see it."""
    original = getattr(MurrayGame, stamp)

    def forgetful(self, seat):
        if sys._getframe(1).f_code.co_name != caller:
            original(self, seat)

    monkeypatch.setattr(MurrayGame, stamp, forgetful)
    assert stamp_misses(3, games=20) > 0
    env = envs.make("murray_frog_v0")
    assert mismatches(env, type(env.observer)(env.observer.options), games=6) > 0


def test_set_table_and_clones_stamp_every_row():
    """A laid-out table gets new stamps for every seat; a clone's stamps part from the original's."""
    game = _deer_fly_table()
    before = list(game.swarm_stamps), list(game.shown_stamps)
    game.set_table(
        hands=[[Card.MIDGE] * 4] * 3,
        pond=[Card.FRUIT_FLY] * 3,
        deck=[Card.FRUIT_FLY] * 12,
        swarms=[[[Card.MAYFLY] * 3]],
    )
    assert all(a != b for a, b in zip(before[0], game.swarm_stamps))
    assert all(a != b for a, b in zip(before[1], game.shown_stamps))
    twin = game.clone()
    assert twin.swarm_stamps == game.swarm_stamps and twin.swarm_stamps is not game.swarm_stamps
    twin._swarms_changed(0)
    game._swarms_changed(0)
    assert twin.swarm_stamps[0] != game.swarm_stamps[0]


def test_pieces_packed_together_must_stay_side_by_side():
    """The packs write runs of pieces at once: a layout that splits a run is refused at construction."""
    at = {"my_hand": slice(14, 27), "hand_sizes": slice(27, 30), "swarms": slice(30, 318)}
    observation._check_side_by_side(at, ("my_hand", "hand_sizes"))
    with pytest.raises(AssertionError, match="side by side"):
        observation._check_side_by_side(at, ("my_hand", "swarms"))


# ----- the action layout bound once per shape --------------------------------------------------
SHAPES = [(n, s, p) for n in rules.PLAYER_COUNTS for s in (1, 8) for p in (1, 3, 4)]


def binding_errors(layout_bindings) -> int:
    """Games of every shape: attributes bound from the cache that differ from a fresh layout."""
    errors = 0
    for n, s, p in SHAPES:
        options = MurrayOptions(num_players=n, max_swarms=s, pond_size=p)
        layout = rules.action_layout(options)
        bound = layout_bindings(options)
        errors += bound["layout"].table() != layout.table() or bound["_size"] != layout.size
        errors += sum(bound[f"_{block.name}"] != block.start for block in layout.blocks)
        errors += list(bound["_decoded"]) != [layout.decode(action) for action in range(layout.size)]
        errors += MurrayGame(options, np.random.default_rng(0))._decoded is not bound["_decoded"]
    return errors


def test_layout_bindings_match_a_fresh_layout_of_every_shape():
    assert binding_errors(rules._layout_bindings) == 0


def test_layout_bindings_cached_by_player_count_alone_are_caught():
    """A broken twin: a cache that forgets the layout also depends on max_swarms and pond_size."""
    cache = {}

    def by_players_only(options):
        if options.num_players not in cache:
            cache[options.num_players] = rules._layout_bindings(options)
        return cache[options.num_players]

    assert binding_errors(by_players_only) > 0


# ----- the insect cards of a deck, listed once per deck ------------------------------------------
DECKS = [rules.COUNTS_3_4, rules.COUNTS_5_6, (2,) * 12, (30,) + (1,) * 11]


def dealt_card_errors() -> int:
    """Games of several decks: insect types whose cards in hands, pond and deck differ from the deck's counts."""
    errors = 0
    for counts in DECKS:
        game = MurrayGame(MurrayOptions(insect_counts=counts), np.random.default_rng(1))
        held = [sum(hand[t] for hand in game.hands) for t in range(rules.NUM_INSECTS)]
        held = [h + game.pond.count(t) + game.deck.count(t) for t, h in enumerate(held)]
        errors += sum(h != c for h, c in zip(held, counts))
    return errors


def test_insect_cards_list_every_card_of_the_deck():
    for counts in DECKS:
        assert list(rules.insect_cards(counts)) == [t for t, c in enumerate(counts) for _ in range(c)]
    assert dealt_card_errors() == 0


def test_insect_cards_cached_for_the_first_deck_only_are_caught(monkeypatch):
    """A broken twin: the cache hands out the first deck it made whatever the counts."""
    first = rules.insect_cards(DECKS[0])
    monkeypatch.setattr(rules, "insect_cards", lambda counts: first)
    assert dealt_card_errors() > 0


def test_two_processes_hand_out_different_stamps():
    # An env pickled in one process and played on in another keeps its observer's remembered
    # stamps: the new process must not hand out those numbers again. A count from 1 in every
    # process (the broken twin) gives both processes the same first stamps.
    probe = "from fowlplay.envs.murray import rules; print(rules._new_stamp())"
    firsts = {
        subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    }
    assert len(firsts) == 2
