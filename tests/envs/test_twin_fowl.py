"""Murder Most Fowl's batched twin (`fowlplay.envs.make_jax("murder_most_fowl_v0")`) is the reference
game, step for step.

The alignment suite steps the reference engine and the twin side by side from the same deals with
the same actions and compares, before every decision and at the end, every seat's observation (bit
for bit, about 2,800 floats at 2 players), the acting seat, the legal mask, the rewards and the done
flags (`envs.core.twin_alignment`). Fowl draws no fresh chance after the deal (the deck is shuffled
once and the game ends when it runs out), so no step is re-synced: a converted game keeps the
reference's deck order and the twin must play it exactly. For every player count: the golden
playthrough's game, every seeded baseline game of baseline_golden.json and hundreds of seeded
masked-random games; then rule options, the twin's own deal and deck order against the reference's
distribution (chi-square), broken twins that must fail, and Pgx's API.

The twin compiles once per option set (about 20 s of CPU each): every aligner of one option set is
made once for the module and pads its batches to BATCH, and the chance and API tests reuse them.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from fowlplay import envs  # noqa: E402
from fowlplay.envs.core.cards import shuffled  # noqa: E402
from fowlplay.envs.core.twin import TwinEnv  # noqa: E402
from fowlplay.envs.core.twin_alignment import Aligner, AlignmentCount, MisalignedError, random_policy  # noqa: E402
from fowlplay.envs.fowl.rules import Decision, Wile, full_deck  # noqa: E402
from fowlplay.envs.fowl.twin import Twin  # noqa: E402

from tests.envs.twin_suite import baseline_golden_games, keys, playthrough_actions  # noqa: E402

stats = pytest.importorskip("scipy.stats")

NAME = "murder_most_fowl_v0"
HERE = Path(__file__).resolve().parent
PLAYERS = (2, 3, 4)
#: Games per aligned batch: every call pads to it, so each option set compiles once.
BATCH = 64
#: Seeded masked-random games per player count (seeds 1..N; seed 0 is the golden playthrough's).
RANDOM_GAMES = {2: 256, 3: 192, 4: 128}
#: Decisions those games compare, per player count (docs/batched.md quotes them; a rules change
#: that changes them changes the golden playthroughs too).
RANDOM_STEPS = {2: 30_947, 3: 45_386, 4: 35_300}
#: A p-value below this fails a chi-square test (fixed seeds: the tests are deterministic).
ALPHA = 1e-3


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
    assert count.chance_steps == 0


def test_the_baseline_golden_games_align(aligner):
    """The seeded games of tests/envs/test_baseline_golden.py, baselines in every seat: their
    decisions hash to the golden file's, so these are exactly those games."""
    count, played, golden = baseline_golden_games(aligner, NAME)
    print(f"\n{NAME} {aligner.twin.num_players}p baseline games: {count}")
    assert played == golden
    assert count.chance_steps == 0


def test_hundreds_of_random_games_align(aligner):
    """Masked-random games, and what they reach: murders that succeed and fail, Escalation,
    Discard and Swap wiles hitting birds, arrests, and games ended by the deck and by murder."""
    n = aligner.twin.num_players
    murder = aligner.twin.rules.layout["murder"].start
    seen: set[str] = set()

    def watched(env, legal, rng) -> int:
        game = env.unwrapped.game
        if game.escalated:
            seen.add("escalation")
        if game.stage in (Decision.DISCARD_TARGET, Decision.SWAP_TARGET):  # a bird is about to leave a grid
            seen.add("hit")
        if any(game.recorded[p] and game.arrested(p) for p in range(n)):
            seen.add("arrest")
        if not game.deck:
            seen.add("last card drawn")
        action = random_policy(env, legal, rng)
        if action >= murder:
            victim = (game.to_act + action - murder + 1) % n
            seen.add("murdered" if game.murder_succeeds(game.to_act, victim) else "caught")
        return action

    total, games = AlignmentCount(), RANDOM_GAMES[n]
    for start in range(1, games + 1, BATCH):
        total.add(aligner.games(range(start, min(start + BATCH, games + 1)), policy=watched))
    print(f"\n{NAME} {n}p: {total}; reached {sorted(seen)}")
    assert total.games == games and total.chance_steps == 0
    assert total.steps == RANDOM_STEPS[n]
    assert seen >= {"murdered", "caught", "escalation", "hit", "last card drawn"}
    if n > 2:
        assert "arrest" in seen


#: Option sets that between them move every option off its default: a small grid whose border
#: binds, two types, many wiles (three Murders), short routes and no murder margin; a wide grid,
#: six types of 8 values, no Blocking, Swap or Murder wile, routes of two and a wide margin; a
#: grid of one cell, one bird type of 20 values (every route doubles) and routes of one bird.
OPTION_SETS = {
    "tiny-grid-many-wiles": {
        "num_players": 4,
        "grid_size": 3,
        "num_types": 2,
        "max_value": 6,
        "blocking_wiles": 6,
        "discard_wiles": 1,
        "swap_wiles": 3,
        "murder_wiles": 3,
        "min_route": 3,
        "murder_margin": 0,
    },
    "wide-no-murder": {
        "num_players": 3,
        "grid_size": 13,
        "num_types": 6,
        "max_value": 8,
        "blocking_wiles": 0,
        "discard_wiles": 5,
        "swap_wiles": 0,
        "murder_wiles": 0,
        "min_route": 2,
        "murder_margin": 9,
    },
    "one-cell-one-type": {
        "num_players": 2,
        "grid_size": 1,
        "num_types": 1,
        "max_value": 20,
        "min_route": 1,
        "murder_wiles": 2,
    },
}
#: Seeded masked-random games per option set (one batch).
OPTION_GAMES = 32


@pytest.mark.parametrize("name", OPTION_SETS)
def test_rule_options_align(name):
    options = OPTION_SETS[name]
    count = Aligner(NAME, pad_to=OPTION_GAMES, **options).games(range(OPTION_GAMES))
    print(f"\n{NAME} {options}: {count}")
    assert count.games == OPTION_GAMES and count.chance_steps == 0
    assert count.steps > OPTION_GAMES * 8


# ----- the twin's own chance against the reference's distribution --------------------------------
#: Deals sampled; the deck order is drawn once, at the deal (no step of Fowl draws fresh chance).
GAMES = 4096
#: The deck draws read one by one after the deal.
NEXT = 10


def _chisquare(observed: np.ndarray, probabilities: np.ndarray) -> float:
    """The p-value of observed counts against probabilities, pooling cells expected below 5."""
    observed, expected = (
        np.asarray(observed, float).ravel(),
        np.asarray(probabilities).ravel() * np.sum(observed),
    )
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


def _draw_order(rules: Twin, game) -> jax.Array:
    """Every card the deck gives after the deal, in the order the twin draws them (the game unchanged)."""

    def draw(carry, _):
        deck, length = carry
        card, rest = rules._draw(deck, length, rules._deck_pick(game.ordered, game.seed, length))
        return (rest, length - 1), card

    _, cards = jax.lax.scan(draw, (game.deck, game.deck_len), None, length=rules.deck_size - 3 * rules.n)
    return cards


@pytest.fixture(scope="module")
def deals():
    """GAMES deals of the 4-player twin (`init`) and the whole deck order each one fixed."""
    rules = aligner_for(4).twin.rules
    init = jax.jit(jax.vmap(rules.init))
    games = init(keys(1, GAMES))
    order = jax.jit(jax.vmap(functools.partial(_draw_order, rules)))(games)
    return rules, init, jax.device_get(games), np.asarray(order)


def _kind_class(cards: np.ndarray, rules: Twin) -> np.ndarray:
    """A bird's type, or `types` for any wile."""
    return np.where(cards < rules.birds, cards // rules.values, rules.types)


def test_the_deal_and_the_deck_order_are_a_uniform_shuffle(deals):
    """The twin's deals and deck orders against the reference's uniform shuffle (`rng.permutation`
    of the full deck, popped from the end: a pile card per seat, two hand cards each, then the
    draws): every card once; the first pile card; the wiles in player_0's hand; each of the next
    draws; the place of the Murder wile in the whole order; the classes of the first two and the
    last two draws together; the points of the next draws beside the reference's own shuffles."""
    rules, _, games, order = deals
    n, opts = rules.n, rules.options
    deck = np.asarray(full_deck(opts))
    size, copies = len(deck), np.bincount(deck, minlength=rules.kinds)
    law = copies / size  # a card's chance at any place of the order
    assert (order >= 0).all() and order.shape == (GAMES, size - 3 * n)
    # Every card once: the piles, the hands and the deck order hold the full deck.
    held = games.hands.sum(axis=1) + games.pile_counts.sum(axis=1)
    held += (order[:, :, None] == np.arange(rules.kinds)).sum(axis=1)
    assert (held == copies).all()
    assert (games.pile_len == 1).all() and (games.hands.sum(axis=2) == 2).all()

    tops = games.piles[:, 0, 0].astype(int)
    assert _chisquare(np.bincount(tops, minlength=rules.kinds), law) > ALPHA
    wiles = games.hands[:, 0, rules.birds :].sum(axis=1)
    hypergeom = stats.hypergeom(size, size - rules.birds, 2).pmf(np.arange(3))
    assert _chisquare(np.bincount(wiles, minlength=3), hypergeom) > ALPHA
    for k in range(NEXT):  # NEXT tests, each at a NEXT-th of the level (Bonferroni)
        assert _chisquare(np.bincount(order[:, k], minlength=rules.kinds), law) > ALPHA / NEXT, k

    # The Murder wile's place: seat p's pile card (p), seat p's hand (two places), or draw k.
    murder = rules.murder_card
    place = np.full(GAMES, -1)
    for p in range(n):
        place[games.piles[:, p, 0] == murder] = p
        place[games.hands[:, p, murder] > 0] = n + p
    drawn = order == murder
    place[drawn.any(axis=1)] = 2 * n + drawn.argmax(axis=1)[drawn.any(axis=1)]
    assert (place >= 0).all()
    places = np.r_[np.full(n, 1.0), np.full(n, 2.0), np.ones(size - 3 * n)] / size
    assert _chisquare(np.bincount(place, minlength=len(places)), places) > ALPHA

    # Two draws together (a pair of places of a uniform order: c_a (c_b - [a = b]) / (D (D - 1))).
    classes = np.bincount(_kind_class(deck, rules), minlength=rules.types + 1)
    pair_law = (np.outer(classes, classes) - np.diag(classes)) / (size * (size - 1))
    for first in (0, order.shape[1] - 2):  # the first two draws, and the last two (a deck of 2 and 1)
        a, b = _kind_class(order[:, first], rules), _kind_class(order[:, first + 1], rules)
        pairs = np.bincount(a * (rules.types + 1) + b, minlength=(rules.types + 1) ** 2)
        assert _chisquare(pairs, pair_law) > ALPHA / 2, first

    # Bird values among the next draws against the reference engine's own shuffles (two samples).
    rng = np.random.default_rng(3)
    reference = []
    for _ in range(GAMES):
        cards = shuffled(list(deck), rng)[::-1][3 * n : 3 * n + NEXT]  # the reference pops from the end
        reference.append(sum(c % opts.max_value + 1 for c in cards if c < rules.birds))
    nxt = order[:, :NEXT]
    twin = np.where(nxt < rules.birds, nxt % opts.max_value + 1, 0).sum(axis=1)
    edges = np.quantile(reference, np.linspace(0, 1, 11)[1:-1])
    table = [np.bincount(np.searchsorted(edges, x, side="right"), minlength=10) for x in (reference, twin)]
    assert stats.chi2_contingency(np.asarray(table)).pvalue > ALPHA


def test_a_deal_depends_on_its_key_only(deals):
    """The same keys deal the same games; GAMES keys give GAMES different deck orders."""
    _, init, games, _ = deals
    again = jax.device_get(init(keys(1, GAMES)))
    assert all(
        np.array_equal(x, y)
        for x, y in zip(jax.tree_util.tree_leaves(games), jax.tree_util.tree_leaves(again))
    )
    assert len(set(games.seed.tolist())) == GAMES
    other = jax.device_get(init(keys(2, GAMES)))
    assert not np.array_equal(games.seed, other.seed)


def test_public_facts_are_what_every_seat_knows():
    """`Twin.public` (what the suite would compare at fresh chance; Fowl's steps draw none) is
    unchanged when the hidden cards are dealt again from a seat's posterior (the deck and the
    unseen hand cards), and it changes with a public fact."""
    rules = aligner_for(3).twin.rules

    def public(game):
        return [np.asarray(x) for x in rules.public(rules.from_reference(game))]

    env = envs.make(NAME, num_players=3)
    env.reset(seed=9)
    rng = np.random.default_rng(9)
    checked = 0
    for decision in range(1, 121):
        game = env.unwrapped.game
        if decision % 20 == 0:
            other = game.clone()
            other.resample_hidden(game.to_act, rng)
            assert other.deck != game.deck  # hidden cards were dealt again ...
            assert all(np.array_equal(x, y) for x, y in zip(public(game), public(other)))  # ... unseen
            checked += 1
        legal = np.flatnonzero(game.legal_mask())
        env.step(int(legal[rng.integers(len(legal))]))
    assert checked == 6 and not env.unwrapped.game.over
    before = public(env.unwrapped.game)
    env.step(int(np.flatnonzero(env.unwrapped.game.legal_mask())[0]))
    assert not all(np.array_equal(x, y) for x, y in zip(before, public(env.unwrapped.game)))


# ----- broken twins must fail the suite -----------------------------------------------------------
class RoutesOneShort(Twin):
    """One rule off by one: a route scores from one bird shorter than the rules say."""

    def __init__(self, options, observer, layout) -> None:
        super().__init__(options, observer, layout)
        self.min_route -= 1


class KnownHandsOfTheWrongSeat(Twin):
    """One observation piece from the wrong seat: `known_hands` as the left neighbour sees it."""

    def observe(self, game, player):
        mine = super().observe(game, player)
        theirs = super().observe(game, (player + 1) % self.num_players)
        span = self.piece("known_hands")
        return mine.at[span].set(theirs[span])


@pytest.mark.parametrize("broken", [RoutesOneShort, KnownHandsOfTheWrongSeat])
def test_a_broken_twin_fails_the_suite(broken):
    reference = envs.make(NAME, num_players=3).unwrapped
    rules = broken(reference.options, reference.observer, reference.game_cls.action_layout(reference.options))
    with pytest.raises(MisalignedError):
        Aligner(NAME, TwinEnv(rules, NAME), pad_to=32, num_players=3).games(range(32))


# ----- Pgx's API ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def two_player():
    """The 2-player aligner's twin, its jitted step (compiled once there) and a jitted init."""
    aligner = aligner_for(2)
    return aligner.twin, jax.jit(jax.vmap(aligner.twin.init)), aligner._step


def _rows_where(rows: np.ndarray, chosen: np.ndarray, other: np.ndarray) -> np.ndarray:
    """`chosen` in the batch rows `rows`, else `other`."""
    return np.where(rows.reshape((-1,) + (1,) * (other.ndim - 1)), chosen, other)


def _held(rules: Twin, g) -> np.ndarray:
    """int [batch, K]: copies of each card in the deck, the hands, the piles, the grids and in play."""
    kinds = np.arange(rules.kinds)
    live = np.arange(rules.deck_size)[None, :] < g.deck_len[:, None]
    deck = ((g.deck[:, :, None] == kinds) & live[:, :, None]).sum(axis=1)
    grids = (g.grids.reshape(len(g.grids), -1)[:, :, None] == kinds).sum(axis=1)
    # A card played and waiting for its target is in no hand; a Swap or Murder wile waiting for its
    # target already lies in its grid.
    waiting = (g.stage != Decision.SWAP_TARGET) & (g.stage != Decision.MURDER_TARGET)
    pending = (g.pending_card[:, None] == kinds) & waiting[:, None]
    return g.hands.sum(axis=1) + g.pile_counts.sum(axis=1) + grids + deck + pending


def test_jit_and_vmap_play_whole_games_that_keep_every_card(two_player):
    """The twin's own play (its own deals and deck orders, never the reference's): random legal
    actions over a batch, games dealt again as they end; every card is somewhere, every live game
    has a legal action, the observation stays in the reference's bounds, no step reports fresh
    chance and the final rewards are the zero-sum win rewards."""
    env, init, step = two_player
    rules = env.rules
    reference = envs.make(NAME).unwrapped.observer
    full = np.bincount(full_deck(rules.options), minlength=rules.kinds)
    state = jax.device_get(init(keys(5, BATCH)))
    assert state.observation.shape == (BATCH, rules.observation_size)
    assert state.observation.dtype == np.float32 and state.legal_action_mask.dtype == np.bool_
    assert state.rewards.shape == (BATCH, 2) and state.current_player.dtype == np.int32
    rng, ended, finals = np.random.default_rng(6), 0, []
    for t in range(200):
        mask = state.legal_action_mask
        assert mask.any(axis=1).all()
        action = np.array([rng.choice(np.flatnonzero(row)) for row in mask], np.int32)
        state = jax.device_get(step(state, jnp.asarray(action), keys(100 + t, BATCH)))
        assert (_held(rules, state._game) == full).all()
        assert not state._chance.any()
        assert (state.observation >= reference.low).all() and (state.observation <= reference.high).all()
        done = state.terminated | state.truncated
        assert not state.truncated.any()
        finals.append(state.rewards[done])
        ended += int(done.sum())
        if done.any():  # deal those games again (auto-reset)
            fresh = jax.device_get(init(keys(1000 + t, BATCH)))
            state = jax.tree_util.tree_map(functools.partial(_rows_where, done), fresh, state)
    assert ended > BATCH  # games ended and were dealt again
    finals = np.concatenate(finals)
    assert np.allclose(finals.sum(axis=1), 0.0) and set(np.unique(finals)) <= {-1.0, 0.0, 1.0}


def test_an_illegal_action_loses_and_a_done_game_stays_done(two_player):
    env, init, step = two_player
    state = jax.device_get(init(keys(7, BATCH)))
    illegal = np.full(BATCH, env.rules.layout["discard"].start, np.int32)  # a discard at the first draw
    illegal[1] = env.num_actions  # out of range
    illegal[2] = -1
    assert not state.legal_action_mask[np.arange(BATCH), illegal.clip(0, env.num_actions - 1)][[0, 3]].any()
    after = jax.device_get(step(state, jnp.asarray(illegal), keys(8, BATCH)))
    assert after.terminated.all() and not after.truncated.any() and after.legal_action_mask.all()
    assert (after.rewards == np.array([-1.0, 1.0], np.float32)).all()  # player_0 acted
    again = jax.device_get(step(after, jnp.zeros(BATCH, jnp.int32), keys(9, BATCH)))
    assert (again.rewards == 0).all() and again.terminated.all()
    assert (again.observation == after.observation).all()


@pytest.mark.parametrize(
    "options",
    [
        {"num_players": 1},
        {"num_players": 5},
        {"num_types": 7},
        {"max_value": 0},
        {"max_value": 21},
        {"murder_wiles": -1},
        {"grid_size": 10},
        {"grid_size": 27},
        {"min_route": 0},
        {"murder_margin": -1},
        {"num_players": 4, "num_types": 1, "max_value": 2, "blocking_wiles": 0},  # too small a deck
        {"colour": 1},
    ],
)
def test_make_jax_refuses_bad_options_as_make_does(options):
    with pytest.raises(ValueError) as made:
        envs.make(NAME, **options)
    with pytest.raises(ValueError) as twin:
        envs.make_jax(NAME, **options)
    assert str(twin.value) == str(made.value)


def test_the_twin_refuses_a_deck_it_cannot_shuffle():
    """The twin's lazy shuffle picks a card among at most 65535 (16-bit arithmetic): a larger deck,
    which the reference plays, is refused when the twin is made."""
    options = {"blocking_wiles": (1 << 16) - 40 - 6}  # 40 birds and six other wiles: 65536 cards
    assert envs.make(NAME, **options).unwrapped.options.deck_size == 1 << 16
    with pytest.raises(ValueError, match="at most 65535 cards; got a deck of 65536"):
        envs.make_jax(NAME, **options)


def test_the_env_has_pgx_identifiers():
    env = envs.make_jax(NAME, num_players=3, grid_size=7)
    reference = envs.make(NAME, num_players=3, grid_size=7)
    assert (env.id, env.version, env.num_players) == (NAME, "v0", 3)
    assert env.num_actions == reference.action_space("player_0").n
    assert env.observation_shape == reference.observation_space("player_0")["observation"].shape
    assert env.rules.murder_card == env.rules.birds + int(Wile.MURDER)


def test_the_potential_is_the_references_for_every_seat():
    """`TwinEnv.potential` (what reward shaping reads) equals the reference's `Game.potential` of
    every seat, along 3-player baseline games: leads and deficits, murdered, caught and arrested
    seats (-1) included."""
    env = envs.make(NAME, num_players=3)
    module = envs.env_module(NAME)
    twin = envs.make_jax(NAME, num_players=3)
    potential = jax.jit(jax.vmap(twin.potential, in_axes=(None, 0)))
    seats = jnp.arange(3)
    seen = {"lead": 0, "behind": 0, "out": 0, "arrested": 0}
    for seed in (*range(5), 128):  # seed 128: a murderer is arrested on the table for 28 decisions
        env.reset(seed=seed)
        agents = [module.BaselineAgent(env.unwrapped.options, seed=s) for s in range(3)]
        decisions = 0
        for agent in env.agent_iter():
            game = env.unwrapped.game
            if decisions % 5 == 0 or env.terminations[agent]:
                want = np.array([game.potential(p) for p in range(3)], np.float32)
                got = np.asarray(potential(twin.from_reference(game), seats))
                np.testing.assert_allclose(got, want, atol=1e-6, err_msg=f"seed {seed}, decision {decisions}")
                seen["lead"] += int((want > 0).sum())
                seen["behind"] += int(((want < 0) & (want > -1)).sum())
                seen["out"] += int((want == -1).sum())
                seen["arrested"] += sum(game.alive[p] and game.arrested(p) for p in range(3))
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            seat = game.current_player
            view = env.observe(agent)
            env.step(int(agents[seat].act(view["observation"], view["action_mask"])))
            decisions += 1
    assert min(seen.values()) > 0, seen
