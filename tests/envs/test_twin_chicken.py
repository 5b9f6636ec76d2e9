"""Chicken's batched twin (`fowlplay.envs.make_jax("chicken_v1")`) is the reference game, step for step.

The alignment suite steps the reference engine and the twin side by side from the same deals with
the same actions and compares, before every decision and at the end, every seat's observation (bit
for bit), the acting seat, the legal mask, the rewards and the done flags (`envs.core.twin_alignment`).
A tally is Chicken's only fresh chance (the deck is reshuffled): there the public facts of both
outcomes are compared and the twin carries on from the reference's deck. For every player count:
the golden playthrough's game, every seeded baseline game of baseline_golden.json and a few
thousand seeded masked-random games; then rule options, the twin's own shuffles against the
reference's distribution (chi-square), broken twins that must fail, and Pgx's API.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from fowlplay import envs  # noqa: E402
from fowlplay.envs.chicken.rules import FOOT, full_deck  # noqa: E402
from fowlplay.envs.chicken.twin import Twin  # noqa: E402
from fowlplay.envs.core.cards import shuffled  # noqa: E402
from fowlplay.envs.core.twin import TwinEnv, auto_reset  # noqa: E402
from fowlplay.envs.core.twin_alignment import Aligner, AlignmentCount, MisalignedError  # noqa: E402

from tests.envs.twin_suite import baseline_golden_games, keys, playthrough_actions  # noqa: E402

stats = pytest.importorskip("scipy.stats")

NAME = "chicken_v1"
HERE = Path(__file__).resolve().parent
PLAYERS = (2, 3, 4)
#: Games per aligned batch: every call pads to it, so each player count compiles once.
BATCH = 256
#: Seeded masked-random games per player count (seeds 1..N; seed 0 is the golden playthrough's).
RANDOM_GAMES = 768
#: Decisions those games compare, per player count (docs/batched.md quotes them; a rules change
#: that changes them changes the golden playthroughs too).
RANDOM_STEPS = {2: 307_818, 3: 333_928, 4: 326_099}
#: A p-value below this fails a chi-square test (fixed seeds: the test is deterministic).
ALPHA = 1e-3


@pytest.fixture(scope="module", params=PLAYERS, ids=[f"{n}p" for n in PLAYERS])
def aligner(request) -> Aligner:
    return Aligner(NAME, num_players=request.param, pad_to=BATCH)


# ----- the alignment suite ------------------------------------------------------------------------
def test_the_golden_playthrough_aligns(aligner):
    n = aligner.twin.num_players
    actions, decisions = playthrough_actions(NAME, n)
    assert len(actions) == decisions
    count = aligner.game(0, actions=actions)
    print(f"\n{NAME} {n}p golden playthrough: {count}")
    assert count.steps == decisions  # every recorded action was stepped and compared
    assert count.chance_steps > 0


def test_the_baseline_golden_games_align(aligner):
    """The seeded games of tests/envs/test_baseline_golden.py, baselines in every seat: their
    decisions hash to the golden file's, so these are exactly those games."""
    count, played, golden = baseline_golden_games(aligner, NAME)
    print(f"\n{NAME} {aligner.twin.num_players}p baseline games: {count}")
    assert played == golden


def test_thousands_of_random_games_align(aligner):
    n = aligner.twin.num_players
    total = AlignmentCount()
    for start in range(1, RANDOM_GAMES + 1, BATCH):
        total.add(aligner.games(range(start, min(start + BATCH, RANDOM_GAMES + 1))))
    print(f"\n{NAME} {n}p: {total}")
    assert total.games == RANDOM_GAMES
    assert total.steps == RANDOM_STEPS[n]
    assert total.chance_steps > RANDOM_GAMES  # several tallies a game


#: Option sets that between them move every option off its default (and both loop shapes).
OPTION_SETS = [
    {
        "num_players": 3,
        "bid_cap": 30,
        "target": 30,
        "foot_bonus": 0,
        "max_rounds": 3,
        "cap_ending": "draw",
        "reward_mode": "score",
    },
    {
        "num_players": 4,
        "max_value": 12,
        "copies_per_value": 2,
        "feet": 0,
        "bid_cap": 7,
        "target": 1000,
        "max_rounds": 2,
        "reward_mode": "win",
    },
]


@pytest.mark.parametrize("options", OPTION_SETS, ids=["draw-cap-score", "no-feet-standings-cap"])
def test_rule_options_align(options):
    count = Aligner(NAME, pad_to=64, **options).games(range(64))
    print(f"\n{NAME} {options}: {count}")
    assert count.steps > 64 and count.chance_steps >= 64  # every game reached its cap or a winner


def test_the_deprecated_v0_twin_ends_a_capped_game_as_a_draw():
    with pytest.warns(DeprecationWarning):
        twin = envs.make_jax("chicken_v0", max_rounds=1)
    assert (twin.id, twin.version, twin.rules.opts.cap_ending) == ("chicken_v0", "v0", "draw")


# ----- the twin's own chance against the reference's distribution --------------------------------
@pytest.fixture(scope="module")
def two_player():
    """The 2-player twin and its step over a batch of games (compiled once here)."""
    env = envs.make_jax(NAME)
    return env, jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step))


def _scripted(env, states, step, keys, bid: int):
    """One step of every game: bid `bid` (or the cards left) with no bid yet, otherwise pass."""
    block = env.rules.bid_block
    left = states._game.deck_counts.sum(axis=1)
    bidding = (states._game.bid == 0) & (bid > 0)
    action = jnp.where(bidding, block.start + jnp.minimum(bid, left) - 1, env.rules.pass_action)
    return step(states, action.astype(jnp.int32), keys)


def _chisquare(observed: np.ndarray, probabilities: np.ndarray) -> float:
    """The p-value of observed counts against probabilities, pooling cells expected below 5."""
    expected = probabilities * observed.sum()
    order = np.argsort(expected)
    pooled_o, pooled_e, o, e = [], [], 0.0, 0.0
    for i in order:
        o, e = o + observed[i], e + expected[i]
        if e >= 5:
            pooled_o.append(o)
            pooled_e.append(e)
            o, e = 0.0, 0.0
    if e:
        pooled_o[-1] += o
        pooled_e[-1] += e
    return stats.chisquare(pooled_o, pooled_e).pvalue


GAMES = 4096


def test_the_deal_is_a_uniform_shuffle(two_player):
    """The twin's deals (`init`) against the reference's uniform shuffle: the first card, the feet,
    fives and points among the first 15 cards."""
    env, init, _ = two_player
    rules, opts = env.rules, env.rules.opts
    deck = opts.deck_size
    games = init(keys(1, GAMES))._game
    first = np.asarray(jax.vmap(lambda g: rules.next_cards(g, 1))(games)).argmax(axis=1)
    assert _chisquare(np.bincount(first, minlength=rules.kinds), rules.full_counts / deck) > ALPHA
    drawn = np.asarray(jax.vmap(lambda g: rules.next_cards(g, 15))(games))
    assert (drawn.sum(axis=1) == 15).all()
    assert (drawn.argmax(axis=1) >= 0).all()
    for kind in (FOOT, opts.max_value):
        law = stats.hypergeom(deck, rules.full_counts[kind], 15).pmf(np.arange(16))
        assert _chisquare(np.bincount(drawn[:, kind], minlength=16), law) > ALPHA, kind
    # The points of those 15 cards against the reference engine's own shuffles (two samples).
    rng = np.random.default_rng(3)
    reference = [sum(shuffled(full_deck(opts), rng)[-15:]) for _ in range(GAMES)]
    twin = drawn[:, 1:] @ np.arange(1, opts.max_value + 1)
    edges = np.quantile(reference, np.linspace(0, 1, 11)[1:-1])
    table = [np.bincount(np.searchsorted(edges, x, side="right"), minlength=10) for x in (reference, twin)]
    assert stats.chi2_contingency(np.asarray(table)).pvalue > ALPHA


def test_the_reshuffle_at_a_tally_is_fresh_and_uniform(two_player):
    """Every game of the batch is dealt the same deck and plays the same script, so they tally at
    the same step; from there each one's key reshuffles: the next round's first 15 cards follow
    the uniform shuffle's law."""
    env, init, step = two_player
    rules, opts = env.rules, env.rules.opts
    states = init(jnp.broadcast_to(jax.random.PRNGKey(4), (GAMES, 2)))
    for t in range(40):
        states = _scripted(env, states, step, keys(600 + t, GAMES), bid=15)
        if bool(states._chance.any()):
            break
    assert bool(states._chance.all()) and not bool(states.terminated.any())
    assert (np.asarray(states._game.deck_counts) == rules.full_counts).all()
    seeds = np.asarray(states._game.seed)
    assert len({tuple(s) for s in seeds}) == GAMES  # fresh: every game its own new deck
    drawn = np.asarray(jax.vmap(lambda g: rules.next_cards(g, 15))(states._game))
    for kind in range(rules.kinds):
        law = stats.hypergeom(opts.deck_size, rules.full_counts[kind], 15).pmf(np.arange(16))
        assert _chisquare(np.bincount(drawn[:, kind], minlength=16), law) > ALPHA, kind


# ----- broken twins must fail the suite -----------------------------------------------------------
class FootBonusOffByOne(Twin):
    """One rule off by one: a round with exactly one foot scores the bonus plus one."""

    def __init__(self, options, observer, layout) -> None:
        super().__init__(options, observer, layout)
        self.opts = replace(self.opts, foot_bonus=self.opts.foot_bonus + 1)


class NumbersOfTheWrongSeat(Twin):
    """One observation piece from the wrong seat: `my_numbers` shows the left neighbour's hand."""

    def observe(self, game, player):
        mine = super().observe(game, player)
        theirs = super().observe(game, (player + 1) % self.num_players)
        span = self.piece("my_numbers")
        return mine.at[span].set(theirs[span])


@pytest.mark.parametrize("broken", [FootBonusOffByOne, NumbersOfTheWrongSeat])
def test_a_broken_twin_fails_the_suite(broken):
    reference = envs.make(NAME).unwrapped
    rules = broken(reference.options, reference.observer, reference.game_cls.action_layout(reference.options))
    with pytest.raises(MisalignedError):
        Aligner(NAME, TwinEnv(rules, NAME), pad_to=16).games(range(16))


# ----- Pgx's API ------------------------------------------------------------------------------------
def test_jit_and_vmap_play_whole_games_that_keep_every_card(two_player):
    """The twin's own play (its lazy shuffles, never the reference's decks): a jitted lax.scan of
    random legal actions with auto-reset over a batch; every card is in the deck or a hand."""
    env, init, _ = two_player
    batch = 64
    step = jax.vmap(auto_reset(env))
    full = jnp.asarray(env.rules.full_counts)

    def play(state, key):
        act_key, step_key = jax.random.split(key)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(act_key, logits).astype(jnp.int32)
        state = step(state, action, jax.random.split(step_key, batch))
        kept = (state._game.deck_counts + state._game.hands.sum(axis=1) == full).all()
        return state, (kept, state.terminated, state.rewards)

    state = init(keys(5, batch))
    assert state.observation.shape == (batch, env.rules.observation_size)
    assert state.observation.dtype == jnp.float32 and state.legal_action_mask.dtype == jnp.bool_
    assert state.rewards.shape == (batch, 2) and state.current_player.dtype == jnp.int32
    _, (kept, ended, rewards) = jax.jit(lambda s, k: jax.lax.scan(play, s, k))(state, keys(6, 3000))
    assert bool(kept.all())
    assert int(ended.sum()) > batch  # games ended and were dealt again
    finals = np.asarray(rewards)[np.asarray(ended)]
    assert np.allclose(finals.sum(axis=1), 0.0) and set(np.unique(finals)) <= {-1.0, 0.0, 1.0}


def test_an_illegal_action_loses_and_a_done_game_stays_done(two_player):
    env, init, step = two_player
    states = init(keys(7, 2))
    states = step(states, jnp.asarray([5, 5], jnp.int32), keys(8, 2))  # player_0 bids 5
    # player_1 bids 3 (not above 5) in game 0, and an out-of-range id in game 1.
    states = step(states, jnp.asarray([3, env.num_actions], jnp.int32), keys(9, 2))
    assert np.asarray(states.terminated).all() and not np.asarray(states.truncated).any()
    assert np.asarray(states.rewards).tolist() == [[1.0, -1.0], [1.0, -1.0]]
    assert np.asarray(states.legal_action_mask).all()
    after = step(states, jnp.asarray([0, 0], jnp.int32), keys(10, 2))
    assert np.asarray(after.rewards).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert np.asarray(after.terminated).all()
    assert (np.asarray(after.observation) == np.asarray(states.observation)).all()


@pytest.mark.parametrize(
    "options",
    [{"num_players": 5}, {"bid_cap": 0}, {"cap_ending": "tie"}, {"reward_mode": "points"}, {"colour": 1}],
)
def test_make_jax_refuses_bad_options_as_make_does(options):
    with pytest.raises(ValueError) as made:
        envs.make(NAME, **options)
    with pytest.raises(ValueError) as twin:
        envs.make_jax(NAME, **options)
    assert str(twin.value) == str(made.value)


def test_the_env_has_pgx_identifiers():
    env = envs.make_jax(NAME, num_players=3)
    reference = envs.make(NAME, num_players=3)
    assert (env.id, env.version, env.num_players) == (NAME, "v1", 3)
    assert env.num_actions == reference.action_space("player_0").n
    assert env.observation_shape == reference.observation_space("player_0")["observation"].shape
