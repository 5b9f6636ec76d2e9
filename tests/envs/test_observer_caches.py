"""The observers' speed caches never change an observation: a warm observer, used for every seat in
turn and on clones, encodes exactly what `encode_full` (a fresh observer's `fill` from scratch)
encodes; and deliberately broken twins of each cache fail that comparison."""

from __future__ import annotations

import builtins
import importlib

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.core.testing import random_legal

CASES = [(name, n) for name in envs.ENV_NAMES for n in envs.player_counts(name)]
IDS = [f"{name}-{n}p" for name, n in CASES]
#: Masked random games per game and player count.
GAMES = 3


def mismatches(env, observer, games: int = GAMES, seed: int = 7) -> int:
    """Masked random play; count the (state, seat) pairs where `observer.encode` differs from the reference.

    The reference is `encode_full` on a brand-new observer (no cache has seen anything). Every seat
    is encoded after every decision (in both seat orders), and every seventh decision a clone with
    its hidden cards re-dealt is encoded too: a clone shares the env's observer.
    """
    rng = np.random.default_rng(seed)
    n = env.options.num_players
    cls, options = type(env.observer), env.observer.options
    wrong = 0
    for game_seed in range(games):
        env.reset(seed=game_seed)
        twin = None
        for step in range(10_000):
            for game in (env.game,) if twin is None else (twin.game, env.game):
                reference = [cls(options).encode_full(game, player).tobytes() for player in range(n)]
                for player in (*range(n), *reversed(range(n))):
                    wrong += observer.encode(game, player).tobytes() != reference[player]
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                break
            if step % 7 == 3:
                twin = env.clone()
                twin.resample_hidden(agent, seed=step)
            env.step(random_legal(env.observe(agent)["action_mask"], rng))
    return wrong


@pytest.mark.parametrize(("name", "n"), CASES, ids=IDS)
def test_a_warm_observer_encodes_what_a_fresh_one_does(name, n):
    env = envs.make(name, num_players=n)
    assert mismatches(env, env.observer) == 0


def test_encode_returns_a_new_array_each_call():
    """The caller may keep (and write into) what `encode` returns: the caches never hand it out."""
    for name in envs.ENV_NAMES:
        env = envs.make(name)
        env.reset(seed=0)
        first = env.observer.encode(env.game, 0)
        again = env.observer.encode(env.game, 0)
        assert first is not again and not np.shares_memory(first, again)
        first[:] = -1.0
        assert env.observer.encode(env.game, 0).tobytes() == again.tobytes()


def test_a_dense_piece_must_be_written_whole():
    """A deliberately broken twin: a dense piece that `fill` skips keeps the last seat's values."""
    env = envs.make("murder_most_fowl_v0")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    while not env.game.grids.max() >= 0:  # play until some card lies in a grid
        env.step(random_legal(env.observe(env.agent_selection)["action_mask"], rng))

    class Broken(type(env.observer)):
        def fill(self, game, player, parts):
            if player == 0:
                super().fill(game, player, parts)  # seat 1's grids are left from seat 0's vector

    broken = Broken(env.observer.options)
    broken.encode_full(env.game, 0)
    fresh = Broken(env.observer.options)
    assert broken.encode_full(env.game, 1).tobytes() != fresh.encode_full(env.game, 1).tobytes()


#: The modules of the incremental encoders (and of Crows, whose pile counts are cached).
INCREMENTAL = {"murder_most_fowl_v0": "fowl", "murray_frog_v0": "murray"}
CACHED_COPIES = {**INCREMENTAL, "murder_she_crows_v1": "crows"}


def _aliasing_list(value=()):
    return value if isinstance(value, list) else builtins.list(value)


@pytest.mark.parametrize("name", sorted(CACHED_COPIES))
def test_a_cache_that_keeps_live_lists_is_caught(name, monkeypatch):
    """A broken twin: its 'copies' of the inputs are the live lists, so they never look changed."""
    module = importlib.import_module(f"fowlplay.envs.{CACHED_COPIES[name]}.observation")
    env = envs.make(name)
    broken = type(env.observer)(env.observer.options)
    # In the encoders' module list(x) is x itself when x is a list (other iterables still list)
    monkeypatch.setattr(module, "list", _aliasing_list, raising=False)
    assert mismatches(env, broken, games=2) > 0


class _Unchanged:
    """Equal to everything: a cached input that always looks current."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = None


class _Frozen(list):
    """A list of `_Unchanged` that ignores writes: the cache is never refreshed."""

    def __setitem__(self, index, value):
        pass


@pytest.mark.parametrize("name", sorted(INCREMENTAL))
def test_a_cache_that_never_rebuilds_a_piece_is_caught(name, monkeypatch):
    """A broken twin: Fowl's grid-decided pieces, or Murray's swarms, are never rebuilt."""
    env = envs.make(name)
    observer = type(env.observer)(env.observer.options)
    if name == "murder_most_fowl_v0":
        original = observer._write_table
        built = set()

        def once(game, player, memory):
            if player not in built:
                built.add(player)
                original(game, player, memory)

        monkeypatch.setattr(observer, "_write_table", once)
    else:
        for state in observer._seen_state:
            state.swarms = _Frozen([_Unchanged()] * len(state.swarms))
    assert mismatches(env, observer, games=2) > 0


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("chicken_v1", {}),
        ("chicken_v1", {"copies_per_value": 7, "num_players": 3}),
        ("murder_she_crows_v1", {}),
        ("murder_she_crows_v1", {"copies_per_value": 7, "num_players": 3}),
    ],
)
def test_memoryview_parts_write_what_numpy_views_write(name, options):
    """An observer with `memoryview_parts` encodes the bytes its numpy-view twin encodes.

    A float added in place on a memoryview is summed in float64, on a numpy view in float32: with
    7 copies a value three sums of 1/7 already differ, so such pieces must stay numpy views.
    """
    env = envs.make(name, **options)
    cls = type(env.observer)
    assert cls.memoryview_parts
    numpy_twin = type("NumpyTwin", (cls,), {"memoryview_parts": False})(env.observer.options)
    rng = np.random.default_rng(3)
    for seed in range(4):
        env.reset(seed=seed)
        for _ in range(2_000):
            for player in range(env.options.num_players):
                a = env.observer.encode(env.game, player)
                b = numpy_twin.encode(env.game, player)
                assert a.tobytes() == b.tobytes(), env.observer.decode(a - b)
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                break
            env.step(random_legal(env.observe(agent)["action_mask"], rng))


def test_repeated_float_sums_stay_on_numpy_views():
    """Three cards of one value open to claims, 7 copies a value: the sum of 1/7 three times is
    the float32 sum it always was (a memoryview would add in float64 and round once)."""
    env = envs.make("murder_she_crows_v1", copies_per_value=7)
    env.reset(seed=0)
    env.game.available = [2, 2, 2]
    cls = type(env.observer)
    numpy_twin = type("NumpyTwin", (cls,), {"memoryview_parts": False})(env.observer.options)
    got = env.observer.encode(env.game, 0)
    assert got.tobytes() == numpy_twin.encode(env.game, 0).tobytes()
    total = np.float32(0.0)
    for _ in range(3):
        total += 1.0 / 7
    assert env.observer.decode(got)["available"][1] == total


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_an_env_with_warm_caches_pickles_and_deep_copies(name):
    """Observers hold memoryviews (which cannot be pickled): they travel as fresh observers."""
    import copy
    import pickle

    env = envs.make(name)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(5):
        env.step(random_legal(env.observe(env.agent_selection)["action_mask"], rng))
    for twin in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        for agent in env.possible_agents:
            mine, theirs = env.observe(agent), twin.observe(agent)
            assert mine["observation"].tobytes() == theirs["observation"].tobytes()
            assert mine["action_mask"].tobytes() == theirs["action_mask"].tobytes()


def test_a_fowl_pile_cache_keyed_too_coarsely_is_caught(monkeypatch):
    """A broken twin: Fowl's rows of a pile cached by the pile's length serve another pile's rows."""
    env = envs.make("murder_most_fowl_v0")
    observer = type(env.observer)(env.observer.options)
    by_length = {}

    def rows_of(pile):
        if len(pile) not in by_length:
            by_length[len(pile)] = type(observer)(observer.options)._pile_rows_of(pile)
        return by_length[len(pile)]

    monkeypatch.setattr(observer, "_pile_rows_of", rows_of)
    assert mismatches(env, observer, games=2) > 0


def test_fowl_grid_cells_rewritten_one_by_one_are_checked():
    """A broken twin: the changed grid cells are rewritten as empty cells (the whole-piece rewrite is
    right), so the cell-by-cell path must be taken, and be compared, for it to be caught."""
    env = envs.make("murder_most_fowl_v0")
    observer = type(env.observer)(env.observer.options)
    observer._cell_bytes = [observer._cell_bytes[-1]] * len(observer._cell_bytes)
    assert mismatches(env, observer, games=1) > 0


def test_fowl_murder_whereabouts_never_rewritten_is_caught(monkeypatch):
    """A broken twin: the Murder counts always look as written before, so they are never rewritten."""
    module = importlib.import_module("fowlplay.envs.fowl.observation")
    never_written = property(lambda self: _Unchanged(), lambda self, value: None)
    monkeypatch.setattr(module._SeatState, "where", never_written, raising=False)
    env = envs.make("murder_most_fowl_v0")
    assert mismatches(env, type(env.observer)(env.observer.options), games=2) > 0


def test_fowl_seat_pieces_never_rewritten_are_caught(monkeypatch):
    """A broken twin: the seat status and recorded types are written once per seat, never after a murder."""
    env = envs.make("murder_most_fowl_v0", num_players=3)  # its third game has a murder that records types
    observer = type(env.observer)(env.observer.options)
    original, built = observer._write_seats, set()

    def once(game, player, memory):
        if player not in built:
            built.add(player)
            original(game, player, memory)

    monkeypatch.setattr(observer, "_write_seats", once)
    assert mismatches(env, observer, games=GAMES) > 0
