"""The rules engines' speed paths agree with the plain computations they replace: Fowl's scores
kept up to date bird by bird against a full best-route search, Murray's create-a-swarm table
against the combinations themselves, and the bytearray legal masks against the actions' rules."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.core.testing import random_legal
from fowlplay.envs.fowl.rules import Decision, FowlGame, FowlOptions, best_route
from fowlplay.envs.murray import rules as murray


def score_mismatches(name_players: int, games: int, seed: int = 0, every: int = 1) -> int:
    """Masked random Fowl games on the engine; every `every` decisions compare each seat's cached scores with a full search.

    Scored only now and then, the cached scores go through several changes (birds added and
    removed) between two reads.
    """
    options = FowlOptions(num_players=name_players)
    rng = np.random.default_rng(seed)
    wrong = 0
    for game_seed in range(games):
        game = FowlGame(options, np.random.default_rng(game_seed))
        step = 0
        while not game.over:
            if step % every == 0:
                for p in range(game.num_players):
                    birds = game.grid_birds(p)
                    wrong += game.score(p) != best_route(birds, game.options.min_route)[0]
                    if game.recorded[p]:
                        clear = best_route(birds, game.options.min_route, game.recorded[p])[0]
                        wrong += game.clear_score(p) != clear
            game.apply(random_legal(game.legal_mask(), rng))
            step += 1
    return wrong


@pytest.mark.parametrize(("n", "every"), [(2, 1), (4, 1), (2, 5), (3, 9)])
def test_fowl_scores_kept_up_to_date_match_a_full_search(n, every):
    assert score_mismatches(n, games=8, every=every) == 0


def test_a_route_search_that_misses_new_routes_is_caught(monkeypatch):
    """A broken twin: if the search through a new bird finds nothing, the cached scores go stale."""
    monkeypatch.setattr(FowlGame, "_best_through", lambda self, player, cell, barred, floor=0: 0)
    assert score_mismatches(2, games=6) > 0


def test_a_chain_bound_too_tight_is_caught(monkeypatch):
    """A broken twin: chains bounded one bird short make the search skip routes it needed."""
    original = FowlGame._chain
    monkeypatch.setattr(
        FowlGame, "_chain", lambda self, cards, cell, up: original(self, cards, cell, up) - up
    )
    assert score_mismatches(2, games=6) > 0


def discard_a_bird_added_since_the_last_score() -> FowlGame:
    """Player 0 holds 3-4-5 of Birbles (no route, scored 0), adds a Birbles 1 in front of them and,
    before anyone reads the score again, player 1's Discard wile takes that bird away."""
    game = FowlGame(FowlOptions(), np.random.default_rng(0))
    game.arrange(grids=[{(5, 6): 2, (5, 7): 3, (5, 8): 4}, {(5, 5): 10}])
    assert game.score(0) == 0
    game._place(0, 5 * 11 + 5, 0)  # Birbles 1 on (5,5): a route of 4 until it goes
    game.to_act, game.stage, game.pending_card = 1, Decision.DISCARD_TARGET, game._first_wile + 1
    game._wile_on(1, 0, 5 * 11 + 5)
    return game


def test_a_bird_added_and_discarded_before_a_score_is_read_leaves_no_route():
    game = discard_a_bird_added_since_the_last_score()
    assert game.score(0) == best_route(game.grid_birds(0))[0] == 0


def test_a_removed_bird_left_among_the_added_ones_is_caught(monkeypatch):
    """A broken twin: the bird added and taken off again is still searched through (the Discard
    wile on its cell read as a bird)."""

    def removed(self, player, cell):
        self.bird_cells[player].discard(cell)
        for cached in (self._scores, self._clear_scores):
            if cached[player] != 0:
                cached[player] = None

    monkeypatch.setattr(FowlGame, "_bird_removed", removed)
    game = discard_a_bird_added_since_the_last_score()
    try:
        stale = game.score(0) != 0
    except IndexError:  # the wile's id read as a bird of a type that does not exist
        stale = True
    assert stale


def test_a_bird_removed_that_keeps_every_score_is_caught(monkeypatch):
    """A broken twin: a route broken by a Discard or Swap wile still counts."""
    monkeypatch.setattr(
        FowlGame, "_bird_removed", lambda self, player, cell: self.bird_cells[player].discard(cell)
    )
    assert score_mismatches(2, games=30) > 0


def test_murray_create_table_matches_the_combinations():
    """Every hand of 0..4 copies of each type of a value: the table's swarms are the ones it can make."""
    for value, types in murray.TYPES_OF_VALUE.items():
        _, table = next(entry for entry in murray._CREATE_BY_VALUE if entry[0] == tuple(types))
        for held in itertools.product(range(5), repeat=len(types)):
            hand = [0] * murray.HAND_KINDS
            for t, count in zip(types, held):
                hand[t] = count
            key = 0
            for count in held:
                key = key * 4 + min(count, 3)
            expected = [
                i
                for i, combo in enumerate(murray.SWARM_COMBOS)
                if murray.VALUE[combo[0]] == value and all(hand[t] >= combo.count(t) for t in set(combo))
            ]
            assert list(table[key]) == expected, (value, held)


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_legal_masks_are_fresh_int8_arrays(name):
    """Whatever a game builds its mask in, the env hands out an int8 array the caller may keep."""
    env = envs.make(name)
    env.reset(seed=0)
    mask = env.game.legal_mask()
    assert mask.dtype == np.int8 and mask.shape == (env.num_actions,) and mask.flags.writeable
    assert not np.shares_memory(mask, env.game.legal_mask())  # the env hands each one out as it is
    observed = env.observe(env.agent_selection)["action_mask"]
    observed[:] = 0
    assert env.observe(env.agent_selection)["action_mask"].tobytes() == mask.tobytes()


def stale_masks(env, games: int = 3, seed: int = 0) -> int:
    """Masked random play; count decisions where the env's mask (observed, or checked by `step`) is not the state's."""
    rng = np.random.default_rng(seed)
    wrong = 0
    for game_seed in range(games):
        env.reset(seed=game_seed)
        for agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            truth = env.game.legal_mask()
            wrong += obs["action_mask"].tobytes() != truth.tobytes()
            # `step` refuses exactly the state's illegal actions (checked on a clone, which changes nothing here).
            illegal = np.flatnonzero(truth == 0)
            if illegal.size:
                twin = env.clone()
                twin._mask = env._mask
                try:
                    twin.step(int(illegal[0]))
                    wrong += 1
                except envs.IllegalActionError:
                    pass
            if wrong:  # a stale mask may offer an illegal action: stop before playing it
                return wrong
            env.step(random_legal(obs["action_mask"], rng))
    return wrong


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_the_env_caches_the_mask_of_the_current_state_only(name):
    """`observe` and `step` share one cached mask per state: it never outlives the decision."""
    assert stale_masks(envs.make(name)) == 0


def test_a_mask_cache_kept_across_decisions_is_caught():
    """A broken twin: an env that keeps the cached mask after a step serves the previous state's."""
    env = envs.make("murder_most_fowl_v0")

    class Stale(type(env)):
        def step(self, action):
            kept = self._mask
            super().step(action)
            if kept is not None and not self.game.over:
                self._mask = kept

    assert stale_masks(Stale(**vars(env.options))) > 0


def grid_list_mismatches(num_players: int, games: int, seed: int = 0) -> int:
    """Masked random Fowl games; count decisions after which `grid_lists` is not `grids` as lists."""
    env = envs.make("murder_most_fowl_v0", num_players=num_players)
    rng = np.random.default_rng(seed)
    wrong = 0
    for game_seed in range(games):
        env.reset(seed=game_seed)
        while not env.game.over:
            env.step(random_legal(env.observe(env.agent_selection)["action_mask"], rng))
            wrong += env.game.grid_lists != env.game.grids.tolist()
            wrong += env.clone().game.grid_lists != env.game.grids.tolist()
    return wrong


@pytest.mark.parametrize("n", [2, 4])
def test_fowl_grid_lists_follow_the_grids(n):
    assert grid_list_mismatches(n, games=4) == 0


def test_a_grid_write_that_skips_the_lists_is_caught(monkeypatch):
    """A broken twin: a placed card that reaches `grids` but not `grid_lists`."""
    original = FowlGame._place

    def place(self, player, cell, card):
        before = self.grid_lists[player][cell]
        original(self, player, cell, card)
        self.grid_lists[player][cell] = before

    monkeypatch.setattr(FowlGame, "_place", place)
    assert grid_list_mismatches(2, games=1) > 0


def playable_mismatches(num_players: int, games: int, seed: int = 0, **options) -> int:
    """Masked random Fowl games; at every decision compare the fast playability checks with `_playable` card by card."""
    env = envs.make("murder_most_fowl_v0", num_players=num_players, **options)
    rng = np.random.default_rng(seed)
    wrong = 0
    for game_seed in range(games):
        env.reset(seed=game_seed)
        while not env.game.over:
            game: FowlGame = env.game
            for p in range(num_players):
                if game.alive[p]:
                    wrong += game._any_playable(p) != any(game._playable(p, c) for c in game.hands[p])
            if game.stage == Decision.PLAY:
                me, start = game.to_act, game._blocks["play"]
                legal = (np.flatnonzero(game.legal_mask()) - start).tolist()
                wrong += legal != sorted({c for c in game.hands[me] if game._playable(me, c)})
            if wrong:  # a wrong check may leave a decision with no legal action: stop here
                return wrong
            env.step(random_legal(env.observe(env.agent_selection)["action_mask"], rng))
    return wrong


#: Small grids fill up, so that birds become unplayable: the case the fast checks must not miss.
PLAYABLE_CASES = [(2, {}), (4, {}), (2, {"grid_size": 3}), (3, {"grid_size": 3})]


@pytest.mark.parametrize(("n", "options"), PLAYABLE_CASES)
def test_fowl_fast_playability_checks_match_playable(n, options):
    assert playable_mismatches(n, games=4, **options) == 0


def test_a_playability_check_that_forgets_a_full_grid_is_caught(monkeypatch):
    """A broken twin: a bird in hand is taken as playable even when the grid has no room left."""
    original = FowlGame._any_playable
    monkeypatch.setattr(
        FowlGame,
        "_any_playable",
        lambda self, player: min(self.hands[player]) < self._first_wile or original(self, player),
    )
    assert playable_mismatches(2, games=4, grid_size=3) > 0
