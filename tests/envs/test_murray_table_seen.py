"""Murray's `table_seen`: what the table saw go into a hand, never more copies of a type than exist.

A card seen going into a hand, passed on face down and taken back in view is one card: with the
only copy of its type already counted in that hand, the table knows it is that copy (the bug: it
was counted twice, and the observation reached 2.0 against its declared high of 1.0).
"""

from __future__ import annotations

import numpy as np
from fowlplay.envs.murray import Card, MurrayGame, MurrayOptions
from fowlplay.envs.murray.observation import MurrayObserver

C = Card
#: One Firefly in the game (and plenty of Fruit Flies, so that the options deal a legal table).
COUNTS = tuple(
    {C.FRUIT_FLY: 20, C.MIDGE: 2, C.HOUSE_FLY: 2, C.CRANE_FLY: 2, C.FIREFLY: 1, C.HORNET: 2}.get(c, 0)
    for c in list(C)[:12]
)


def act(game: MurrayGame, block: str, index: int = 0) -> None:
    """Apply one named action, checking it is legal first."""
    action = game.layout[block].start + index
    legal = [game.action_name(a) for a in game.legal_actions()]
    assert game.legal_mask()[action], f"{game.action_name(action)} is not legal here; legal: {legal}"
    game.apply(action)


def table_seen(observer: MurrayObserver, game: MurrayGame, viewer: int) -> np.ndarray:
    return observer.decode(observer.encode(game, viewer))["table_seen"].reshape(game.num_players, 13)


def test_a_card_passed_face_down_and_taken_back_is_counted_once():
    game = MurrayGame(MurrayOptions(num_players=3, insect_counts=COUNTS), np.random.default_rng(0))
    observer = MurrayObserver(game.options)
    game.set_table(
        hands=[[C.MIDGE, C.HORNET, C.HOUSE_FLY], [C.CRANE_FLY, C.FRUIT_FLY], [C.CRANE_FLY, C.FRUIT_FLY]],
        pond=[C.FIREFLY, C.FRUIT_FLY, C.FRUIT_FLY],
        deck=[C.FRUIT_FLY] * 6,
        draws=0,
    )
    firefly_slot = game.pond.index(C.FIREFLY)
    act(game, "swap", C.MIDGE * 3 + firefly_slot)  # player 0 takes the Firefly from the pond, in view
    assert game.shown[0][C.FIREFLY] == 1
    act(game, "pass", C.FIREFLY)  # ... and passes it on face down: the table does not know which card
    assert game.hands[1][C.FIREFLY] == 1 and game.shown[0][C.FIREFLY] == 1
    act(game, "pass", C.FRUIT_FLY)  # player 1 passes a Fruit Fly
    act(game, "pass", C.FRUIT_FLY)  # player 2 too; player 0's turn again
    assert game.current_player == 0
    act(game, "ability", 5)  # the Hornet: look at a hand and take a card from it, in view
    act(game, "player", 0)  # player 1, the next seat
    act(game, "take", C.FIREFLY)
    assert game.hands[0][C.FIREFLY] == 1
    # The table saw the Firefly go into player 0's hand twice, but there is only one.
    assert game.shown[0][C.FIREFLY] == 1
    for viewer in range(3):
        seen = table_seen(observer, game, viewer)
        assert seen.max() <= 1.0
        assert seen[(0 - viewer) % 3][C.FIREFLY] == 1.0  # relative seat of player 0


def test_random_games_with_one_copy_of_most_types_stay_in_the_declared_bounds():
    # The options the bug was found with: decks so small that a card often comes back.
    options = dict(
        insect_counts=(5, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1), murrays=1, hand_size=1, pond_size=1,
        draw_count=1, first_draw_count=1,
    )  # fmt: skip
    from fowlplay import envs

    rng = np.random.default_rng(0)
    env = envs.make("murray_frog_v0", num_players=3, **options)
    space = env.observation_space("player_0")["observation"]
    highest = 0.0
    for seed in range(150):  # seed 72 crossed 1.0 before the fix
        env.reset(seed=seed)
        for agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            highest = max(highest, float(obs["observation"].max()))
            assert space.contains(obs["observation"]), f"seed {seed}: {agent}'s observation left its space"
            env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert highest == 1.0
