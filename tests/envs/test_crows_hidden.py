"""Murder, She Crows hidden information: exact re-deals, an observation that misses no public fact,
and the per-player text view.

The deck's order is the game's only hidden information. The re-deal is checked against rejection
sampling (`envs.core.testing`) on the tiny variant, and broken twins that ignore a public fact must
fail the same check.
"""

from __future__ import annotations

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs import murder_she_crows_v1
from fowlplay.envs.core.cards import shuffled
from fowlplay.envs.core.testing import (
    compare_worlds,
    resampled_worlds,
)
from fowlplay.envs.crows import BaselineAgent, CrowsGame, CrowsOptions
from fowlplay.envs.crows.observation import CrowsObserver
from fowlplay.envs.crows.rules import Decision

from tests.envs import tiny_variants
from tests.envs.tiny_variants import TINY, TINY_PLAYERS

NAME = "murder_she_crows_v1"
#: A wrong sampler's p-value falls far below this, a right one's stays far above (seeds are fixed).
ALPHA = 1e-4


def make_tiny():
    return envs.make(NAME, num_players=TINY_PLAYERS[NAME], **TINY[NAME])


def played(seed: int, steps: int, viewer: str = "player_0"):
    """The tiny env after `steps` masked random actions of game `seed`, and what `viewer` saw."""
    return tiny_variants.played("murder_she_crows_v1", seed, steps, viewer)


def posterior(history, tries: int = 20_000):
    return tiny_variants.posterior("murder_she_crows_v1", history, tries)


# ----- re-deals ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def after_a_reshuffle():
    """Game 22 after 14 actions, and the worlds its history leaves possible by rejection sampling.

    The deck (2 2 1 1 1 in some order) is the reshuffled discard pile less the cards revealed since,
    and a 1 and a 2 lie face up on the new discard pile.
    """
    env, history = played(22, 14)
    game = env.game
    assert game.reshuffles == 1 and sorted(game.deck) == [1, 1, 1, 2, 2]
    assert game.discard == [0, 1, 1] and not game.over
    return env, posterior(history)


def test_the_redeal_after_a_reshuffle_is_the_exact_posterior(after_a_reshuffle):
    env, worlds = after_a_reshuffle
    result = compare_worlds(worlds, resampled_worlds(env, "player_0", sum(worlds.values()), seed=1))
    assert result.worlds == 10  # every order of 2 2 1 1 1, and nothing else
    assert not result.outside and result.p_value > ALPHA, result


def _pool_deck_with_discard(env, viewer, seed):
    """Broken twin: deals the deck from the deck and the discard pile together (keeping its size),
    as if the discard pile were not face up."""
    game = env.unwrapped.game
    pool = [*game.deck, *(v for v, k in enumerate(game.discard) for _ in range(k))]
    pool = shuffled(pool, np.random.default_rng(seed))
    game.deck, rest = pool[: len(game.deck)], pool[len(game.deck) :]
    game.discard = [rest.count(v) for v in range(len(game.discard))]
    game.deck_counts = [game.deck.count(v) for v in range(len(game.discard))]


def _reverse_or_keep(env, viewer, seed):
    """Broken twin: only ever the deck's order or its reverse (a possible order, wrongly weighted)."""
    game = env.unwrapped.game
    if np.random.default_rng(seed).random() < 0.5:
        game.deck.reverse()


@pytest.mark.parametrize(
    ("sampler", "caught_by"),
    [(_pool_deck_with_discard, "support"), (_reverse_or_keep, "distribution")],
)
def test_broken_samplers_are_rejected(after_a_reshuffle, sampler, caught_by):
    env, worlds = after_a_reshuffle
    result = compare_worlds(
        worlds, resampled_worlds(env, "player_0", sum(worlds.values()), seed=1, sampler=sampler)
    )
    if caught_by == "support":
        assert result.outside, result
    else:
        assert not result.outside and result.p_value < ALPHA, result


def test_a_state_that_remembers_which_opening_card_was_on_top_fails_the_posterior(monkeypatch):
    # No observation says which of the two opening cards lay on top, so a state that records it
    # tells apart worlds that no player can: the state lists them in value order instead.
    env, history = played(1, 0, viewer="player_1")
    assert sorted(env.game.revealed) == [1, 2]
    canonical = CrowsGame.state_dict
    monkeypatch.setattr(
        CrowsGame, "state_dict", lambda game: {**canonical(game), "revealed": list(game.revealed)}
    )
    worlds = posterior(history)
    result = compare_worlds(worlds, resampled_worlds(env, "player_1", sum(worlds.values()), seed=1))
    assert result.outside or result.p_value < ALPHA, result
    monkeypatch.undo()
    worlds = posterior(history)
    result = compare_worlds(worlds, resampled_worlds(env, "player_1", sum(worlds.values()), seed=1))
    assert not result.outside and result.p_value > ALPHA, result


def test_a_redeal_keeps_every_public_fact_and_reshuffles_only_the_deck():
    env = murder_she_crows_v1.env(num_players=3)
    agent = BaselineAgent(env.options)
    env.reset(seed=5)
    for _ in range(150):  # deep enough for the deck to have been reshuffled
        obs = env.observe(env.agent_selection)
        env.step(agent.act(obs["observation"], obs["action_mask"]))
    before = env.game.state_dict()
    assert env.game.reshuffles >= 1 and len(set(env.game.deck)) > 1
    orders = set()
    for seed in range(20):
        copy = env.clone()
        copy.resample_hidden("player_1", seed=seed)
        after = copy.game.state_dict()
        assert {k: v for k, v in after.items() if k != "deck"} == {
            k: v for k, v in before.items() if k != "deck"
        }
        assert sorted(after["deck"]) == sorted(before["deck"])
        orders.add(tuple(after["deck"]))
    assert len(orders) > 15


# ----- the observation holds every public fact ------------------------------------------------------
def public_facts_from_observation(observation: np.ndarray, player: int, options: CrowsOptions) -> dict:
    """Rebuild the public state, in absolute seats, from one player's observation vector alone."""
    parts = CrowsObserver(options).decode(observation)
    n, v, copies = options.num_players, options.max_value, options.copies_per_value

    def count(x):
        return round(float(x) * copies)

    def seat(piece):
        return (player + int(np.argmax(parts[piece]))) % n

    me = (n - 1 - int(np.argmax(parts["last_seat"]))) % n  # the observer's own seat
    runs, sets, track = [None] * n, [None] * n, [None] * n
    for i in range(n):
        s = (me + i) % n
        run = parts["run"][i * v : (i + 1) * v]
        runs[s] = [c + 1 for c in np.flatnonzero(run)]
        set_ = parts["set"][i * v : (i + 1) * v]
        sets[s] = [c + 1 for c in range(v) for _ in range(count(set_[c]))]
        track[s] = round(float(parts["track"][i]) * options.track_length)
    prov_set = np.flatnonzero(parts["provisional_set"])
    return {
        "me": me,
        "kind": int(np.argmax(parts["decision"])),
        "to_act": seat("acting_seat"),
        "turn_player": seat("turn_seat"),
        "runs": runs,
        "sets": sets,
        "track": track,
        "prov_run": [c + 1 for c in np.flatnonzero(parts["provisional_run"])],
        "prov_set": count(parts["provisional_set"][prov_set[0]]) if prov_set.size else 0,
        "revealed": [c + 1 for c in range(v) for _ in range(round(parts["revealed"][c] * 2))],
        "pending": int(np.argmax(parts["to_place"])) + 1 if parts["to_place"].any() else 0,
        "available": [c + 1 for c in range(v) for _ in range(count(parts["available"][c]))],
        "discard": [0, *(count(x) for x in parts["discard_pile"])],
        "deck_counts": [0, *(count(x) for x in parts["deck_counts"])],
        "deck_size": round(float(parts["deck_size"][0]) * options.deck_size),
        "coins": round(float(parts["coins_pending"][0]) * len(options.coin_spaces)),
        "pile_discards": options.pile_discards_per_turn
        - round(float(parts["pile_discards_left"][0]) * options.pile_discards_per_turn),
        "final_round": bool(parts["final_round"][0]),
        "turns": round(float(parts["turn_progress"][0]) * options.max_turns),
        "decisions": round(float(parts["decision_progress"][0]) * options.max_decisions),
    }


def public_facts_of(game: CrowsGame, player: int) -> dict:
    """The same facts read off the engine (the deck as counts only)."""
    state = game.state_dict()
    return {
        "me": player,
        "kind": int(game.kind),
        "deck_counts": [sorted(game.deck).count(v) for v in range(game.options.max_value + 1)],
        "deck_size": len(game.deck),
        "final_round": max(game.track) >= game.options.track_length,
        **{k: state[k] for k in ("to_act", "turn_player", "runs", "sets", "track", "prov_run", "prov_set")},
        **{k: state[k] for k in ("revealed", "pending", "available", "discard", "coins", "pile_discards")},
        **{k: state[k] for k in ("turns", "decisions")},
    }


def claimers_from(facts: dict, n: int) -> list[int]:
    """Who is still to be asked in a claim: the seats between the claimer and the busted player."""
    if facts["kind"] != Decision.CLAIM:
        return []
    out, s = [], (facts["to_act"] - 1) % n
    while s != facts["turn_player"]:
        out.append(s)
        s = (s - 1) % n
    return out


@pytest.mark.parametrize("num_players", [2, 5])
def test_the_observation_alone_rebuilds_the_public_state(num_players):
    # So an agent without memory misses nothing it may know. The rest of the state is the deck's
    # order, the claimers (rebuilt here from the rule) and counters of no consequence.
    options = CrowsOptions(num_players=num_players, pile_discards_per_turn=2, max_turns=60)
    env = murder_she_crows_v1.env(**vars(options))
    baseline = BaselineAgent(env.options)
    rng = np.random.default_rng(0)
    kinds = set()
    for g in range(4):
        env.reset(seed=g)
        while not env.game.over:
            game = env.game
            for p in range(num_players):
                facts = public_facts_from_observation(env.observe(f"player_{p}")["observation"], p, options)
                assert facts == public_facts_of(game, p)
                assert game.claimers == claimers_from(facts, num_players)
            kinds.add(game.kind)
            obs = env.observe(env.agent_selection)
            mask = obs["action_mask"]
            legal = np.flatnonzero(mask)
            action = baseline.act(obs["observation"], mask) if g % 2 else int(legal[rng.integers(legal.size)])
            env.step(action)
    assert kinds == set(Decision)
