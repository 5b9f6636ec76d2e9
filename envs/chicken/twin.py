"""Chicken's batched JAX twin: the rules of `rules.py` as pure, jit- and vmap-safe functions.

`fowlplay.envs.make_jax("chicken_v1", **options)` wraps it in Pgx's API (`envs.core.twin.TwinEnv`);
the alignment suite (tests/envs/test_twin_chicken.py) holds it equal to `ChickenGame` step by step.

The deck. Cards are kinds 0..max_value (0 is a chicken foot), as in the reference. A hand is a count
per kind (the order of face-down cards never matters), so `hands[p, 0]` is a seat's feet. The deck
is kept two ways:
- `explicit`: a given order (`order[pos]` is the next card, `pos` the cards drawn this round): a
  reference engine's deck, converted by `from_reference`;
- otherwise the twin's own shuffle, drawn lazily: each card is drawn uniformly from the cards left
  (`deck_counts`), its uniform a 32-bit hash of the round's 64-bit `seed` and the card's position.
  Drawing one card at a time uniformly from those left is a uniform shuffle, and the order is fixed
  when `seed` is drawn (at the deal and at each tally), so only those steps draw fresh chance. The
  integer draw `floor(u * cards_left / 2**32)` is off uniform by under cards_left / 2**32.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from fowlplay.envs.chicken.observation import number_points
from fowlplay.envs.chicken.rules import FOOT, ChickenOptions
from fowlplay.envs.core.twin import (
    TwinRules,
    as_array,
    below,
    exact_ratio,
    final_rewards,
    key_words,
    pytree_dataclass,
)

#: The lazy deck's integer draw multiplies 16-bit halves: a deck must hold fewer cards than this.
MAX_TWIN_DECK = 1 << 16
_GOLDEN = np.uint32(0x9E3779B9)


@pytree_dataclass
class GameState:
    """One Chicken game: the reference's `ChickenGame` fields as fixed-size arrays."""

    hands: jax.Array  # int32 [n, max_value + 1]: cards of each kind in front of each seat (kind 0: feet)
    deck_counts: jax.Array  # int32 [max_value + 1]: cards of each kind left in the deck
    order: jax.Array  # int8 [deck size + longest draw]: the explicit deck, order[pos] drawn next
    explicit: jax.Array  # bool: draw from `order` (a reference's deck) instead of the lazy shuffle
    seed: jax.Array  # uint32 [2]: the lazy shuffle of this round
    scores: jax.Array  # int32 [n]
    last_tally: jax.Array  # int32 [n]: each seat's score change at the last tally
    round: jax.Array  # int32: rounds started (1 in the first)
    round_starter: jax.Array  # int32 seat that started this round
    starter: jax.Array  # int32 seat that started this bid phase
    bid: jax.Array  # int32 current high bid (0: none yet)
    high_bidder: jax.Array  # int32 seat of the high bid, -1 if none
    active: jax.Array  # bool [n]: still bidding in this bid phase
    to_act: jax.Array  # int32 acting seat
    terminal: jax.Array  # bool: ended by the rules (a capped game with cap_ending="standings" too)
    truncated: jax.Array  # bool: cut off by the cap with cap_ending="draw"


def _mix(x: jax.Array) -> jax.Array:
    """A 32-bit integer hash with full avalanche (Wellons' lowbias32)."""
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * jnp.uint32(0x846CA68B)
    return x ^ (x >> 16)


class Twin(TwinRules):
    """Chicken's rules over `GameState`; every option is a Python constant of the twin."""

    def __init__(self, options: ChickenOptions, observer, layout) -> None:
        super().__init__(options, observer, layout)
        opts = self.opts = options
        if opts.deck_size >= MAX_TWIN_DECK:
            raise ValueError(
                f"the chicken_v1 twin holds decks of fewer than {MAX_TWIN_DECK} cards; got a deck of "
                f"{opts.deck_size} (max_value x copies_per_value + feet)"
            )
        n, kinds = options.num_players, options.max_value + 1
        self.kinds = kinds
        self.deck_size = opts.deck_size
        #: The longest draw: a bid is at most bid_cap and at most the cards left.
        self.draws = min(opts.bid_cap, opts.deck_size)
        full = np.full(kinds, opts.copies_per_value, np.int32)
        full[FOOT] = opts.feet
        self.full_counts = full
        self.values = np.arange(kinds, dtype=np.int32)  # a number card's points are its kind
        #: A round's tally moves a score by -points..points + foot_bonus, once a round.
        self.number_points = number_points(opts)
        self.score_bounds = (
            -opts.max_rounds * self.number_points,
            opts.max_rounds * (self.number_points + opts.foot_bonus),
        )
        self.pass_action = layout["pass"].start
        self.bid_block = layout["bid"]
        #: Relative seat i of observer p is absolute seat (p + i) mod n.
        self.seat_offsets = np.arange(n, dtype=np.int32)

    # ----- dealing --------------------------------------------------------------------------
    def init(self, key: jax.Array) -> GameState:
        """Round 1 of a new game, player_0 to bid, the deck shuffled from `key`."""
        n = self.num_players
        zeros = jnp.zeros(n, jnp.int32)
        return GameState(
            hands=jnp.zeros((n, self.kinds), jnp.int32),
            deck_counts=jnp.asarray(self.full_counts),
            order=jnp.zeros(self.deck_size + self.draws, jnp.int8),
            explicit=jnp.zeros((), bool),
            seed=jnp.stack(key_words(key, 2)),
            scores=zeros,
            last_tally=zeros,
            round=jnp.ones((), jnp.int32),
            round_starter=jnp.zeros((), jnp.int32),
            starter=jnp.zeros((), jnp.int32),
            bid=jnp.zeros((), jnp.int32),
            high_bidder=jnp.full((), -1, jnp.int32),
            active=jnp.ones(n, bool),
            to_act=jnp.zeros((), jnp.int32),
            terminal=jnp.zeros((), bool),
            truncated=jnp.zeros((), bool),
        )

    def next_cards(self, game: GameState, count: jax.Array) -> jax.Array:
        """Counts per kind of the next `count` cards of the deck (explicit or lazy): what a draw of
        `count` cards takes (`count` at most min(bid_cap, deck size))."""
        kinds = jnp.arange(self.kinds, dtype=jnp.int32)
        draws = jnp.arange(self.draws, dtype=jnp.int32)
        taken = draws < count
        left = game.deck_counts.sum()
        pos = self.deck_size - left
        upcoming = jax.lax.dynamic_slice(game.order, (pos,), (self.draws,)).astype(jnp.int32)
        explicit = ((upcoming[:, None] == kinds) & taken[:, None]).sum(0, dtype=jnp.int32)
        # The lazy deck: draw i takes the r-th of the cards left in kind order, r uniform below them.
        # Each r hangs on the seed and the position only, so every hash is computed at once.
        base = game.seed[0] + pos.astype(jnp.uint32) * _GOLDEN
        r = below(_mix(_mix(base + draws.astype(jnp.uint32) * _GOLDEN) ^ game.seed[1]), left - draws)
        # upper[j]: the cards left of kinds 0..j. Taking the card at r lowers each bound above r by
        # one: a compare and a subtract per draw where a running count per kind would need a cumsum.
        upper = jax.lax.associative_scan(jnp.add, game.deck_counts)
        # A loop, not straight-line code: XLA would copy an unrolled chain into every reader's fusion.
        upper = jax.lax.fori_loop(0, self.draws, lambda i, upper: upper - ((upper > r[i]) & taken[i]), upper)
        lazy = game.deck_counts - jnp.diff(upper, prepend=0)
        return jnp.where(game.explicit, explicit, lazy)

    # ----- a decision and what it sets off --------------------------------------------------
    def step(self, game: GameState, action: jax.Array, key: jax.Array) -> tuple[GameState, jax.Array]:
        """A bid or pass; then the draw, the tally and the next round's shuffle it may set off."""
        opts, n = self.opts, self.num_players
        seats = jnp.arange(n, dtype=jnp.int32)
        player = game.to_act
        passed = action == self.pass_action
        active = game.active & ~((seats == player) & passed)
        bid = jnp.where(passed, game.bid, action - self.bid_block.start + 1)
        high = jnp.where(passed, game.high_bidder, player)
        # The next active seat clockwise after `player` (itself last), -1 if nobody is active.
        ahead = (player + 1 + seats) % n
        nxt = jnp.where(active[ahead].any(), ahead[jnp.argmax(active[ahead])], -1)
        draw_high = (high >= 0) & (nxt == high)  # everyone else passed after the high bid
        draw_starter = nxt == -1  # house: everyone passed without a bid; the starter draws 1
        drawing = draw_high | draw_starter
        drawer = jnp.where(draw_high, high, game.starter)
        count = jnp.where(drawing, jnp.where(draw_high, bid, 1), 0)

        drawn = self.next_cards(game, count)
        hands = game.hands + jnp.where(seats[:, None] == drawer, drawn, 0)
        deck_counts = game.deck_counts - drawn
        round_ends = drawing & ((hands[drawer, FOOT] >= 2) | (deck_counts.sum() == 0))
        new_phase = drawing & ~round_ends

        # The tally (house: the deck empty at a bid phase's start ends the round too).
        points = hands[:, 1:] @ jnp.asarray(self.values[1:])
        feet = hands[:, FOOT]
        tally = jnp.where(feet == 0, points, jnp.where(feet == 1, points + opts.foot_bonus, -points))
        tallied = game.scores + tally
        top = tallied.max()
        won = (top >= opts.target) & ((tallied == top).sum() == 1)  # one leader at or above target
        capped = ~won & (game.round >= opts.max_rounds)
        standings = opts.cap_ending == "standings"  # an option: a Python constant
        over = round_ends & (won | capped)
        next_round = round_ends & ~over

        phase_starter = jnp.where(new_phase, (drawer + 1) % n, game.starter)
        round_starter = jnp.where(next_round, (game.round_starter + 1) % n, game.round_starter)
        phase_starter = jnp.where(next_round, round_starter, phase_starter)
        fresh_phase = new_phase | next_round
        # Every card goes back into the deck at a tally, the game's last one included.
        seed = jnp.stack(key_words(key, 2))
        stepped = GameState(
            hands=jnp.where(round_ends, 0, hands),
            deck_counts=jnp.where(round_ends, jnp.asarray(self.full_counts), deck_counts),
            order=game.order,
            explicit=game.explicit & ~round_ends,
            seed=jnp.where(round_ends, seed, game.seed),
            scores=jnp.where(round_ends, tallied, game.scores),
            last_tally=jnp.where(round_ends, tally, game.last_tally),
            round=game.round + next_round.astype(jnp.int32),
            round_starter=round_starter,
            starter=phase_starter,
            bid=jnp.where(fresh_phase, 0, bid),
            high_bidder=jnp.where(fresh_phase, -1, high),
            active=jnp.where(fresh_phase, True, active),
            to_act=jnp.where(fresh_phase, phase_starter, jnp.where(drawing, player, nxt)),
            terminal=over & (won | standings),
            truncated=over & ~won & (not standings),
        )
        return stepped, round_ends

    # ----- what the env reads ---------------------------------------------------------------
    def legal_mask(self, game: GameState) -> jax.Array:
        """Pass, or a bid above the current one and at most min(cards left, bid_cap)."""
        ids = jnp.arange(self.num_actions, dtype=jnp.int32)
        block = self.bid_block
        k = ids - block.start + 1
        highest = jnp.minimum(game.deck_counts.sum(), self.opts.bid_cap)
        bids = (ids >= block.start) & (ids < block.stop) & (k > game.bid) & (k <= highest)
        return (ids == self.pass_action) | bids

    def observe(self, game: GameState, player: jax.Array) -> jax.Array:
        """`ChickenObserver.fill` for `player`: relative seats, their own numbers, public counts."""
        opts, n = self.opts, self.num_players
        f32 = jnp.float32
        # Every ratio comes from `exact_ratio`: XLA's float32 division is not correctly rounded.
        seats = (player + jnp.asarray(self.seat_offsets)) % n  # absolute seat of each relative one
        over = game.terminal | game.truncated
        mine = game.hands[player, 1:]
        feet = game.hands[:, FOOT]

        def one_hot(seat, on=True):  # the relative seat of absolute `seat`, when `on`
            return ((seat - player) % n == jnp.arange(n)) & on

        copies, target, deck = opts.copies_per_value, opts.target, self.deck_size
        seat_feet = feet[seats]
        pieces = {
            "acting_seat": one_hot(game.to_act, ~over),
            "my_numbers": exact_ratio(mine, copies, 0, copies),
            "my_round_points": exact_ratio(
                mine @ jnp.asarray(self.values[1:]), target, 0, self.number_points
            ),
            "number_cards_held": exact_ratio(game.hands[seats, 1:].sum(1), deck, 0, deck),
            "feet": jnp.where(seat_feet < 2, seat_feet.astype(f32) * 0.5, 1.0),
            "scores": exact_ratio(game.scores[seats], target, *self.score_bounds),
            "unseen_numbers": exact_ratio(copies - mine, copies, 0, copies),
            "deck_size": exact_ratio(game.deck_counts.sum(), deck, 0, deck),
            "current_bid": exact_ratio(game.bid, opts.bid_cap, 0, opts.bid_cap),
            "high_bidder": one_hot(game.high_bidder, game.high_bidder >= 0),
            "still_bidding": game.active[seats],
            "phase_starter": one_hot(game.starter),
            "round_starter": one_hot(game.round_starter),
            "round_progress": exact_ratio(game.round, opts.max_rounds, 0, opts.max_rounds),
        }
        if opts.feet:  # with no feet in the game the reference leaves the piece at 0
            pieces["feet_in_deck"] = exact_ratio(opts.feet - feet.sum(), opts.feet, 0, opts.feet)
        return self.assemble(pieces)

    def current_player(self, game: GameState) -> jax.Array:
        """The seat to bid or pass."""
        return game.to_act

    def terminal(self, game: GameState) -> jax.Array:
        """A round ended with one leader at or above the target, or the cap ended it by the standings."""
        return game.terminal

    def truncated(self, game: GameState) -> jax.Array:
        """The cap ended it as a draw (cap_ending="draw")."""
        return game.truncated

    def returns(self, game: GameState) -> jax.Array:
        """The win reward (or score differences / target); 0 for everyone when truncated."""
        rewards = final_rewards(game.scores, self.opts.reward_mode, self.opts.target)
        return jnp.where(game.truncated, 0.0, rewards).astype(jnp.float32)

    def public(self, game: GameState) -> dict:
        """Everything but the deck's order: after a tally's reshuffle every seat knows the rest."""
        return {
            name: getattr(game, name)
            for name in GameState.__dataclass_fields__
            if name not in ("order", "explicit", "seed")
        }

    # ----- the reference's states -----------------------------------------------------------
    def from_reference(self, game) -> GameState:
        """The GameState of a `ChickenGame` (its deck as an explicit order)."""
        n, kinds = self.num_players, self.kinds
        hands = np.zeros((n, kinds), np.int32)
        for p in range(n):
            hands[p] = np.bincount(np.asarray(game.numbers[p], np.int64), minlength=kinds)[:kinds]
            hands[p, FOOT] = game.feet[p]
        order = np.zeros(self.deck_size + self.draws, np.int8)
        pos = self.deck_size - len(game.deck)
        order[pos : self.deck_size] = game.deck[::-1]  # the reference's top of the deck is its end
        deck_counts = np.bincount(np.asarray(game.deck, np.int64), minlength=kinds)[:kinds]
        return GameState(
            hands=as_array(hands, np.int32),
            deck_counts=as_array(deck_counts, np.int32),
            order=as_array(order, np.int8),
            explicit=as_array(True, bool),
            seed=as_array([0, 0], np.uint32),
            scores=as_array(game.scores, np.int32),
            last_tally=as_array(game.last_tally, np.int32),
            round=as_array(game.round, np.int32),
            round_starter=as_array(game.round_starter, np.int32),
            starter=as_array(game.starter, np.int32),
            bid=as_array(game.bid, np.int32),
            high_bidder=as_array(game.high_bidder, np.int32),
            active=as_array(game.active, bool),
            to_act=as_array(game.to_act, np.int32),
            terminal=as_array(game.terminal, bool),
            truncated=as_array(game.truncated, bool),
        )

    def picture_game(self, game: GameState):
        """A `ChickenGame` holding this state's table, for drawing it (`State.save_svg`): the hands,
        scores, bids and phase as they are; a lazily shuffled deck's cards in kind order (its order
        is not drawn), and no log."""
        from fowlplay.envs.chicken.rules import ChickenGame

        g = {name: np.asarray(value) for name, value in vars(game).items()}
        reference = ChickenGame(self.opts, np.random.default_rng(0))
        kinds = range(self.kinds)
        reference.numbers = [
            [k for k in kinds if k != FOOT for _ in range(int(row[k]))] for row in g["hands"]
        ]
        reference.feet = [int(row[FOOT]) for row in g["hands"]]
        left = int(g["deck_counts"].sum())
        if g["explicit"]:
            reference.deck = [int(c) for c in g["order"][self.deck_size - left : self.deck_size][::-1]]
        else:
            reference.deck = [k for k in kinds for _ in range(int(g["deck_counts"][k]))]
        for name in ("scores", "last_tally", "active"):
            setattr(reference, name, g[name].tolist())
        for name in ("round", "round_starter", "starter", "bid", "high_bidder", "to_act"):
            setattr(reference, name, int(g[name]))
        reference._log = []
        reference._terminal, reference._truncated = bool(g["terminal"]), bool(g["truncated"])
        return reference
