"""Murder, She Crows' batched twin (`fowlplay.envs.make_jax("murder_she_crows_v1")`) is the reference game, step for step.

The alignment suite steps the reference engine and the twin side by side from the same deals with
the same actions and compares, before every decision and at the end, every seat's observation (bit
for bit), the acting seat, the legal mask, the rewards and the done flags (`envs.core.twin_alignment`).
Crows' only fresh chance is a reshuffle of the discard pile into a new deck (at a reveal, or at
either of a turn's two opening draws; the twin keeps the reference's deck order otherwise): there
the public facts of both outcomes are compared (`Twin.public`) and the twin carries on from the
reference's outcome. For every player count: the golden playthrough's game, every seeded baseline
game of baseline_golden.json and 128 seeded masked-random games (some 100,000 decisions); then
rule options, the twin's own deals and reshuffles against the reference's distribution
(chi-square), broken twins that must fail, and Pgx's API.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from fowlplay import envs  # noqa: E402
from fowlplay.envs.core.twin import TwinEnv  # noqa: E402
from fowlplay.envs.core.twin_alignment import (  # noqa: E402
    Aligner,
    AlignmentCount,
    MisalignedError,
    random_policy,
)
from fowlplay.envs.crows.rules import PLAYER_COUNTS, CrowsGame, CrowsOptions, Decision  # noqa: E402
from fowlplay.envs.crows.twin import Twin  # noqa: E402

from tests.envs.twin_suite import baseline_golden_games, keys, playthrough_actions, same_law  # noqa: E402

stats = pytest.importorskip("scipy.stats")

NAME = "murder_she_crows_v1"
HERE = Path(__file__).resolve().parent
PLAYERS = (2, 3, 4, 5)
#: Games per aligned batch: every call pads to it, so each twin compiles once.
BATCH = 128
#: Seeded masked-random games per player count (seeds 1..N; seed 0 is the golden playthrough's).
#: Random play rarely reaches the end of the track: most of these games run to the 200-turn cap,
#: some 700-800 decisions each (the reference's Python steps are most of the suite's time).
RANDOM_GAMES = {2: 128, 3: 128, 4: 128, 5: 128}
#: Decisions those games compare, per player count (docs/batched.md quotes them; a rules change
#: that changes them changes the golden playthroughs too).
RANDOM_STEPS = {2: 90_398, 3: 95_682, 4: 99_007, 5: 100_807}
#: A p-value below this fails a chi-square test (fixed seeds: the tests are deterministic).
ALPHA = 1e-3


@functools.cache
def aligner_for(num_players: int, **options) -> Aligner:
    """The aligner of one option set, made once for the whole module (its jitted step with it)."""
    return Aligner(NAME, num_players=num_players, pad_to=BATCH, **options)


@pytest.fixture(scope="module", params=PLAYERS, ids=[f"{n}p" for n in PLAYERS])
def aligner(request) -> Aligner:
    return aligner_for(request.param)


def test_every_player_count_is_covered():
    assert tuple(PLAYER_COUNTS) == PLAYERS and CrowsOptions().num_players == 2


# ----- the alignment suite ------------------------------------------------------------------------
def test_the_golden_playthrough_aligns(aligner):
    n = aligner.twin.num_players
    actions, decisions = playthrough_actions(NAME, n)
    assert len(actions) == decisions
    count = aligner.game(0, actions=actions)
    print(f"\n{NAME} {n}p golden playthrough: {count}")
    assert count.steps == decisions  # every recorded action was stepped and compared
    assert count.chance_steps > 0  # the discard pile was reshuffled


def test_the_baseline_golden_games_align(aligner):
    """The seeded games of tests/envs/test_baseline_golden.py, baselines in every seat: their
    decisions hash to the golden file's, so these are exactly those games."""
    count, played, golden = baseline_golden_games(aligner, NAME)
    print(f"\n{NAME} {aligner.twin.num_players}p baseline games: {count}")
    assert played == golden


def test_a_hundred_thousand_random_decisions_align(aligner):
    n = aligner.twin.num_players
    total, games = AlignmentCount(), RANDOM_GAMES[n]
    for start in range(1, games + 1, BATCH):
        total.add(aligner.games(range(start, min(start + BATCH, games + 1))))
    print(f"\n{NAME} {n}p: {total}")
    assert total.games == games
    assert total.steps == RANDOM_STEPS[n]
    assert total.chance_steps > games  # several reshuffles a game


#: Option sets that between them move every option off its default: a small deck (a reshuffle
#: every few turns), short murders, extra pile discards and a turn cap ending as a draw in score
#: mode; five players on 20 values (RUN bit masks up to bit 20), long murders, no coins and no pile
#: discards (the observation's other shapes) and the decision cap ending by the standings.
OPTION_SETS = {
    "small-deck-draw-score": {
        "num_players": 3,
        "max_value": 4,
        "copies_per_value": 3,
        "min_murder": 2,
        "points_step": 3,
        "track_length": 12,
        "coin_spaces": (2, 4, 7),
        "pile_discards_per_turn": 2,
        "max_turns": 40,
        "cap_ending": "draw",
        "reward_mode": "score",
    },
    "twenty-values-no-coins-decision-cap": {
        "num_players": 5,
        "max_value": 20,
        "copies_per_value": 2,
        "min_murder": 4,
        "points_step": 2,
        "track_length": 45,
        "coin_spaces": (),
        "pile_discards_per_turn": 0,
        "max_decisions": 250,
        "cap_ending": "standings",
    },
}


@pytest.mark.parametrize("name", OPTION_SETS)
def test_rule_options_align(name):
    options = OPTION_SETS[name]
    games = {}

    def recorded(env, legal, rng) -> int:  # the masked random policy, keeping each game
        games[id(env)] = env.unwrapped.game
        return random_policy(env, legal, rng)

    count = Aligner(NAME, pad_to=64, **options).games(range(64), policy=recorded)
    print(f"\n{NAME} {options}: {count}")
    assert count.games == 64 and count.chance_steps > 64
    capped = [game._capped for game in games.values()]
    assert len(capped) == 64 and 0 < sum(capped) < 64  # games ended by the track and by the cap
    assert all(
        game._truncated == (game._capped and options["cap_ending"] == "draw") for game in games.values()
    )


def test_the_deprecated_v0_twin_ends_a_capped_game_as_a_draw():
    with pytest.warns(DeprecationWarning):
        twin = envs.make_jax("murder_she_crows_v0", max_turns=7)
    assert (twin.id, twin.version, twin.rules.options.cap_ending) == ("murder_she_crows_v0", "v0", "draw")
    assert twin.rules.options == replace(envs.make_jax(NAME, max_turns=7).rules.options, cap_ending="draw")


# ----- the twin's own chance against the reference's distribution --------------------------------
#: Draws of each chance event; every twin call is one BATCH of them, so each compiles once.
GAMES = 4096
OPTIONS = CrowsOptions()  # 2 players; 6 values of 10 copies
VALUES = np.arange(1, OPTIONS.max_value + 1)


@functools.cache
def _init():
    return jax.jit(jax.vmap(aligner_for(2).twin.init))


@functools.cache
def _order():
    """jit(vmap): the cards each game's deck holds, in the order they will be drawn (0 past the end):
    a converted deck's order, or the order the twin's seed fixes, read one draw at a time."""
    rules = aligner_for(2).twin.rules

    def order(g):
        def draw(g, _):
            g, card, _ = rules._draw(g, g.deck_len > 0, g.seed)  # never past the end: no reshuffle
            return g, card

        return jax.lax.scan(draw, g, None, length=OPTIONS.deck_size)[1]

    return jax.jit(jax.vmap(order))


def _law(observed: list, probabilities: dict) -> float:
    """The p-value of a sample of a discrete feature against its law (cells expected below 5 pooled)."""
    cells = sorted(probabilities)
    assert set(observed) <= set(cells)
    counts = np.array([observed.count(c) for c in cells], float)
    expected = np.array([probabilities[c] for c in cells]) * len(observed)
    order = np.argsort(expected)
    pooled_o, pooled_e, o, e = [], [], 0.0, 0.0
    for i in order:
        o, e = o + counts[i], e + expected[i]
        if e >= 5:
            pooled_o.append(o)
            pooled_e.append(e)
            o, e = 0.0, 0.0
    if e:
        pooled_o[-1] += o
        pooled_e[-1] += e
    return stats.chisquare(pooled_o, pooled_e).pvalue


def _pairs(counts: np.ndarray) -> dict:
    """The law of two cards drawn without replacement from `counts` (values 1..V), as sorted pairs."""
    total = counts.sum()
    law = {}
    for a in VALUES:
        for b in VALUES[a <= VALUES]:
            ca, cb = counts[a - 1], counts[b - 1]
            both = ca * (ca - 1) if a == b else 2 * ca * cb
            if both:
                law[(int(a), int(b))] = both / (total * (total - 1))
    return law


def _pair(revealed: np.ndarray) -> tuple:
    """A turn's two opening cards (counts per value) as a sorted pair."""
    return tuple(int(c) for c in np.repeat(VALUES, revealed))


def _adjacent_equal(order) -> int:
    """How many neighbours in a deck's order hold the same value (a test of the whole order)."""
    order = np.asarray(order)
    order = order[order > 0]
    return int((order[1:] == order[:-1]).sum())


def test_the_deal_is_a_uniform_shuffle():
    """The twin's own deals (`init`) against the reference's shuffles: the opening pair, the sixes
    and points among the first 15 cards, the value at every position and the neighbours of equal
    value over the whole rest of the deck."""
    init, order = _init(), _order()
    pairs, orders = [], []
    for k in range(GAMES // BATCH):
        states = init(keys(1000 + k, BATCH))
        pairs += [_pair(r) for r in np.asarray(states._game.revealed)]
        orders.append(np.asarray(order(states._game)))
    rest = np.concatenate(orders)[:, : OPTIONS.deck_size - 2]  # the 58 cards after the opening two
    reference = [CrowsGame(OPTIONS, np.random.default_rng(seed)) for seed in range(GAMES)]
    ref_pairs = [tuple(sorted(game.revealed)) for game in reference]
    ref_rest = np.array([game.deck[::-1] for game in reference])
    assert (rest > 0).all() and (np.stack([np.bincount(r, minlength=7)[1:] for r in rest[:64]]) >= 8).all()
    assert _law(pairs, _pairs(np.full(6, 10))) > ALPHA
    assert same_law(ref_pairs, pairs) > ALPHA
    first_15 = [np.concatenate([p, r[:13]]) for p, r in zip(pairs, rest)]
    sixes = [int((cards == 6).sum()) for cards in first_15]
    law = stats.hypergeom(OPTIONS.deck_size, OPTIONS.copies_per_value, 15).pmf(np.arange(16))
    assert _law(sixes, dict(enumerate(law))) > ALPHA
    ref_first_15 = [np.concatenate([p, r[:13]]) for p, r in zip(ref_pairs, ref_rest)]
    points = [int(cards.sum()) // 3 for cards in first_15]  # bins of 3 points
    assert same_law([int(cards.sum()) // 3 for cards in ref_first_15], points) > ALPHA
    # Every position of the rest holds each value alike: positions x values, homogeneous.
    table = np.stack([np.bincount(rest[:, i], minlength=7)[1:] for i in range(rest.shape[1])])
    assert stats.chi2_contingency(table).pvalue > ALPHA
    assert _law(rest[:, -1].tolist(), {int(v): 1 / 6 for v in VALUES}) > ALPHA  # the deck's bottom card
    assert same_law([_adjacent_equal(r) for r in ref_rest], [_adjacent_equal(r) for r in rest]) > ALPHA


def _table(deck: list[int]) -> CrowsGame:
    """player_0 keeps the 2 of the opening pair (2, 5) on a RUN of 3, 4 (a SET of 6s; the 5 goes
    to the discard pile, which then holds 13 cards); the deck holds what `deck` leaves after the pair.
    player_1's piles are empty, so a bust asks them to claim and draws no more cards."""
    game = CrowsGame.stacked(
        OPTIONS,
        [2, 5, *deck],
        runs=[[3, 4], []],
        sets=[[6, 6], []],
        discard=[1, 1, 1, 2, 2, 3, 4, 4, 5, 6, 6, 6],
    )
    game.apply(game.layout["keep_run"].start + 2 - 1)
    assert game.kind == Decision.PRESS and sum(game.discard) == 13
    return game


def _outcomes(game: CrowsGame, action: int, seed: int):
    """GAMES outcomes of `action` from the reference state `game`: the twin's own (its keys) and
    the reference's (its generators), each as (games, orders of their decks after); checks that
    the twin reported fresh chance and that chance changed no public fact."""
    aligner = aligner_for(2)
    twin, order = aligner.twin, _order()
    state = twin.from_reference(game)
    batch = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(jnp.asarray(x), (BATCH, *np.shape(x))), state)
    actions = jnp.full(BATCH, action, jnp.int32)
    games, orders, public = [], [], []
    for k in range(GAMES // BATCH):
        out = aligner._step(batch, actions, keys(seed + k, BATCH))
        assert bool(out._chance.all())
        games.append(jax.device_get(out._game))
        orders.append(np.asarray(order(out._game)))
        public.append(jax.device_get(aligner._public(out._game)))
    games = jax.tree_util.tree_map(lambda *x: np.concatenate(x), *games)
    references = []
    for s in range(GAMES):
        other = game.clone()
        other.rng = np.random.default_rng(s)
        other.apply(action)
        references.append(other)
    assert all(other.reshuffles == game.reshuffles + 1 for other in references)
    converted = [twin.rules.from_reference(other) for other in references[:BATCH]]
    expected = aligner._public(jax.tree_util.tree_map(lambda *x: np.stack(x), *converted))
    for got in public:
        for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(jax.device_get(expected))):
            assert (g == e[:1]).all() and (e == e[:1]).all()  # the same public facts, whatever chance drew
    assert (games.reshuffles == game.reshuffles + 1).all() and not games.ordered.any()
    assert len(set(games.seed.tolist())) == GAMES  # fresh: every game its own new deck
    ref_orders = [other.deck[::-1] for other in references]
    return (games, np.concatenate(orders)), (references, ref_orders)


def test_a_reshuffle_at_a_reveal_has_the_reference_law():
    """player_0 reveals on an empty deck: the 13 discarded cards become a new deck and its top card
    is revealed (onto a pile, or a bust). The card and the new deck's order, the twin's own
    against the reference's and against the law of a uniform shuffle."""
    game = _table([])
    pile = np.asarray(game.discard[1:])
    (games, orders), (references, ref_orders) = _outcomes(game, game.layout["reveal"].start, seed=11)
    drawn = [int(VALUES[np.argmax(pile - counts)]) for counts in games.deck_counts]
    ref_drawn = [int(VALUES[np.argmax(pile - np.asarray(other.deck_counts[1:]))]) for other in references]
    assert set(drawn) == set(VALUES.tolist()) and (games.deck_len == 12).all()
    assert _law(drawn, {int(v): pile[v - 1] / 13 for v in VALUES}) > ALPHA
    assert same_law(ref_drawn, drawn) > ALPHA
    assert {int(k) for k in games.phase} == {int(Decision.PRESS), int(Decision.CLAIM)}  # fits and busts
    firsts = [(a, int(o[0])) for a, o in zip(drawn, orders)]
    assert same_law([(a, int(o[0])) for a, o in zip(ref_drawn, ref_orders)], firsts) > ALPHA
    assert same_law([_adjacent_equal(o) for o in ref_orders], [_adjacent_equal(o) for o in orders]) > ALPHA


def test_a_reshuffle_at_the_opening_draw_has_the_reference_law():
    """player_0 stops on an empty deck: player_1's first opening card reshuffles the 13 discarded
    cards. player_1's opening pair and the rest of the new deck, as above."""
    game = _table([])
    pile = np.asarray(game.discard[1:])
    (games, orders), (references, ref_orders) = _outcomes(game, game.layout["stop"].start, seed=23)
    pairs = [_pair(r) for r in games.revealed]
    assert (games.turn_player == 1).all() and (games.deck_len == 11).all()
    assert _law(pairs, _pairs(pile)) > ALPHA
    assert same_law([tuple(sorted(other.revealed)) for other in references], pairs) > ALPHA
    assert same_law([_adjacent_equal(o) for o in ref_orders], [_adjacent_equal(o) for o in orders]) > ALPHA


def test_a_reshuffle_at_the_second_opening_draw_has_the_reference_law():
    """One card is left when player_0 stops: player_1's first opening card is that 4 (the deck's
    order, kept), the second reshuffles the 13 discarded cards."""
    game = _table([4])
    pile = np.asarray(game.discard[1:])
    (games, orders), (references, ref_orders) = _outcomes(game, game.layout["stop"].start, seed=37)
    assert (games.revealed[:, 4 - 1] >= 1).all() and (games.deck_len == 12).all()
    second = [int(VALUES[np.argmax(r - (VALUES == 4))]) for r in games.revealed]
    assert all(other.revealed[0] == 4 for other in references)
    ref_second = [other.revealed[1] for other in references]
    assert _law(second, {int(v): pile[v - 1] / 13 for v in VALUES}) > ALPHA
    assert same_law(ref_second, second) > ALPHA
    assert same_law([_adjacent_equal(o) for o in ref_orders], [_adjacent_equal(o) for o in orders]) > ALPHA


# ----- broken twins must fail the suite -----------------------------------------------------------
class PointsStepOffByOne(Twin):
    """One rule off by one: a murder's prestige is rounded up to a multiple of points_step + 1."""

    def __init__(self, options, observer, layout) -> None:
        super().__init__(options, observer, layout)
        self.options = replace(self.options, points_step=self.options.points_step + 1)


class RunsOfTheWrongSeat(Twin):
    """One observation piece from the wrong seat: `run` as the left neighbour sees it."""

    def observe(self, game, player):
        mine = super().observe(game, player)
        theirs = super().observe(game, (player + 1) % self.num_players)
        span = self.piece("run")
        return mine.at[span].set(theirs[span])


@pytest.mark.parametrize("broken", [PointsStepOffByOne, RunsOfTheWrongSeat])
def test_a_broken_twin_fails_the_suite(broken):
    reference = envs.make(NAME).unwrapped
    rules = broken(reference.options, reference.observer, reference.game_cls.action_layout(reference.options))
    with pytest.raises(MisalignedError):
        Aligner(NAME, TwinEnv(rules, NAME), pad_to=16).games(range(16))


# ----- Pgx's API ------------------------------------------------------------------------------------
def _held(g) -> jax.Array:
    """Per value, a game's cards wherever they are: deck, discard pile, piles, revealed, waiting
    and available cards."""
    values = jnp.asarray(VALUES)
    runs = (g.run[:, None] >> values) & 1
    sets = (g.set_value[:, None] == values) * g.set_size[:, None]
    pending = (g.pending == values).astype(jnp.int32)
    return g.deck_counts + g.discard + runs.sum(0) + sets.sum(0) + g.revealed + pending + g.available


def test_jit_and_vmap_play_whole_games_that_keep_every_card():
    """The twin's own play (its own deals and reshuffles, never the reference's decks): random legal
    actions over a batch, games dealt again as they end, the state never leaving the device; every
    card is somewhere, the deck holds its count, the observation stays in the reference's bounds,
    final rewards sum to zero."""
    aligner = aligner_for(2)
    env, init, step = aligner.twin, _init(), aligner._step
    observer = envs.make(NAME).unwrapped.observer
    low, high = jnp.asarray(observer.low), jnp.asarray(observer.high)

    @jax.jit
    def check(state):
        g = state._game
        kept = (jax.vmap(_held)(g) == OPTIONS.copies_per_value).all(axis=1)
        kept &= g.deck_counts.sum(axis=1) == g.deck_len
        bounded = ((state.observation >= low) & (state.observation <= high)).all(axis=1)
        return kept & bounded, state.terminated | state.truncated, state.rewards, g.reshuffles

    @jax.jit
    def choose_and_redeal(state, fresh, key):
        """A uniform legal action per game; the games that ended dealt again (`fresh`) first."""
        done = state.terminated | state.truncated
        state = jax.tree_util.tree_map(
            lambda a, b: jnp.where(done.reshape((-1,) + (1,) * (a.ndim - 1)), a, b), fresh, state
        )
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        return state, jax.random.categorical(key, logits).astype(jnp.int32)

    state = init(keys(5, BATCH))
    assert state.observation.shape == (BATCH, env.rules.observation_size)
    assert state.observation.dtype == jnp.float32 and state.legal_action_mask.dtype == jnp.bool_
    assert state.rewards.shape == (BATCH, 2) and state.current_player.dtype == jnp.int32
    steps = 1000
    drawn = np.asarray(jax.random.split(jax.random.PRNGKey(6), steps * 3 * BATCH)).reshape(
        steps, 3, BATCH, -1
    )
    seen = []
    for t in range(steps):
        state, action = choose_and_redeal(state, init(drawn[t, 0]), drawn[t, 1, 0])
        state = step(state, action, drawn[t, 2])
        seen.append(check(state))
    ok, ended, rewards, reshuffles = (np.stack(x) for x in zip(*jax.device_get(seen)))
    assert ok.all()
    assert ended.any(axis=0).all()  # every game ended and was dealt again
    assert reshuffles.max() > 0  # the twin reshuffled its own discard piles
    finals = rewards[ended]
    assert np.allclose(finals.sum(axis=1), 0.0) and set(np.unique(finals)) <= {-1.0, 0.0, 1.0}
    assert not rewards[~ended].any()


def test_an_illegal_action_loses_and_a_done_game_stays_done():
    aligner = aligner_for(2)
    env = aligner.twin
    state = _init()(keys(7, BATCH))
    assert (np.asarray(state._game.phase) == int(Decision.KEEP)).all()
    illegal = np.full(BATCH, env.rules.layout["stop"].start, np.int32)  # no stop before a keep
    illegal[1] = env.num_actions  # out of range
    illegal[2] = -1
    assert not np.asarray(state.legal_action_mask)[:, illegal[0]].any()
    after = jax.device_get(aligner._step(state, jnp.asarray(illegal), keys(8, BATCH)))
    assert after.terminated.all() and not after.truncated.any() and after.legal_action_mask.all()
    assert (after.rewards == np.array([-1.0, 1.0], np.float32)).all()  # player_0 acted
    again = jax.device_get(aligner._step(after, jnp.zeros(BATCH, jnp.int32), keys(9, BATCH)))
    assert (again.rewards == 0).all() and again.terminated.all()
    assert (again.observation == after.observation).all()


@pytest.mark.parametrize(
    "options",
    [
        {"num_players": 1},
        {"num_players": 6},
        {"max_value": 1},
        {"max_value": 21},
        {"copies_per_value": 0},
        {"min_murder": 0},
        {"coin_spaces": (5, 5)},
        {"coin_spaces": (31,)},
        {"pile_discards_per_turn": -1},
        {"max_turns": 0},
        {"cap_ending": "tie"},
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


def test_the_twin_refuses_a_deck_it_cannot_draw_from():
    envs.make(NAME, max_value=20, copies_per_value=3300)  # the reference plays it
    with pytest.raises(ValueError, match="at most 65535 cards"):
        envs.make_jax(NAME, max_value=20, copies_per_value=3300)


def test_the_env_has_pgx_identifiers():
    env = envs.make_jax(NAME, num_players=4)
    reference = envs.make(NAME, num_players=4)
    assert (env.id, env.version, env.num_players) == (NAME, "v1", 4)
    assert env.num_actions == reference.action_space("player_0").n
    assert env.observation_shape == reference.observation_space("player_0")["observation"].shape
