"""Murray the A**hole Frog: rule transcripts on stacked tables, the pure scoring functions, the
observation's hidden information and the baseline against random play."""

from __future__ import annotations

import numpy as np
import pytest
from fowlplay.envs.core.agents import RandomAgent
from fowlplay.envs.core.testing import play
from fowlplay.envs.murray import BaselineAgent, Card, Decision, MurrayGame, MurrayOptions, env
from fowlplay.envs.murray.cards import SWARM_COMBOS, nth_card
from fowlplay.envs.murray.observation import HawkStatus, MurrayObserver
from fowlplay.envs.murray.rules import score_breakdown, swarm_points, tadpole_points

C = Card
FILLER = [C.FRUIT_FLY, C.HOUSE_FLY, C.CRANE_FLY]  # three cards of different values: no swarm


def new_game(n: int = 3, **options) -> MurrayGame:
    return MurrayGame(MurrayOptions(num_players=n, **options), np.random.default_rng(0))


def action(game: MurrayGame, block: str, index: int = 0) -> int:
    return game.layout[block].start + index


def act(game: MurrayGame, block: str, index: int = 0) -> None:
    """Apply one named action, checking it is legal first."""
    a = action(game, block, index)
    legal = [game.action_name(x) for x in game.legal_actions()]
    assert game.legal_mask()[a], f"{game.action_name(a)} is not legal in '{game.decision()}'; legal: {legal}"
    game.apply(a)


def legal(game: MurrayGame, block: str, index: int = 0) -> bool:
    return bool(game.legal_mask()[action(game, block, index)])


def hand(game: MurrayGame, p: int) -> list[int]:
    return sorted(t for t, c in enumerate(game.hands[p]) for _ in range(c))


def swarm_cards(game: MurrayGame, p: int) -> list[list[int]]:
    return [sorted(t for t, c in enumerate(s) for _ in range(c)) for s in game.swarms[p]]


def combo(*cards: int) -> int:
    return SWARM_COMBOS.index(tuple(sorted(cards)))


def swap(card: int, pond_slot: int) -> int:
    """Index in the swap block of swapping `card` from hand with the default 3-card pond's slot."""
    return card * 3 + pond_slot


def swarm_slot(game: MurrayGame, owner: int, slot: int) -> int:
    """Index in the murray / swarm blocks of `owner`'s swarm `slot`, seen from the current player."""
    return ((owner - game.player) % game.num_players) * game.options.max_swarms + slot


# ----- setup and the flow of a turn -----------------------------------------------------------------
@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_setup_deals_six_three_to_the_pond_and_the_first_player_draws_three(n):
    for seed in range(20):
        game = MurrayGame(MurrayOptions(num_players=n), np.random.default_rng(seed))
        assert game.hand_sizes == [9] + [6] * (n - 1)  # no swarm yet: any Murray is replaced
        assert len(game.pond) == 3
        assert game.discard[C.HAWK] == 1 and not game.hawk_in
        murrays_played = game.discard[C.MURRAY]
        total = sum(game.options.counts) + game.options.murray_count
        assert len(game.deck) == total - 9 - 6 * (n - 1) - 3 - murrays_played
        assert game.decision() == "turn" and game.current_player == 0
    assert MurrayOptions(num_players=5).counts[0] == 12 and MurrayOptions(num_players=4).murray_count == 3


def test_end_of_turn_pass_left_then_discard_down_to_nine_then_the_next_player_draws_two():
    game = new_game()
    big = [C.FRUIT_FLY, C.HOUSE_FLY, C.CRANE_FLY, C.DEER_FLY, C.FIREFLY] * 2  # 10 cards
    game.set_table(hands=[big, FILLER, FILLER], pond=FILLER, deck=[C.MIDGE, C.MAYFLY, C.HORNET, C.MIDGE])
    assert hand(game, 0) == sorted([*big, C.MIDGE, C.MAYFLY])  # 12 cards after the draw
    act(game, "pass", C.FIREFLY)
    assert hand(game, 1) == sorted([*FILLER, C.FIREFLY])
    assert game.last_passed[0] == C.FIREFLY and game.last_received[1] == C.FIREFLY
    assert game.decision() == "discard" and game.current_player == 0
    act(game, "discard", C.DEER_FLY)
    act(game, "discard", C.DEER_FLY)
    assert game.hand_sizes[0] == 9 and game.discard[C.DEER_FLY] == 2
    assert game.current_player == 1 and game.decision() == "turn"
    assert hand(game, 1) == sorted([*FILLER, C.FIREFLY, C.HORNET, C.MIDGE])


def test_the_hawk_must_be_passed_and_a_single_card_passes_nothing():
    game = new_game()
    game.set_table(hands=[[C.HAWK, C.MIDGE, C.MIDGE], [C.CRANE_FLY], FILLER], pond=FILLER, deck=FILLER * 3,
                   hawk_in=True, draws=0)  # fmt: skip
    passes = [a for a in game.legal_actions() if a in game.layout["pass"]]
    assert passes == [action(game, "pass", C.HAWK)]
    act(game, "pass", C.HAWK)
    assert game.hands[1][C.HAWK] == 1 and game.hawk_seen[1] and game.last_received[1] == C.HAWK
    # player 1 now holds the Hawk and three cards: the Hawk again is the only pass
    assert [a for a in game.legal_actions() if a in game.layout["pass"]] == [action(game, "pass", C.HAWK)]

    lone = new_game()
    lone.set_table(hands=[[C.MIDGE], FILLER, FILLER], pond=FILLER, deck=FILLER, draws=0)
    assert not any(a in lone.layout["pass"] for a in lone.legal_actions())
    act(lone, "end_turn")
    assert lone.hands[0][C.MIDGE] == 1 and lone.current_player == 1


def test_a_hawk_holder_may_not_leave_the_hawk_alone_so_it_always_passes_it():
    # seed: "If you haven't gone out and have the Hawk, you must pass the Hawk."
    game = new_game()
    game.set_table(hands=[[C.HAWK, C.MIDGE], FILLER, FILLER], pond=[C.MIDGE, C.MAYFLY, C.HORNET],
                   deck=FILLER * 3, hawk_in=True, draws=0)  # fmt: skip
    allowed = {game.layout.decode(a)[0] for a in game.legal_actions()}
    assert allowed == {"swap", "pass"}  # no fly draw, no ending the turn holding the Hawk
    act(game, "swap", swap(C.MIDGE, 2))  # size-neutral: allowed
    act(game, "pass", C.HAWK)
    assert game.hands[1][C.HAWK] == 1 and game.hand_sizes[0] == 1

    five = new_game()
    five.set_table(hands=[[C.HAWK, C.MIDGE, C.MIDGE, C.MIDGE, C.MIDGE, C.PAPER_WASP], FILLER, FILLER], pond=FILLER,
                   deck=FILLER * 3, hawk_in=True, draws=0)  # fmt: skip
    act(five, "ability", 4)  # Paper Wasp: the Hawk and four Midges remain
    act(five, "create", combo(C.MIDGE, C.MIDGE, C.MIDGE))  # the Hawk and one Midge remain
    assert not legal(five, "add", C.MIDGE) and not legal(five, "fly_draw", C.MIDGE)
    assert [five.layout.decode(a)[0] for a in five.legal_actions()] == ["swap"] * 3 + ["pass"]
    four = new_game()
    four.set_table(hands=[[C.HAWK, C.MIDGE, C.MIDGE, C.MIDGE], FILLER, FILLER], pond=FILLER, deck=FILLER * 3,
                   hawk_in=True, draws=0)  # fmt: skip
    assert not legal(four, "create", combo(C.MIDGE, C.MIDGE, C.MIDGE))  # it would leave the Hawk alone
    assert legal(four, "fly_draw", C.MIDGE) and legal(four, "pass", C.HAWK)


@pytest.mark.parametrize("n", [3, 5])
def test_in_played_games_no_turn_ends_with_the_hawk_kept(n):
    e = env(num_players=n)
    rng = np.random.default_rng(n)
    baseline = BaselineAgent(e.options)
    holders = 0
    for seed in range(20):
        e.reset(seed=seed)
        for agent in e.agent_iter():
            obs, _, done, cut, _ = e.last()
            if done or cut:
                e.step(None)
                continue
            game = e.game
            p, turn, held = game.player, game.turn, game.hands[game.player][C.HAWK]
            if seed % 2:
                a = baseline.act(obs["observation"], obs["action_mask"])
            else:
                a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            e.step(a)
            if held and game.turn != turn and not game.over:
                holders += 1
                assert not game.hands[p][C.HAWK], "a Hawk holder ended the turn keeping it"
    assert holders > 10


def test_the_hand_may_never_become_empty():
    game = new_game()
    game.set_table(hands=[[C.MIDGE] * 3, FILLER, FILLER], pond=FILLER, deck=FILLER, draws=0)
    assert not legal(game, "create", combo(C.MIDGE, C.MIDGE, C.MIDGE))  # would empty the hand
    game.set_table(hands=[[C.MIDGE] * 4, FILLER, FILLER], pond=FILLER, deck=FILLER, draws=0)
    act(game, "create", combo(C.MIDGE, C.MIDGE, C.MIDGE))
    assert not legal(game, "add", C.MIDGE)  # the last card stays in hand
    assert not legal(game, "fly_draw", C.MIDGE) and not legal(game, "pass", C.MIDGE)
    assert legal(game, "swap", swap(C.MIDGE, 0)) and legal(game, "end_turn")
    one = new_game()
    one.set_table(hands=[[C.PAPER_WASP], FILLER, FILLER], pond=FILLER, deck=FILLER, draws=0)
    assert not legal(one, "ability", 4)


def test_pond_swap_and_common_fly_draw_are_once_per_turn_and_a_murray_drawn_so_is_discarded():
    game = new_game()
    game.set_table(hands=[[C.MIDGE, C.HOUSE_FLY, C.CRANE_FLY, C.FIREFLY], FILLER, FILLER],
                   pond=[C.DEER_FLY, C.MAYFLY, C.SOLDIER_FLY], deck=[C.MURRAY, C.HORNET, C.MIDGE], draws=0)  # fmt: skip
    assert game.pond == [C.MAYFLY, C.SOLDIER_FLY, C.DEER_FLY]  # slots are sorted by type
    act(game, "swap", swap(C.FIREFLY, 2))  # my Firefly for the pond's Deer Fly
    assert game.pond == [C.MAYFLY, C.SOLDIER_FLY, C.FIREFLY] and game.hands[0][C.DEER_FLY] == 1
    assert not any(a in game.layout["swap"] for a in game.legal_actions())
    act(game, "fly_draw", C.MIDGE)
    assert game.discard[C.MIDGE] == 1 and game.discard[C.MURRAY] == 1  # Murray: discarded, not replaced
    assert hand(game, 0) == sorted([C.HOUSE_FLY, C.CRANE_FLY, C.DEER_FLY, C.HORNET])
    assert game.deck == [C.MIDGE]
    assert not any(a in game.layout["fly_draw"] for a in game.legal_actions())


def test_create_and_add_use_same_value_insects_wasps_included():
    game = new_game()
    game.set_table(hands=[[C.CRANE_FLY, C.SOLDIER_FLY, C.PAPER_WASP, C.PAPER_WASP, C.HORNET], FILLER, FILLER],
                   pond=FILLER, deck=FILLER, draws=0)  # fmt: skip
    assert not legal(game, "create", combo(C.CRANE_FLY, C.CRANE_FLY, C.CRANE_FLY))
    act(game, "create", combo(C.CRANE_FLY, C.SOLDIER_FLY, C.PAPER_WASP))
    assert swarm_cards(game, 0) == [[C.CRANE_FLY, C.SOLDIER_FLY, C.PAPER_WASP]]
    assert not legal(game, "add", C.HORNET)  # value 4 does not join a value-3 swarm
    act(game, "add", C.PAPER_WASP)
    assert swarm_cards(game, 0) == [[C.CRANE_FLY, C.SOLDIER_FLY, C.PAPER_WASP, C.PAPER_WASP]]


# ----- Murray ------------------------------------------------------------------------------------
def test_murray_drawn_at_the_start_of_a_turn_destroys_another_players_swarm_and_resets_the_pond():
    game = new_game()
    game.set_table(hands=[FILLER, FILLER, FILLER], pond=[C.MIDGE, C.MIDGE, C.MIDGE],
                   swarms=[[], [[C.FIREFLY] * 4]],
                   deck=[C.MURRAY, C.HOUSE_FLY, C.MAYFLY, C.HORNET, C.DEER_FLY, C.SOLDIER_FLY])  # fmt: skip
    assert game.decision() == "murray"
    assert game.legal_actions() == [action(game, "murray", swarm_slot(game, 1, 0))]
    act(game, "murray", swarm_slot(game, 1, 0))
    assert game.swarms[1] == [] and game.tadpoles == [0, 1, 0]
    assert game.discard[C.FIREFLY] == 4 and game.discard[C.MURRAY] == 1
    assert game.discard[C.MIDGE] == 3  # the old pond
    assert game.pond == [C.HOUSE_FLY, C.MAYFLY, C.HORNET]
    assert hand(game, 0) == sorted([*FILLER, C.DEER_FLY])  # Murray counted as one of the two draws
    assert game.deck == [C.SOLDIER_FLY]
    assert game.decision() == "turn" and not legal(game, "go_out")


def test_murray_must_hit_your_own_swarm_when_it_is_the_only_one():
    game = new_game()
    game.set_table(hands=[FILLER, FILLER, FILLER], pond=FILLER, swarms=[[[C.MIDGE] * 3]],
                   deck=[C.MURRAY, *FILLER, C.MAYFLY])  # fmt: skip
    assert game.legal_actions() == [action(game, "murray", 0)]
    act(game, "murray", 0)
    assert game.swarms[0] == [] and game.tadpoles == [1, 0, 0]


def test_murray_with_no_swarm_is_discarded_and_another_card_drawn():
    game = new_game()
    game.set_table(hands=[FILLER, FILLER, FILLER], pond=FILLER,
                   deck=[C.MURRAY, C.MIDGE, C.MURRAY, C.HORNET, C.MAYFLY])  # fmt: skip
    assert game.decision() == "turn"
    assert hand(game, 0) == sorted([*FILLER, C.MIDGE, C.HORNET])
    assert game.discard[C.MURRAY] == 2 and game.pond == sorted(FILLER) and game.deck == [C.MAYFLY]
    assert game.tadpoles == [0, 0, 0]


def test_pond_reset_chain_a_murray_in_the_reset_is_resolved_and_the_pond_keeps_forming():
    game = new_game()
    game.set_table(hands=[FILLER, FILLER, FILLER], pond=FILLER,
                   swarms=[[], [[C.MIDGE] * 3], [[C.MAYFLY] * 3]],
                   deck=[C.MURRAY, C.HORNET, C.MURRAY, C.MURRAY, C.DEER_FLY, C.FIREFLY, C.SOLDIER_FLY, C.ROBBER_FLY])  # fmt: skip
    act(game, "murray", swarm_slot(game, 1, 0))  # the start-of-turn Murray: resets the pond
    assert game.pond == [C.HORNET] and game.decision() == "murray"  # a Murray drawn into the new pond
    act(game, "murray", swarm_slot(game, 2, 0))
    # the third Murray finds no swarm: discarded; the pond goes on forming and is not reset again
    assert game.pond == [C.DEER_FLY, C.FIREFLY, C.HORNET]
    assert hand(game, 0) == sorted([*FILLER, C.SOLDIER_FLY])  # then the turn's second draw
    assert game.tadpoles == [0, 1, 1] and game.discard[C.MURRAY] == 3
    assert game.deck == [C.ROBBER_FLY] and game.decision() == "turn"


# ----- abilities ------------------------------------------------------------------------------------
def test_deer_fly_takes_a_random_card_from_a_player_holding_at_least_two():
    game = new_game()
    game.set_table(hands=[[C.DEER_FLY, C.MIDGE], [C.HORNET], [C.FIREFLY, C.FIREFLY]], pond=FILLER,
                   deck=FILLER, draws=0)  # fmt: skip
    act(game, "ability", 0)
    assert game.decision() == "deer_fly" and game.discard[C.DEER_FLY] == 1
    assert game.legal_actions() == [action(game, "player", 1)]  # player_1 holds a single card
    act(game, "player", 1)
    assert hand(game, 0) == [C.MIDGE, C.FIREFLY] and hand(game, 2) == [C.FIREFLY]
    assert game.decision() == "turn"


def test_deer_fly_draws_its_card_from_the_game_generator():
    picked = set()
    for seed in range(12):
        game = MurrayGame(MurrayOptions(), np.random.default_rng(seed))
        game.set_table(hands=[[C.DEER_FLY, C.MIDGE], [C.HAWK, C.FIREFLY], FILLER], pond=FILLER, deck=FILLER,
                       hawk_in=True, draws=0)  # fmt: skip
        act(game, "ability", 0)
        act(game, "player", 0)
        picked.add(hand(game, 1)[0])
        if game.hands[0][C.HAWK]:
            assert game.hawk_seen[0]  # taking the Hawk tells me it left the deck
    assert picked == {C.FIREFLY, C.HAWK}


def test_dragonfly_takes_a_pond_card_and_the_pond_is_refilled():
    game = new_game()
    game.set_table(hands=[[C.DRAGONFLY, C.MIDGE], FILLER, FILLER], pond=[C.MAYFLY, C.HORNET, C.FIREFLY],
                   swarms=[[], [[C.MIDGE] * 3]], deck=[C.MURRAY, C.SOLDIER_FLY, C.HOUSE_FLY], draws=0)  # fmt: skip
    act(game, "ability", 1)
    assert game.decision() == "dragonfly"
    assert game.pond == [C.MAYFLY, C.FIREFLY, C.HORNET]
    act(game, "pond", 1)  # slot 1 holds the Firefly
    assert game.hands[0][C.FIREFLY] == 1
    assert game.decision() == "murray"  # a Murray drawn while refilling the pond is played
    act(game, "murray", swarm_slot(game, 1, 0))
    assert game.pond == [C.MAYFLY, C.SOLDIER_FLY, C.HORNET] and game.deck == [C.HOUSE_FLY]
    assert game.decision() == "turn"


def test_firefly_takes_an_insect_from_any_swarm_and_an_emptied_swarm_is_gone():
    game = new_game()
    game.set_table(hands=[[C.FIREFLY, C.MIDGE], FILLER, FILLER], pond=FILLER,
                   swarms=[[], [[C.HORNET]], [[C.MIDGE] * 3]], deck=FILLER, draws=0)  # fmt: skip
    act(game, "ability", 2)
    assert set(game.legal_actions()) == {
        action(game, "swarm", swarm_slot(game, 1, 0)),
        action(game, "swarm", swarm_slot(game, 2, 0)),
    }
    act(game, "swarm", swarm_slot(game, 1, 0))
    assert game.decision() == "firefly_take" and game.legal_actions() == [action(game, "take", C.HORNET)]
    act(game, "take", C.HORNET)
    assert game.swarms[1] == [] and hand(game, 0) == [C.MIDGE, C.HORNET]


def test_robber_fly_discards_two_flies_from_swarms_but_never_a_wasp():
    game = new_game()
    game.set_table(hands=[[C.ROBBER_FLY, C.MIDGE], FILLER, FILLER], pond=FILLER,
                   swarms=[[], [[C.CRANE_FLY, C.PAPER_WASP, C.PAPER_WASP]], [[C.HOUSE_FLY] * 4]],
                   deck=FILLER, draws=0)  # fmt: skip
    act(game, "ability", 3)
    act(game, "swarm", swarm_slot(game, 1, 0))
    assert game.legal_actions() == [action(game, "take", C.CRANE_FLY)]
    act(game, "take", C.CRANE_FLY)
    assert game.decision() == "robber_swarm"  # the swarm of wasps is no longer a choice
    assert game.legal_actions() == [action(game, "swarm", swarm_slot(game, 2, 0))]
    act(game, "swarm", swarm_slot(game, 2, 0))
    act(game, "take", C.HOUSE_FLY)
    assert swarm_cards(game, 1) == [[C.PAPER_WASP, C.PAPER_WASP]]
    assert swarm_cards(game, 2) == [[C.HOUSE_FLY] * 3]
    assert (
        game.discard[C.CRANE_FLY] == 1 and game.discard[C.HOUSE_FLY] == 1 and game.discard[C.ROBBER_FLY] == 1
    )
    assert game.decision() == "turn"


def test_robber_fly_stops_after_one_when_no_fly_is_left_and_needs_a_fly_to_be_used():
    game = new_game()
    game.set_table(hands=[[C.ROBBER_FLY, C.ROBBER_FLY, C.MIDGE], FILLER, FILLER], pond=FILLER,
                   swarms=[[], [[C.MIDGE, C.PAPER_WASP]]], deck=FILLER, draws=0)  # fmt: skip
    act(game, "ability", 3)
    act(game, "swarm", swarm_slot(game, 1, 0))
    act(game, "take", C.MIDGE)
    assert game.decision() == "turn" and swarm_cards(game, 1) == [[C.PAPER_WASP]]
    assert not legal(game, "ability", 3)  # only a wasp is left in swarms


def test_paper_wasp_resets_the_pond():
    game = new_game()
    game.set_table(hands=[[C.PAPER_WASP, C.MIDGE], FILLER, FILLER], pond=[C.MIDGE, C.MAYFLY, C.HORNET],
                   deck=[C.MURRAY, C.FIREFLY, C.FIREFLY, C.DEER_FLY, C.MIDGE], draws=0)  # fmt: skip
    act(game, "ability", 4)
    assert game.discard[C.MIDGE] == 1 and game.discard[C.MAYFLY] == 1 and game.discard[C.HORNET] == 1
    assert game.discard[C.MURRAY] == 1  # no swarm for this Murray: discarded
    assert game.pond == [C.DEER_FLY, C.FIREFLY, C.FIREFLY] and game.deck == [C.MIDGE]


def test_hornet_look_shows_the_hand_and_is_remembered_after_the_take():
    game = new_game()
    game.set_table(hands=[[C.HORNET, C.MIDGE], [C.FIREFLY, C.MAYFLY, C.HAWK], FILLER], pond=FILLER,
                   deck=FILLER, hawk_in=True, draws=0)  # fmt: skip
    observer = MurrayObserver(game.options)
    act(game, "ability", 5)
    assert game.decision() == "hornet_player"
    act(game, "player", 0)
    assert game.decision() == "hornet_take"
    assert game.legal_actions() == [
        action(game, "take", C.MAYFLY),
        action(game, "take", C.FIREFLY),
    ]  # not the Hawk
    seen = observer.decode(observer.encode(game, 0))["seen_hands"][:13]
    assert np.flatnonzero(seen).tolist() == [C.MAYFLY, C.FIREFLY, C.HAWK]
    copy = game.clone()
    copy.resample_hidden(0, np.random.default_rng(5))
    assert copy.hands[1] == game.hands[1]  # the hand I am looking at is not re-dealt
    act(game, "take", C.FIREFLY)
    assert hand(game, 0) == [C.MIDGE, C.FIREFLY] and hand(game, 1) == [C.MAYFLY, C.HAWK]
    game.hands[1][C.MAYFLY] = 0  # whatever happens to that hand later, my memory stays
    game.hands[1][C.CRANE_FLY] = 1
    view = observer.decode(observer.encode(game, 0))
    assert np.flatnonzero(view["seen_hands"][:13]).tolist() == [C.MAYFLY, C.HAWK]
    assert not view["seen_hands"][13:].any()
    other = observer.decode(observer.encode(game, 2))
    assert not other["seen_hands"].any()  # player_2 saw nothing


# ----- the Hawk and the three instant ends -----------------------------------------------------------
def test_the_reshuffle_brings_the_hawk_in_and_it_can_be_drawn_and_used_to_go_out():
    game = new_game()
    game.set_table(hands=[[C.MIDGE, C.FIREFLY], FILLER, FILLER], pond=FILLER, deck=[C.MAYFLY])
    # the deck ran out on the second draw: the discard pile (just the Hawk) became the deck
    assert game.hawk_in and game.discard == [0] * 14 and game.deck == []
    assert game.hands[0][C.HAWK] == 1 and game.may_go_out and legal(game, "go_out")
    observer = MurrayObserver(game.options)
    assert observer.decode(observer.encode(game, 0))["hawk"][HawkStatus.IN_MY_HAND] == 1
    assert observer.decode(observer.encode(game, 1))["hawk"][HawkStatus.UNSEEN] == 1
    act(game, "go_out")
    assert game.terminal and "went out" in game.end_reason and game.discard[C.HAWK] == 1
    assert game.score_breakdown(0)["penalty"] == 1 + 2 + 5  # cards left in hand still cost


def test_going_out_only_right_after_the_draw():
    game = new_game()
    game.set_table(hands=[[C.HAWK, C.MIDGE], FILLER, FILLER], pond=FILLER, deck=[C.MAYFLY, C.HORNET, *FILLER],
                   hawk_in=True)  # fmt: skip
    assert legal(game, "go_out")
    act(game, "swap", swap(C.MIDGE, 0))
    assert not legal(game, "go_out")  # another action came first
    murray = new_game()
    murray.set_table(hands=[[C.HAWK, C.MIDGE], FILLER, FILLER], pond=FILLER,
                     deck=[C.MURRAY, C.MAYFLY, C.HORNET], hawk_in=True)  # fmt: skip
    assert murray.hand_sizes[0] == 4 and not legal(murray, "go_out")  # a Murray was played this turn


def test_the_hawk_entering_the_pond_ends_the_game():
    game = new_game()
    game.set_table(hands=[[C.PAPER_WASP, C.MIDGE], FILLER, FILLER], pond=FILLER, deck=[C.MAYFLY, C.HAWK, C.MIDGE],
                   hawk_in=True, draws=0)  # fmt: skip
    act(game, "ability", 4)
    assert game.terminal and game.end_reason == "the Hawk entered the pond"
    assert game.pond == [C.MAYFLY]


def test_no_card_left_to_draw_ends_the_game_once_the_hawk_is_in():
    game = new_game()
    game.set_table(hands=[[C.MIDGE], FILLER, FILLER], pond=FILLER, deck=[C.MAYFLY], hawk_in=True)
    assert game.terminal and game.end_reason == "no card left to draw"
    assert hand(game, 0) == [C.MIDGE, C.MAYFLY]


def test_before_the_hawk_is_in_an_empty_deck_reshuffles_instead_of_ending():
    game = new_game()
    game.set_table(hands=[FILLER, FILLER, FILLER], pond=FILLER, deck=[],
                   discard=[C.HAWK, C.MIDGE])  # fmt: skip
    assert not game.terminal and game.hawk_in and game.deck == []
    assert hand(game, 0) == sorted([*FILLER, C.MIDGE, C.HAWK]) and game.hawk_seen == [True, False, False]


# ----- scoring -------------------------------------------------------------------------------------
def test_swarm_and_tadpole_points():
    opts = MurrayOptions()
    midges = [0] * 12
    midges[C.MIDGE] = 4
    assert swarm_points(midges, opts) == 10  # 4+ cards and perfect
    mixed = [0] * 12
    mixed[C.CRANE_FLY] = mixed[C.SOLDIER_FLY] = mixed[C.PAPER_WASP] = 1
    assert swarm_points(mixed, opts) == 0
    mixed[C.CRANE_FLY] = 2
    assert swarm_points(mixed, opts) == 5
    lone = [0] * 12
    lone[C.HORNET] = 1
    assert swarm_points(lone, opts) == 5  # a single card is one insect type: perfect
    assert [tadpole_points(t) for t in range(4)] == [0, 2, 6, 12]


def test_final_scores_with_perfect_swarms_tadpoles_and_hand_penalty():
    game = new_game()
    game.set_table(hands=[[C.FIREFLY, C.HAWK], [C.MIDGE], [C.MAYFLY]], pond=FILLER, deck=[C.MAYFLY],
                   swarms=[[[C.MIDGE] * 4, [C.CRANE_FLY, C.SOLDIER_FLY, C.PAPER_WASP]], [[C.ROBBER_FLY] * 3]],
                   tadpoles=[0, 3, 1], hawk_in=True)  # fmt: skip
    assert game.terminal  # the second draw found no card
    assert game.score_breakdown(0) == {
        "swarm_points": 10, "tadpole_points": 0, "card_points": 4 + 9, "penalty": 5 + 2, "total": 16,
    }  # fmt: skip
    assert game.score_breakdown(1) == {
        "swarm_points": 5, "tadpole_points": 12, "card_points": 15, "penalty": 1, "total": 31,
    }  # fmt: skip
    assert game.scores() == [16, 31, 2 - 2]
    assert game.returns() == [-0.5, 1.0, -0.5]
    assert score_breakdown([], 0, [0] * 13, game.options)["total"] == 0


def test_truncation_after_the_turn_cap_pays_nothing():
    game = new_game(max_turns=2)
    game.set_table(hands=[FILLER, FILLER, FILLER], pond=FILLER, deck=FILLER * 5, draws=0)
    act(game, "pass", C.FRUIT_FLY)
    assert not game.over
    act(game, "pass", C.FRUIT_FLY)
    assert game.truncated and not game.terminal and game.returns() == [0.0, 0.0, 0.0]


# ----- pure helpers, options, hidden information ----------------------------------------------------
def test_nth_card_lays_counts_out_in_type_order():
    counts = [0, 2, 0, 1] + [0] * 9
    assert [nth_card(counts, i) for i in range(3)] == [1, 1, 3]
    with pytest.raises(IndexError):
        nth_card(counts, 3)


def test_swarm_combos_cover_every_same_value_triple():
    assert len(SWARM_COMBOS) == 32 and len(set(SWARM_COMBOS)) == 32
    assert (C.CRANE_FLY, C.SOLDIER_FLY, C.PAPER_WASP) in SWARM_COMBOS
    assert (C.DEER_FLY, C.DRAGONFLY, C.HORNET) in SWARM_COMBOS


def test_bad_options_say_what_is_allowed():
    with pytest.raises(ValueError, match="insect_counts"):
        env(insect_counts=(1, 2))
    with pytest.raises(ValueError, match="needs at least"):
        env(insect_counts=(1,) * 12)
    with pytest.raises(ValueError, match="reward_mode"):
        env(reward_mode="points")


def test_options_that_would_end_the_game_at_reset_are_refused():
    # Four Hornets, hands and pond of one: the first draw found only Murrays, the reshuffle brought
    # the Hawk in and the deck ran out before player_0 could decide (an empty mask at reset).
    with pytest.raises(ValueError, match=r"first draw of 3 \(first_draw_count\).*needs at least 7"):
        env(insect_counts=(0,) * 11 + (4,), hand_size=1, pond_size=1)
    for n in (3, 4):
        for hand_size, pond_size, first in [(1, 1, 1), (1, 2, 3), (2, 1, 2), (3, 1, 1)]:
            needed = n * hand_size + pond_size + first
            for total in (needed - 1, needed, needed + 1):
                for murrays in (0, 3):
                    options = dict(num_players=n, insect_counts=(0,) * 11 + (total,), murrays=murrays,
                                   hand_size=hand_size, pond_size=pond_size, first_draw_count=first)  # fmt: skip
                    if total < needed:
                        with pytest.raises(ValueError, match="needs at least"):
                            env(**options)
                        continue
                    e = env(**options)
                    for seed in range(3):
                        e.reset(seed=seed)
                        assert not e.game.over and e.observe(e.agent_selection)["action_mask"].any()


def test_other_hands_and_the_deck_order_never_reach_an_observation():
    game = new_game()
    game.set_table(
        hands=[[C.MIDGE, C.HORNET], [C.FIREFLY, C.MAYFLY], FILLER], pond=FILLER, deck=FILLER * 3, draws=0
    )
    twin = game.clone()
    twin.hands[1] = [0] * 13
    twin.hands[1][C.CRANE_FLY] = 2
    twin.deck.reverse()
    observer = MurrayObserver(game.options)
    for p in (0, 2):
        assert np.array_equal(observer.encode(game, p), observer.encode(twin, p))
    assert not np.array_equal(observer.encode(game, 1), observer.encode(twin, 1))


def test_resample_keeps_the_hawk_out_of_the_deck_once_i_know_it_left():
    game = new_game()
    game.set_table(hands=[[C.HAWK, C.MIDGE, C.MAYFLY], FILLER, FILLER], pond=FILLER, deck=FILLER * 4,
                   hawk_in=True, draws=0)  # fmt: skip
    act(game, "pass", C.HAWK)
    for seed in range(20):
        copy = game.clone()
        copy.resample_hidden(0, np.random.default_rng(seed))
        assert C.HAWK not in copy.deck and sum(h[C.HAWK] for h in copy.hands[1:]) == 1
        assert copy.hand_sizes == game.hand_sizes and copy.hands[0] == game.hands[0]


# ----- the baseline ---------------------------------------------------------------------------------
def test_baseline_beats_uniform_random_play_clearly():
    n, games = 3, 210
    e = env(num_players=n)
    baseline = BaselineAgent(e.options)
    wins = 0
    for g in range(games):
        seat = f"player_{g % n}"
        rnd = RandomAgent(seed=g)
        e.reset(seed=1000 + g)
        for _ in play(
            e,
            lambda a, o, seat=seat, rnd=rnd: (baseline if a == seat else rnd).act(
                o["observation"], o["action_mask"]
            ),
        ):
            pass
        wins += e.game.returns()[g % n] > 0
    # a random seat wins about a third of the games; the baseline won 92% of these when measured
    assert wins / games > 0.75, wins / games


@pytest.mark.parametrize("n", [3, 6])
def test_random_games_never_lose_or_invent_a_card(n):
    e = env(num_players=n)
    opts = e.options
    expected = [*opts.counts, 1, opts.murray_count]
    rng = np.random.default_rng(n)
    for seed in range(15):
        e.reset(seed=seed)
        for _ in play(e, lambda a, o: int(rng.choice(np.flatnonzero(o["action_mask"])))):
            g = e.game
            seen = np.zeros(14, dtype=int)
            seen += np.bincount(g.deck, minlength=14)
            seen += np.bincount(g.pond, minlength=14) if g.pond else 0
            seen += np.array(g.discard)
            for p in range(n):
                seen[:13] += g.hands[p]
                for swarm in g.swarms[p]:
                    seen[:12] += swarm
            seen[13] += g.decision_kind == Decision.MURRAY  # the Murray waiting for its target
            assert seen.tolist() == expected
            assert g.hand_sizes == [sum(h) for h in g.hands] and min(g.hand_sizes) >= 1
            assert all(len(s) <= opts.max_swarms and all(sum(sw) for sw in s) for s in g.swarms)
