"""Murray's batched twin (`fowlplay.envs.make_jax("murray_frog_v0")`) is the reference game, step for step.

The alignment suite steps the reference engine and the twin side by side from the same deals with
the same actions and compares, before every decision and at the end, every seat's observation (bit
for bit), the acting seat, the legal mask, the rewards and the done flags (`envs.core.twin_alignment`).
Murray's fresh chance is a Deer Fly's random card and the one reshuffle (the twin keeps the
reference's deck order otherwise): there the public facts of both outcomes are compared
(`Twin.public`) and the twin carries on from the reference's outcome. For every player count: the
golden playthrough's game, every seeded baseline game of baseline_golden.json and hundreds of seeded
masked-random games; then rule options, the twin's own chance against the reference's distribution
(chi-square), broken twins that must fail, and Pgx's API.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from fowlplay import envs  # noqa: E402
from fowlplay.envs.core.twin import TwinEnv  # noqa: E402
from fowlplay.envs.core.twin_alignment import Aligner, AlignmentCount, MisalignedError  # noqa: E402
from fowlplay.envs.murray.cards import VALUE, Card  # noqa: E402
from fowlplay.envs.murray.rules import Decision, MurrayGame, MurrayOptions  # noqa: E402
from fowlplay.envs.murray.twin import Twin  # noqa: E402

from tests.envs.twin_suite import baseline_golden_games, keys, playthrough_actions, same_law  # noqa: E402

stats = pytest.importorskip("scipy.stats")

NAME = "murray_frog_v0"
HERE = Path(__file__).resolve().parent
PLAYERS = (3, 4, 5, 6)
#: Games per aligned batch: every call pads to it, so each twin compiles once.
BATCH = 64
#: Seeded masked-random games per player count (seeds 1..N; seed 0 is the golden playthrough's).
RANDOM_GAMES = {3: 512, 4: 512, 5: 448, 6: 448}
#: A p-value below this fails a chi-square test (fixed seeds: the tests are deterministic).
ALPHA = 1e-3
C = Card


@functools.cache
def aligner_for(num_players: int, **options) -> Aligner:
    """The aligner of one option set, made once for the whole module (its jitted step with it)."""
    return Aligner(NAME, num_players=num_players, pad_to=BATCH, **options)


@pytest.fixture(scope="module", params=PLAYERS, ids=[f"{n}p" for n in PLAYERS])
def aligner(request) -> Aligner:
    return aligner_for(request.param)


# ----- the alignment suite ------------------------------------------------------------------------
def test_the_golden_playthrough_aligns(aligner):
    n = aligner.twin.num_players
    actions, decisions = playthrough_actions(NAME, n)
    assert len(actions) == decisions
    count = aligner.game(0, actions=actions)
    print(f"\n{NAME} {n}p golden playthrough: {count}")
    assert count.steps == decisions  # every recorded action was stepped and compared


def test_the_baseline_golden_games_align(aligner):
    """The seeded games of tests/envs/test_baseline_golden.py, baselines in every seat: their
    decisions hash to the golden file's, so these are exactly those games."""
    count, played, golden = baseline_golden_games(aligner, NAME)
    print(f"\n{NAME} {aligner.twin.num_players}p baseline games: {count}")
    assert played == golden


def test_hundreds_of_random_games_align(aligner):
    n = aligner.twin.num_players
    total, games = AlignmentCount(), RANDOM_GAMES[n]
    for start in range(1, games + 1, BATCH):
        total.add(aligner.games(range(start, min(start + BATCH, games + 1))))
    print(f"\n{NAME} {n}p: {total}")
    assert total.games == games
    assert total.chance_steps > games // 2  # Deer Flies and reshuffles were compared


#: Option sets that between them move every option off its default: a small deck (early
#: reshuffles, the Hawk out, a card seen twice going into a hand), many Murrays and score rewards;
#: other action and observation shapes, no Murray at all and the turn cap.
OPTION_SETS = {
    "small-deck-score": {
        "num_players": 4,
        "insect_counts": (3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2),
        "murrays": 5,
        "hand_size": 5,
        "reward_mode": "score",
    },
    "shapes-no-murray-cap": {
        "num_players": 5,
        "pond_size": 2,
        "max_swarms": 2,
        "hand_limit": 7,
        "draw_count": 3,
        "first_draw_count": 2,
        "hand_size": 5,
        "big_swarm": 3,
        "big_swarm_points": 4,
        "perfect_swarm_points": 2,
        "murrays": 0,
        "max_turns": 25,
    },
}


@pytest.mark.parametrize("name", OPTION_SETS)
def test_rule_options_align(name):
    options = OPTION_SETS[name]
    count = aligner_for(**options).games(range(BATCH))
    print(f"\n{NAME} {options}: {count}")
    assert count.games == BATCH and count.chance_steps > 0


# ----- the twin's own chance against the reference's distribution --------------------------------
GAMES = 4096


def _deal_features(hands: np.ndarray, pond: np.ndarray, discard: np.ndarray) -> list[tuple]:
    """Per deal: player_0's value-1 cards, player_1's royal flies, the pond's first card, the
    Murrays player_0's first draw discarded."""
    value_1 = [t for t in range(12) if VALUE[t] == 1]
    royal = [int(c) for c in (C.DEER_FLY, C.DRAGONFLY, C.FIREFLY, C.ROBBER_FLY)]
    first = np.argmax(pond > 0, axis=1)
    return [
        (int(h[0, value_1].sum()), int(h[1, royal].sum()), int(f), int(d[C.MURRAY]))
        for h, f, d in zip(hands, first, discard)
    ]


def test_the_deal_has_the_reference_law():
    """The twin's own deals (`init`) against the reference's shuffles, feature by feature."""
    env = aligner_for(3).twin
    init = jax.jit(jax.vmap(env.init))
    games = [init(keys(seed, BATCH))._game for seed in range(GAMES // BATCH)]
    hands, pond, discard = (
        np.concatenate([np.asarray(getattr(g, f)) for g in games]) for f in ("hands", "pond", "discard")
    )
    twin = _deal_features(hands, pond, discard)
    options = MurrayOptions(num_players=3)
    reference = []
    for seed in range(GAMES):
        game = MurrayGame(options, np.random.default_rng(seed))
        pond_counts = np.bincount(game.pond, minlength=12)
        reference += _deal_features(np.array([game.hands]), pond_counts[None], np.array([game.discard]))
    assert sum(1 for f in twin if f[3]) > 100  # the first draw met Murrays
    for k in range(4):
        assert same_law([f[k] for f in reference], [f[k] for f in twin]) > ALPHA, k


def _stacked(game: MurrayGame, step, action: int, seed: int) -> list:
    """GAMES outcomes of the twin stepping `action` from the reference state `game` (its own keys)."""
    env = aligner_for(3).twin
    state = env.from_reference(game)
    batch = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(jnp.asarray(x), (BATCH, *np.shape(x))), state)
    actions = jnp.full(BATCH, action, jnp.int32)
    outcomes = [step(batch, actions, keys(seed + k, BATCH)) for k in range(GAMES // BATCH)]
    return jax.tree_util.tree_map(lambda *x: np.concatenate(x), *outcomes)


def _table(**stacked) -> MurrayGame:
    game = MurrayGame(MurrayOptions(num_players=3), np.random.default_rng(0))
    game.set_table(**stacked)
    return game


DEER_FLY_TABLE = {
    "hands": [
        [C.DEER_FLY, C.FRUIT_FLY, C.HOUSE_FLY, C.CRANE_FLY],
        [C.MIDGE, C.MIDGE, C.MIDGE, C.MAYFLY, C.MAYFLY, C.HORNET, C.HAWK],
        [C.FRUIT_FLY, C.HOUSE_FLY],
    ],
    "pond": [C.FRUIT_FLY, C.MAYFLY, C.SOLDIER_FLY],
    "deck": [C.FRUIT_FLY] * 10,
    "discard": [],
    "hawk_in": True,
    "draws": 0,
}


def test_a_deer_fly_takes_a_card_with_the_reference_law():
    """player_0's Deer Fly takes a random card of player_1's hand (the Hawk among them): the
    twin's own draws against the reference's, from the same table."""
    aligner = aligner_for(3)
    game = _table(**DEER_FLY_TABLE)
    game.apply(game.layout["ability"].start + 0)  # discard the Deer Fly to use it
    assert game.decision_kind == Decision.DEER_FLY
    target = game.layout["player"].start  # relative seat 1: player_1
    outcomes = _stacked(game, aligner._step, target, seed=11)
    assert outcomes._chance.all()
    twin_taken = np.argmax(outcomes._game.hands[:, 0] - np.asarray(game.hands[0]), axis=1).tolist()
    reference = []
    for seed in range(GAMES):
        other = game.clone()
        other.rng = np.random.default_rng(seed)
        other.apply(target)
        reference.append(int(np.argmax(np.asarray(other.hands[0]) - np.asarray(game.hands[0]))))
    assert set(twin_taken) == {C.MIDGE, C.MAYFLY, C.HORNET, C.HAWK}
    assert same_law(reference, twin_taken) > ALPHA
    law = np.array([3, 2, 1, 1]) / 7  # the victim's cards, one draw among seven
    counts = [twin_taken.count(c) for c in (C.MIDGE, C.MAYFLY, C.HORNET, C.HAWK)]
    assert stats.chisquare(counts, law * GAMES).pvalue > ALPHA


RESHUFFLE_TABLE = {
    "hands": [[C.FRUIT_FLY, C.MIDGE], [C.HOUSE_FLY, C.CRANE_FLY], [C.MAYFLY, C.SOLDIER_FLY]],
    "pond": [C.FRUIT_FLY, C.MAYFLY, C.SOLDIER_FLY],
    "deck": [],
    "discard": [C.FRUIT_FLY] * 4 + [C.HORNET] * 2 + [C.MURRAY] * 2 + [C.HAWK],
    "draws": 0,
}


def test_the_reshuffle_has_the_reference_law():
    """The deck is empty and the Hawk still the discard pile: player_0 passes, player_1's two draws
    reshuffle the pile (Murrays found no swarm: discarded, another card drawn). The cards drawn
    and the Murrays discarded, the twin's own against the reference's."""
    aligner = aligner_for(3)
    game = _table(**RESHUFFLE_TABLE)
    action = game.layout["pass"].start + C.FRUIT_FLY
    outcomes = _stacked(game, aligner._step, action, seed=23)
    assert outcomes._chance.all() and outcomes._game.reshuffled.all() and outcomes._game.hawk_in.all()
    hands, discard = outcomes._game.hands[:, 1], outcomes._game.discard

    def feature(hand, pile) -> tuple:
        drawn = np.asarray(hand) - np.bincount([C.HOUSE_FLY, C.CRANE_FLY, C.FRUIT_FLY], minlength=13)
        return (*np.repeat(np.arange(13), drawn).tolist(), int(pile[C.MURRAY]))

    twin = [feature(h, d) for h, d in zip(hands, discard)]
    reference = []
    for seed in range(GAMES):
        other = game.clone()
        other.rng = np.random.default_rng(seed)
        other.apply(action)
        reference.append(feature(other.hands[1], other.discard))
    assert len(set(twin)) >= 8  # pairs of Fruit Flies, Hornets and the Hawk, 0-2 Murrays discarded
    assert same_law(reference, twin) > ALPHA


# ----- broken twins must fail the suite -----------------------------------------------------------
class HandLimitOffByOne(Twin):
    """One rule off by one: a player discards down to one card above the hand limit."""

    def __init__(self, options, observer, layout) -> None:
        super().__init__(options, observer, layout)
        self.hand_limit += 1


class TableSeenOfTheWrongSeat(Twin):
    """One observation piece from the wrong seat: `table_seen` as the left neighbour sees it."""

    def observe(self, game, player):
        mine = super().observe(game, player)
        theirs = super().observe(game, (player + 1) % self.num_players)
        span = self.piece("table_seen")
        return mine.at[span].set(theirs[span])


@pytest.mark.parametrize("broken", [HandLimitOffByOne, TableSeenOfTheWrongSeat])
def test_a_broken_twin_fails_the_suite(broken):
    reference = envs.make(NAME).unwrapped
    rules = broken(reference.options, reference.observer, reference.game_cls.action_layout(reference.options))
    with pytest.raises(MisalignedError):
        Aligner(NAME, TwinEnv(rules, NAME), pad_to=BATCH).games(range(BATCH))


# ----- Pgx's API ------------------------------------------------------------------------------------
def _rows_where(rows: np.ndarray, chosen: np.ndarray, other: np.ndarray) -> np.ndarray:
    """`chosen` in the batch rows `rows`, else `other`."""
    return np.where(rows.reshape((-1,) + (1,) * (other.ndim - 1)), chosen, other)


def test_jit_and_vmap_play_whole_games_that_keep_every_card():
    """The twin's own play (its own deals and draws, never the reference's decks): random legal
    actions over a batch, games dealt again as they end; every card is somewhere, every live game
    has a legal action, the observation stays in the reference's bounds, rewards sum to zero."""
    aligner = aligner_for(3)
    env = aligner.twin
    init = jax.jit(jax.vmap(env.init))
    reference = envs.make(NAME).unwrapped.observer
    state = init(keys(5, BATCH))
    assert state.observation.shape == (BATCH, env.rules.observation_size)
    assert state.observation.dtype == jnp.float32 and state.legal_action_mask.dtype == jnp.bool_
    assert state.rewards.shape == (BATCH, 3) and state.current_player.dtype == jnp.int32
    rng, ended = np.random.default_rng(6), 0
    total = env.rules.total_cards
    for t in range(400):
        mask = np.asarray(state.legal_action_mask)
        action = np.array([rng.choice(np.flatnonzero(row)) for row in mask], np.int32)
        state = jax.device_get(aligner._step(state, jnp.asarray(action), keys(100 + t, BATCH)))
        g = state._game
        held = [
            g.hands.sum((1, 2)),
            g.deck_counts.sum(1),
            g.pond.sum(1),
            g.discard.sum(1),
            g.swarms.sum((1, 2, 3)),
        ]
        pending = g.decision == int(Decision.MURRAY)  # a Murray waiting for its target is in no pile
        assert (sum(x.astype(int) for x in held) + pending == total).all()
        assert (state.observation >= reference.low).all() and (state.observation <= reference.high).all()
        done = state.terminated | state.truncated
        assert np.allclose(state.rewards[done].sum(axis=1), 0.0, atol=1e-6)
        ended += int(done.sum())
        if done.any():  # deal those games again (auto-reset)
            fresh = init(keys(1000 + t, BATCH))
            state = jax.tree_util.tree_map(functools.partial(_rows_where, done), fresh, state)
    assert ended > BATCH  # games ended and were dealt again


def test_an_illegal_action_loses_and_a_done_game_stays_done():
    aligner = aligner_for(3)
    env = aligner.twin
    state = jax.jit(jax.vmap(env.init))(keys(7, BATCH))
    mask = np.asarray(state.legal_action_mask)
    illegal = np.array([np.flatnonzero(~row)[0] for row in mask], np.int32)
    illegal[1] = env.num_actions  # out of range
    illegal[2] = -1
    after = jax.device_get(aligner._step(state, jnp.asarray(illegal), keys(8, BATCH)))
    assert after.terminated.all() and not after.truncated.any() and after.legal_action_mask.all()
    assert (after.rewards == np.array([-1.0, 0.5, 0.5], np.float32)).all()  # player_0 acted
    again = jax.device_get(aligner._step(after, jnp.zeros(BATCH, jnp.int32), keys(9, BATCH)))
    assert (again.rewards == 0).all() and again.terminated.all()
    assert (again.observation == after.observation).all()


@pytest.mark.parametrize(
    "options",
    [
        {"num_players": 2},
        {"num_players": 7},
        {"insect_counts": (1,) * 12},
        {"insect_counts": (9,) * 11},
        {"pond_size": 0},
        {"max_swarms": -1},
        {"reward_mode": "points"},
        {"colour": 1},
    ],
)
def test_make_jax_refuses_bad_options_as_make_does(options):
    with pytest.raises(ValueError) as made:
        envs.make(NAME, **options)
    with pytest.raises(ValueError) as twin:
        envs.make_jax(NAME, **options)
    assert str(twin.value) == str(made.value)


def test_the_env_has_pgx_identifiers():
    env = envs.make_jax(NAME, num_players=4)
    reference = envs.make(NAME, num_players=4)
    assert (env.id, env.version, env.num_players) == (NAME, "v0", 4)
    assert env.num_actions == reference.action_space("player_0").n
    assert env.observation_shape == reference.observation_space("player_0")["observation"].shape
