"""What each seat is told at every step (evaluation/narration.py): public events said in full, a
seat's own draws with their cards, and nothing another seat holds face down."""

from __future__ import annotations

import re

import numpy as np
import pytest
from fowlplay import envs
from fowlplay.envs.core.testing import random_legal
from fowlplay.evaluation import narration
from fowlplay.evaluation.narration import Narrator, narrated_step, private_cards


def chicken(seed: int = 2, players: int = 2):
    env = envs.make("chicken_v1", num_players=players)
    env.reset(seed=seed)
    return env


def test_a_chicken_bid_is_told_to_everyone_and_a_draw_names_its_numbers_to_the_drawer_only():
    env = chicken()
    narrator = Narrator(env.unwrapped.game)
    told = narrated_step(env, narrator, 3)  # player_0 bids 3
    assert told[0] == ["you (player_0): bid 3", "player_0 bids 3"]
    assert told[1] == told[None] == ["player_0 bids 3"]
    told = narrated_step(env, narrator, 0)  # player_1 passes: player_0 draws the 3 cards
    numbers = env.unwrapped.game.numbers[0]
    assert told[None] == ["player_1 passes", "player_0 draws 3: 3 numbers, 0 feet"]
    assert told[1] == ["you (player_1): pass", *told[None]]
    assert told[0] == [
        "player_1 passes",
        f"player_0 draws 3: 3 numbers, 0 feet (you drew {', '.join(map(str, numbers))})",
    ]
    assert narrator.history[0][-1] == told[0][-1]


def test_a_draw_that_ends_the_round_still_tells_the_drawer_its_numbers():
    """The round's end reshuffles the cards drawn at once, unseen by anyone else: the drawer is told
    them, and they add up to what the tally took from (or gave) that seat."""
    from fowlplay.envs.chicken.rules import round_points

    for seed in range(40):
        env = chicken(seed)
        narrator = Narrator(env.unwrapped.game)
        rng = np.random.default_rng(seed)
        while not env.unwrapped.game.over:
            game = env.unwrapped.game
            held = {p: (list(game.numbers[p]), game.feet[p]) for p in range(2)}
            told = narrated_step(env, narrator, random_legal(game.legal_mask(), rng))
            for seat in (0, 1):
                drew = [line for line in told[seat] if "(you drew" in line]
                if not drew or not any(" ends: tally" in line for line in told[seat]):
                    continue
                match = re.search(r"draws \d+: \d+ numbers?, (\d+) f(?:oo|ee)t \(you drew (.*)\)", drew[0])
                values = [] if match[2] == "no number" else [int(v) for v in match[2].split(", ")]
                numbers, feet = held[seat]
                tally = env.unwrapped.game.last_tally[seat]
                assert tally == round_points(numbers + values, feet + int(match[1]), game.options.foot_bonus)
                assert not any("(you drew" in line for line in told[1 - seat])
                return
    pytest.fail("no round ended on a draw in 40 games")


@pytest.mark.parametrize("name", envs.ENV_NAMES)
def test_a_seat_is_told_nothing_that_a_redeal_of_what_it_cannot_see_would_change(name):
    """At a step that another seat takes, re-deal everything seat v cannot see and take the same step:
    wherever the public log and v's own view come out the same, v must be told the same lines
    (what another seat drew face down, say, must not reach v)."""
    n = envs.player_counts(name)[0]
    env = envs.make(name, num_players=n)
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    compared = 0
    for step in range(120):
        game = env.unwrapped.game
        if game.over:
            break
        action = random_legal(game.legal_mask(), rng)
        viewer = (game.current_player + 1) % n
        twin = env.clone()
        twin.resample_hidden(f"player_{viewer}", seed=step)
        if not twin.unwrapped.game.legal_mask()[action]:  # the re-deal gave the actor other cards
            env.step(action)
            continue
        real = env.clone()
        told_real = narrated_step(real, Narrator(real.unwrapped.game), action)
        told_twin = narrated_step(twin, Narrator(twin.unwrapped.game), action)
        same_world = told_real[None] == told_twin[None] and private_cards(
            real.unwrapped.game, viewer
        ) == private_cards(twin.unwrapped.game, viewer)
        if same_world:
            assert told_real[viewer] == told_twin[viewer], (step, told_real[viewer], told_twin[viewer])
            compared += 1
        env.step(action)
    assert compared >= 10


def test_a_narrator_that_tells_every_seat_every_hand_fails_that_check(monkeypatch):
    """A broken twin: each seat's private view is the umpire's (every hand face up)."""
    picture = narration.picture_module(chicken().unwrapped.game)

    def umpire_view(game, seat):
        if not hasattr(game, "numbers"):
            return []
        return [narration.Counter(hidden.shown) for hidden in picture.hidden_cards(game, seat, reveal=True)]

    monkeypatch.setattr(narration, "tells_own_events", lambda game: False)
    monkeypatch.setattr(narration, "private_cards", umpire_view)
    env = chicken(3)
    rng = np.random.default_rng(3)
    differences = 0
    for step in range(60):
        game = env.unwrapped.game
        if game.over:
            break
        action = random_legal(game.legal_mask(), rng)
        viewer = (game.current_player + 1) % 2
        twin, real = env.clone(), env.clone()
        twin.resample_hidden(f"player_{viewer}", seed=step)
        told_real = narrated_step(real, Narrator(real.unwrapped.game), action)
        told_twin = narrated_step(twin, Narrator(twin.unwrapped.game), action)
        if told_real[None] == told_twin[None]:
            differences += told_real[viewer] != told_twin[viewer]
        env.step(action)
    assert differences > 0


def test_cards_that_come_into_a_hand_face_down_are_told_to_that_seat_by_name():
    env = envs.make("murder_most_fowl_v0", num_players=2)
    env.reset(seed=3)
    narrator = Narrator(env.unwrapped.game)
    game = env.unwrapped.game
    assert narrator.history[0][0].startswith("you are dealt: ")
    draw = next(
        a for a in np.flatnonzero(game.legal_mask()) if env.action_name(int(a)) == "draw from the deck"
    )
    told = narrated_step(env, narrator, int(draw))
    got = [line for line in told[0] if line.startswith("you get: ")]
    assert len(got) == 1 and got[0].removeprefix("you get: ") in [game.card_name(c) for c in game.hands[0]]
    assert not any(line.startswith("you get") for line in told[1] + told[None])
