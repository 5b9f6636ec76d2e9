"""The re-deal for no viewer (`resample_hidden(None, seed)`, the `oracle:N` search's): only what no
player has seen is dealt again.

Every hand is face up to the search that uses it, so the re-deal must keep every card any player
holds or has seen, and deal the rest (the deck's order) from the chance process's own law given
everything the whole table saw. Checked per game on its tiny variant against an honest rejection
sampler that replays seeds and keeps those where *every* player saw exactly what it saw in the real
game (the posterior given the union of all views), and two broken twins must fail: one that keeps
the deck's order (nothing re-dealt), one that re-deals a viewer's hidden cards (hands move).
Murder Most Fowl and Murray deal hands at the start, which a replayed seed matches about once in
a thousand, too rarely to sample; there a counting check stands in: given every view, the deck's
order must be uniform over the distinct arrangements of the cards left in it (the shuffle is
uniform and nothing any player saw depends on the order of the cards nobody has drawn).
"""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from fowlplay.envs.core.cards import shuffled
from fowlplay.envs.core.testing import compare_worlds, random_actions, resampled_worlds, world_key

from tests.envs.tiny_variants import make_tiny

#: A wrong sampler's p-value falls far below this, a right one's stays far above (seeds are fixed).
ALPHA = 1e-4
#: Per game: (game seed, actions played) of a state with some cards drawn and several left in the
#: deck, and how its law is checked: "rejection" (replayed seeds) or "counting" (arrangements).
STATES = {
    "chicken_v1": (0, 3, "rejection"),
    "murder_she_crows_v1": (2, 2, "rejection"),
    "murder_most_fowl_v0": (1, 1, "counting"),
    "murray_frog_v0": (2, 3, "counting"),
}


def _seen_by_all(env) -> bytes:
    """Every player's observation and mask: what the whole table has seen."""
    return b"".join(
        env.observe(a)["observation"].tobytes() + env.observe(a)["action_mask"].tobytes()
        for a in env.possible_agents
    )


def _history(env, seed: int, actions: list[int]) -> list[tuple[str | None, bytes]]:
    env.reset(seed=seed)
    views = [(None, _seen_by_all(env))]
    for action in actions:
        actor = env.agent_selection
        env.step(action)
        views.append((actor, _seen_by_all(env)))
    return views


def _replays(env, seed: int, actions: list[int], history) -> bool:
    """True if game `seed` with these actions shows every player exactly what `history` recorded."""
    env.reset(seed=seed)
    if _seen_by_all(env) != history[0][1]:
        return False
    for action, (actor, seen) in zip(actions, history[1:]):
        if env.agent_selection != actor or env.game.over or not env.observe(actor)["action_mask"][action]:
            return False
        env.step(action)
        if _seen_by_all(env) != seen:
            return False
    return True


def _posterior(name: str, seed: int, actions: list[int], history, tries: int = 20_000, want: int = 300):
    env = make_tiny(name)
    worlds: Counter = Counter()
    for s in range(10_000, 10_000 + tries):
        if _replays(env, s, actions, history):
            worlds[world_key(env)] += 1
            if sum(worlds.values()) >= want:
                break
    return worlds


@pytest.fixture(scope="module", params=sorted(STATES))
def played(request):
    """(name, the tiny env in the state of `STATES`, the rejection sample of its worlds)."""
    name = request.param
    seed, steps, how = STATES[name]
    env = make_tiny(name)
    actions = random_actions(env, seed=seed, action_seed=seed)[:steps]
    history = _history(env, seed, actions)
    if how == "counting":
        return name, env, _arrangements(env, 600)
    return name, env, _posterior(name, seed, actions, history)


def _arrangements(env, n: int) -> Counter:
    """`n` draws spread evenly over every distinct order of the deck, the rest of the world as it is:
    the law a uniform shuffle gives the cards nobody has seen, as a sample to compare with."""
    game = env.unwrapped.game
    orders = sorted(set(itertools.permutations(sorted(game.deck))))
    worlds: Counter = Counter()
    for order in orders:
        copy = env.clone()
        copy.unwrapped.game.deck = list(order)
        worlds[world_key(copy)] = n // len(orders)
    return worlds


def _no_viewer(env, viewer, seed):
    env.resample_hidden(None, seed=seed)


def _deck_kept(env, viewer, seed):
    """Broken: re-deals nothing (as if the deck's order were seen)."""


def _hands_redealt(env, viewer, seed):
    """Broken: deals player_0's cards (a hand, or Crows' face-up piles) with the deck, as if unseen."""
    game = env.unwrapped.game
    if hasattr(game, "numbers"):
        held = game.numbers[0]
    elif hasattr(game, "hands"):
        held = game.hands[0]
    else:
        held = game.runs[0] or game.sets[0]
    pool = shuffled(sorted(list(held) + list(game.deck)), np.random.default_rng(seed))
    held[:] = pool[: len(held)]
    game.deck = pool[len(held) :]


def test_the_no_viewer_redeal_is_the_table_posterior(played):
    name, env, worlds = played
    assert len(worlds) >= 2, f"{name}: the chosen state leaves nothing unseen; pick a later one"
    result = compare_worlds(
        worlds, resampled_worlds(env, None, sum(worlds.values()), seed=1, sampler=_no_viewer)
    )
    assert not result.outside and result.p_value > ALPHA, f"{name}: {result}"


def test_the_no_viewer_redeal_changes_no_view_and_keeps_every_hand(played):
    _, env, _ = played
    seen, before = _seen_by_all(env), env.unwrapped.game.state_dict()
    for seed in range(20):
        copy = env.clone()
        copy.resample_hidden(None, seed=seed)
        after = copy.unwrapped.game.state_dict()
        assert _seen_by_all(copy) == seen
        assert {k: v for k, v in after.items() if k != "deck"} == {
            k: v for k, v in before.items() if k != "deck"
        }
        assert sorted(after["deck"]) == sorted(before["deck"])


@pytest.mark.parametrize("sampler", [_deck_kept, _hands_redealt], ids=["deck-kept", "hands-redealt"])
def test_broken_no_viewer_redeals_fail(played, sampler):
    name, env, worlds = played
    result = compare_worlds(
        worlds, resampled_worlds(env, None, sum(worlds.values()), seed=1, sampler=sampler)
    )
    assert result.outside or result.p_value < ALPHA, f"{name}: a broken re-deal passed: {result}"
