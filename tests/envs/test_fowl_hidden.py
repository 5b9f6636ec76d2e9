"""Murder Most Fowl hidden information: exact re-deals, the public facts they keep, the text view and
the observation pieces a memory-less player needs (transcripts on stacked tables, as in
test_fowl_rules.py, whose helpers this file shares)."""

from __future__ import annotations

from collections import Counter
from math import comb

from fowlplay import envs
from fowlplay.envs.core.testing import (
    apply_script,
    compare_worlds,
    posterior_worlds,
    random_actions,
    record_history,
    resampled_worlds,
)
from fowlplay.envs.fowl.observation import FowlObserver
from fowlplay.envs.fowl.rules import Decision, Wile

from tests.envs.test_fowl_rules import Acts, card, table
from tests.envs.tiny_variants import TINY, TINY_PLAYERS

NAME = "murder_most_fowl_v0"


def make_tiny():
    return envs.make(NAME, num_players=TINY_PLAYERS[NAME], **TINY[NAME])


# ----- exact re-deals: broken twins the posterior harness must reject ----------------------------------
def forget_seen_cards(env, viewer, seed):
    """A broken twin: re-deals the cards everyone saw go into a hand as if nobody had seen them."""
    game = env.game
    known = game.known
    game.known = [[] for _ in known]
    env.resample_hidden(viewer, seed=seed)
    game.known = known


def test_the_harness_rejects_a_sampler_that_forgets_cards_seen_going_into_a_hand():
    # Tiny game 1 (masked random actions from default_rng(1)): player_0 takes Birbles 4 from a pile
    # top, then draws from the deck; player_1 looks on.
    actions = random_actions(make_tiny(), seed=1, action_seed=1)[:2]
    env = make_tiny()
    history = record_history(env, 1, actions, "player_1")
    assert env.game.known[0] == [card("B4", env.options)]
    posterior = posterior_worlds(make_tiny, history, range(10_000, 22_000), want=400)
    n = sum(posterior.values())
    assert n >= 60 and len(posterior) > 1
    good = compare_worlds(posterior, resampled_worlds(env, "player_1", n, seed=1))
    assert not good.outside and good.p_value > 1e-3, good
    broken = compare_worlds(
        posterior, resampled_worlds(env, "player_1", n, seed=1, sampler=forget_seen_cards)
    )
    assert broken.outside, broken  # deals where player_0 no longer holds the Birbles 4 everyone saw


def playing_opponent():
    """player_0 is deciding which card to play; only a Discard wile is playable (1x1 grids: no free cell;
    player_1's bird is the only target), so the hidden hand holds at least one Discard wile."""
    env = table(
        grid_size=1,
        hands=[["[D]", "B9"], ["G7", "G8"]],
        grids=[{(0, 0): "B1"}, {(0, 0): "G1"}],
        deck_top=["R8", "R9"],
    )
    a = Acts(env)
    apply_script(env, [a.deck, a.deck, a.discard("R8")])
    assert env.decision() == "play a card" and env.agent_selection == "player_0"
    return env


def test_an_opponent_deciding_what_to_play_keeps_a_playable_card_in_every_redeal():
    env = playing_opponent()
    opts = env.options
    discard = card("[D]", opts)
    # The unseen pool: player_0's 3 cards and the deck; it holds all 3 Discard wiles.
    pool = len(env.game.deck) + 3
    wiles = opts.discard_wiles
    # Exact posterior of how many Discard wiles player_0 holds: hypergeometric, given at least one.
    prior = {k: comb(wiles, k) * comb(pool - wiles, 3 - k) / comb(pool, 3) for k in range(4)}
    exact = {k: prior[k] / (1 - prior[0]) for k in (1, 2, 3)}
    draws = 3000
    seen = Counter()
    for seed in range(draws):
        copy = env.clone()
        copy.resample_hidden("player_1", seed=seed)
        seen[copy.game.hands[0].count(discard)] += 1
        assert sorted(copy.game.hands[1]) == sorted(env.game.hands[1])
    assert seen[0] == 0  # a hand with nothing playable would have been shown
    for k in (1, 2, 3):
        sd = (exact[k] * (1 - exact[k]) / draws) ** 0.5
        assert abs(seen[k] / draws - exact[k]) < 5 * sd + 1e-9, (k, seen[k] / draws, exact[k])


def test_a_sampler_ignoring_that_the_opponent_could_play_deals_impossible_hands():
    env = playing_opponent()
    discard = card("[D]", env.options)

    def unconditioned(env, viewer, seed):
        """Broken twin: re-deals as if player_0 were not deciding what to play."""
        game = env.game
        game.stage = Decision.DISCARD
        env.resample_hidden(viewer, seed=seed)
        game.stage = Decision.PLAY

    impossible = 0
    for seed in range(200):
        copy = env.clone()
        unconditioned(copy, "player_1", seed)
        impossible += discard not in copy.game.hands[0]
    assert impossible > 100  # about 78% of unconditioned deals leave player_0 nothing to play


def test_resampling_keeps_every_public_fact():
    env = table(
        n=3,
        hands=[["B1", "B2"], ["P1", "P2"], ["R1", "[M]"]],
        piles=[["G5", "[B]"], ["R7"], []],
        grids=[["T1 T2"], ["G1"], []],
        deck_top=["G2", "G3", "G4"],
    )
    a = Acts(env)
    # player_0 takes Runceys 7 from player_1's pile in front of everyone, then a deck card
    apply_script(env, [a.pile(1), a.deck, a.discard("B1"), a.play("B2"), a.own(4, 6)])
    apply_script(env, [a.deck, a.deck])  # player_1 now holds P1 P2 and two unseen deck cards
    g = env.game
    before = g.state_dict()
    for seed in range(30):
        copy = env.clone()
        copy.resample_hidden("player_2", seed=seed)
        after = copy.game.state_dict()
        for key in before:
            if key not in ("hands", "deck"):
                assert after[key] == before[key], key  # piles in order, grids, known, flags, turn...
        hands = after["hands"]
        assert card("R7", env.options) in hands[0]  # seen going in, never seen leaving
        assert hands[2] == before["hands"][2]  # the viewer's own hand
        assert [len(h) for h in hands] == [len(h) for h in before["hands"]]
        assert len(after["deck"]) == len(before["deck"])
        assert Counter(after["deck"] + [c for h in hands for c in h]) == Counter(
            before["deck"] + [c for h in before["hands"] for c in h]
        )
        assert copy.view("player_2") == env.view("player_2")


# ----- what a memory-less player sees ----------------------------------------------------------------
def test_pile_order_gives_every_card_of_every_pile_by_its_depth():
    env = table(piles=[["R1", "[B]", "R2", "[B]"], []], deck_top=["G1", "G2"])
    opts, obs = env.options, FowlObserver(env.options)
    size = opts.deck_size  # per pile: one slot per bird id, then one per wile copy
    blocking = opts.num_birds  # the first Blocking slot (Blocking is the first wile)

    def order(agent):
        view = obs.decode(env.observe(agent)["observation"])["pile_order"].reshape(2, size)
        return {slot: round(float(v), 4) for slot, v in enumerate(view[0 if agent == "player_0" else 1]) if v}

    # top first: Blocking, Runceys 2, Blocking, Runceys 1
    expected = {blocking: 1.0, card("R2", opts): 0.5, blocking + 1: 0.3333, card("R1", opts): 0.25}
    assert order("player_0") == expected
    assert order("player_1") == expected  # player_0's pile is player_1's seat +1: the same facts
    a = Acts(env)
    apply_script(env, [a.pile(0), a.deck, a.discard("G1")])  # the top Blocking goes; Grushes 1 comes
    assert order("player_0") == {
        card("G1", opts): 1.0,
        card("R2", opts): 0.5,
        blocking: 0.3333,
        card("R1", opts): 0.25,
    }
    view = obs.decode(env.observe("player_1")["observation"])
    assert view["known_hands"][opts.num_kinds + card("[B]", opts)] == 1  # player_0 holds it


def test_the_arrested_piece_follows_the_route_the_murderer_could_show():
    env = table(
        hands=[["[M]", "P9"], ["B9", "[D]"]],
        grids=[["B1 B2 B3 B4"], {(0, 0): "G1", (0, 1): "[B]", (0, 2): "[S]", (0, 3): "[D]"}],
        deck_top=["R8", "R9"],
    )
    a = Acts(env)
    obs = FowlObserver(env.options)
    apply_script(env, [a.deck, a.deck, a.discard("R8"), a.play("[M]"), a.own(3, 4), a.murder(1)])
    view = obs.decode(env.observe("player_1")["observation"])
    assert view["recorded_types"].reshape(2, 4)[1].tolist() == [1, 0, 0, 0]  # against player_0
    assert view["arrested"].tolist() == [0, 1]
    assert view["murder_whereabouts"].tolist() == [0, 0, 0, 0, 1, 0]
    assert env.game.terminal and env.game.winners() == []


def test_the_text_view_shows_what_the_player_knows_and_nothing_hidden():
    env = table(
        hands=[["B1", "B2"], ["P1", "P2"]],
        piles=[["G5"], ["R3", "R7"]],
        grids=[[], ["G1 [B]"]],
        deck_top=["G2", "G3"],
    )
    a = Acts(env)
    apply_script(env, [a.pile(1), a.deck, a.discard("B1")])
    mine = env.view("player_0")
    theirs = env.view("player_1")
    assert "your hand: Birbles 2, Grushes 2, Runceys 7" in mine
    assert "to act: you - play a card" in mine
    assert "your hand: Piptits 1, Piptits 2" in theirs
    assert "to act: player_0 - play a card" in theirs
    assert "hand: 3 cards, seen: Runceys 7" in theirs  # the pile card, never the deck card
    assert "Grushes 2" not in theirs and "Birbles 2" not in theirs
    assert "Piptits" not in mine
    assert "pile: 2 cards, top first: Birbles 1, Grushes 5" in theirs
    assert "pile: 1 card, top first: Runceys 3" in mine
    assert "[B]" in mine and "G1" in mine  # player_1's grid
    # a re-deal of what player_1 cannot see leaves player_1's view as it is
    copy = env.clone()
    copy.resample_hidden("player_1", seed=3)
    assert copy.view("player_1") == theirs


def test_view_after_the_end_names_the_winners_or_nobody():
    env = table(
        hands=[["[M]", "P9"], ["B9", "[D]"]],
        grids=[["B1 B2 B3 B4"], {(0, 0): "G1", (0, 1): "[B]", (0, 2): "[S]", (0, 3): "[D]"}],
        deck_top=["R8", "R9"],
    )
    a = Acts(env)
    apply_script(env, [a.deck, a.deck, a.discard("R8"), a.play("[M]"), a.own(3, 4), a.murder(1)])
    text = env.view("player_0")
    assert "game over: winner(s) nobody (every reward is 0)" in text
    assert "recorded Birbles; would be arrested" in text
    assert "[M]" in text
    assert env.game.wiles_in_grids[Wile.MURDER] == 1
