"""Murray the A**hole Frog's batched twin: the rules of `envs.murray.rules` as pure JAX functions.

`fowlplay.envs.make_jax("murray_frog_v0", **options)` wraps `Twin` in the shared `TwinEnv` (Pgx's
API). Every option is a Python constant of the twin (one twin per option set); sizes, action ids and
observation offsets come from the reference's `ActionLayout` and `MurrayObserver`, and every
observation is the reference's raw counts times the reference observer's own float32 scale vector,
so the two agree bit for bit.

The state keeps counts per card type, as the reference does: hands, the pond (its slots are the
sorted cards), the discard pile, swarms (`max_swarms` rows a seat, filled from slot 0). The deck is
the one part that differs in form:

- a deck converted from the reference (`from_reference`) keeps the reference's order, so an aligned
  game draws the very cards the reference draws;
- a deck the twin shuffles itself (its own deal, and the one reshuffle that brings the Hawk in) is
  kept as counts, and each draw takes one of its cards uniformly at random. Drawing the top card
  of a uniformly shuffled deck and drawing uniformly from the cards left are the same distribution
  (and nobody sees the deck's order), while a shuffle would cost a sort of the deck at every step
  under `vmap`, because every batched step also computes the deal of `auto_reset`.

Chance is drawn from the step's key: one batch of 32-bit words per step, a uniform pick among `k`
cards being `word % k` (a bias below k / 2**32). `step` reports fresh chance when a Deer Fly took a
random card, or when a card came from an unordered deck (which includes the reshuffle); `public`
is what such a step must leave as the reference leaves it (see there).
"""

from __future__ import annotations

from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
from fowlplay.envs.core.twin import TwinRules, as_array, final_rewards, pytree_dataclass
from fowlplay.envs.murray.cards import (
    ABILITY_CARDS,
    COMMON_FLIES,
    FLIES,
    HAND_KINDS,
    NUM_INSECTS,
    PILE_KINDS,
    SWARM_COMBOS,
    VALUE,
    Card,
)
from fowlplay.envs.murray.observation import HawkStatus
from fowlplay.envs.murray.rules import Decision

I32 = jnp.int32
HAWK, MURRAY = int(Card.HAWK), int(Card.MURRAY)
DEER_FLY, DRAGONFLY, FIREFLY, ROBBER_FLY, PAPER_WASP, HORNET = (int(c) for c in ABILITY_CARDS)
#: The decision each ability card asks for once discarded (the Paper Wasp acts at once: TURN again).
_ABILITY_DECISION = {
    DEER_FLY: Decision.DEER_FLY,
    DRAGONFLY: Decision.DRAGONFLY,
    FIREFLY: Decision.FIREFLY_SWARM,
    ROBBER_FLY: Decision.ROBBER_SWARM,
    PAPER_WASP: Decision.TURN,
    HORNET: Decision.HORNET_PLAYER,
}
#: The Robber Fly takes flies: card types 0 .. ROBBER_FLY (not wasps).
_FLY_TYPES = np.array([t in FLIES for t in range(NUM_INSECTS)])
#: GameState leaves holding card counts or card types, stored as `Twin.small` (int8 for every deck
#: of up to 127 copies a type): a batched step is bound by memory traffic more than by arithmetic.
_COUNT_LEAVES = ("hands", "deck", "deck_counts", "pond", "discard", "swarms", "seen", "shown")
#: The text the reference's log writes when the reshuffle happens (`MurrayGame._draw`).
_RESHUFFLE_NOTE = "shuffled into a new deck"


@pytree_dataclass
class GameState:
    """One Murray game: the reference `MurrayGame`'s fields as fixed-size arrays (seats absolute)."""

    hands: jax.Array  # (n, 13) cards of each type (Card order, 12 = Hawk) in each hand
    deck: jax.Array  # (total_cards,) the deck's cards bottom first, when `deck_ordered`
    deck_counts: jax.Array  # (14,) cards of each type in the deck (13 = Murray)
    deck_ordered: jax.Array  # bool: the deck's order is known (taken from the reference)
    pond: jax.Array  # (12,) insects of each type in the pond (its slots are these, sorted)
    discard: jax.Array  # (14,) the discard pile by type
    hawk_in: jax.Array  # bool: the reshuffle brought the Hawk into the deck
    swarms: jax.Array  # (n, max_swarms, 12) each seat's swarms from slot 0, insect counts
    tadpoles: jax.Array  # (n,)
    hawk_seen: jax.Array  # (n,) bool: has held the Hawk since it was shuffled in
    hawk_known: jax.Array  # bool: the history began with the Hawk in view in a hand (`start[2] >= 0`)
    hawk_draws: jax.Array  # (n,) face-down draws by others that could have been the Hawk
    last_passed: jax.Array  # (n,) type last passed left, -1 none
    last_received: jax.Array  # (n,) type last received from the right, -1 none
    seen: jax.Array  # (n, n, 13) seen[p, q]: q's hand after p's last Hornet look (zeros: none)
    shown: jax.Array  # (n, 13) cards the table saw go into each hand and not leave it
    player: jax.Array  # the turn player (every decision is theirs)
    turn: jax.Array  # turns begun
    decision: jax.Array  # `Decision` being asked
    draws_left: jax.Array  # cards still to draw this turn
    filling: jax.Array  # bool: the pond is being refilled
    murray_resets_pond: jax.Array  # bool: the Murray being resolved came from a turn's draw
    murray_this_turn: jax.Array  # bool
    may_go_out: jax.Array  # bool
    swapped: jax.Array  # bool: the pond swap is used this turn
    fly_drawn: jax.Array  # bool: the common-fly draw is used this turn
    passed: jax.Array  # bool: the turn player passed this turn
    target: jax.Array  # seat a Hornet looks at, -1 none
    chosen_owner: jax.Array  # seat of the swarm a Firefly or Robber Fly picked, -1 none
    chosen_slot: jax.Array  # its slot, -1 none
    robber_left: jax.Array  # flies the Robber Fly still discards
    terminal: jax.Array  # bool: the game ended by its rules
    truncated: jax.Array  # bool: the turn cap cut it off
    reshuffled: jax.Array  # bool: the last step shuffled the discard pile into the deck


def _onehot(index: jax.Array, size: int) -> jax.Array:
    """int32 one-hot of `index` (all zeros when it is out of range, e.g. -1)."""
    return (jnp.arange(size) == index).astype(I32)


def _where(flag: jax.Array, vector: jax.Array) -> jax.Array:
    """`vector` where `flag`, else zeros."""
    return jnp.where(flag, vector, jnp.zeros_like(vector))


def _cumsum(counts: jax.Array) -> jax.Array:
    """Running totals along the last axis (XLA's CPU `cumsum` is a quadratic reduce-window; this is
    a logarithmic scan)."""
    return jax.lax.associative_scan(jnp.add, counts, axis=-1)


def _nth(counts: jax.Array, k: jax.Array) -> jax.Array:
    """The type of the k-th card when the cards of `counts` lie in type order (`rules.nth_card`)."""
    return jnp.sum(_cumsum(counts) <= k).astype(I32)


def _materialize(tree):
    """The same pytree, each leaf computed once and stored: a sum over a major axis, which XLA on CPU
    never fuses into its consumers. Without it XLA fuses a step's whole update into every reader of
    its result (the observation, the mask, the scores...), recomputing it once per reader and per
    element: measured, a third of a batched step."""

    def stored(leaf: jax.Array) -> jax.Array:
        pair = jnp.stack([leaf, jnp.zeros_like(leaf)])
        return pair.any(0) if leaf.dtype == bool else pair.sum(0, dtype=leaf.dtype)

    return jax.tree_util.tree_map(stored, tree)


def _pad(counts: jax.Array, size: int) -> jax.Array:
    """Counts over the first card types, zero-padded to `size` types."""
    return jnp.concatenate([counts, jnp.zeros(size - counts.shape[-1], counts.dtype)])


class Twin(TwinRules):
    """Murray's pure functions over `GameState`, for one set of reference options."""

    def __init__(self, options, observer, layout) -> None:
        super().__init__(options, observer, layout)
        o = options
        self.seats, self.max_swarms, self.pond_size = o.num_players, o.max_swarms, o.pond_size
        self.murray_count = o.murray_count
        self.hand_limit = o.hand_limit
        self.draw_count, self.first_draw_count = o.draw_count, o.first_draw_count
        self.hand_size, self.max_turns = o.hand_size, o.max_turns
        self.big_swarm, self.big_swarm_points = o.big_swarm, o.big_swarm_points
        self.perfect_swarm_points = o.perfect_swarm_points
        self.total_cards = o.total_cards
        #: The dtype of the count leaves: every count is at most the copies of a type (or the Murrays).
        self.small = jnp.int8 if max(*o.counts, self.murray_count) <= np.iinfo(np.int8).max else I32
        #: The block of every action id, as its index in `layout.blocks`, and the id's index in it.
        self._block_id = {block.name: k for k, block in enumerate(layout.blocks)}
        owner = np.array([self._block_id[layout.decode(a)[0]] for a in range(layout.size)], np.int32)
        self._block_of = jnp.asarray(owner)
        self._index_of = jnp.asarray(np.array([layout.decode(a)[1] for a in range(layout.size)], np.int32))
        sizes = {
            "create": len(SWARM_COMBOS),
            "add": self.max_swarms * NUM_INSECTS,
            "ability": len(ABILITY_CARDS),
            "swap": NUM_INSECTS * self.pond_size,
            "fly_draw": len(COMMON_FLIES),
            "pass": HAND_KINDS,
            "murray": self.seats * self.max_swarms,
            "swarm": self.seats * self.max_swarms,
            "player": self.seats - 1,
            "pond": self.pond_size,
            "take": NUM_INSECTS,
            "discard": NUM_INSECTS,
        }
        for name, size in sizes.items():
            if layout[name].size != size:
                raise AssertionError(
                    f"the twin expects action block {name!r} of size {size}, not {layout[name].size}"
                )
        # Each observation is the reference's raw counts times its observer's float32 scale vector.
        self._scale = jnp.asarray(np.asarray(observer._scale, np.float32))
        combos = np.zeros((len(SWARM_COMBOS), HAND_KINDS), np.int32)
        for i, combo in enumerate(SWARM_COMBOS):
            for t in combo:
                combos[i, t] += 1
        self._combos = jnp.asarray(combos)
        self._value = jnp.asarray(np.array(VALUE, np.int32))
        self._copies = jnp.asarray(np.array([*o.counts, 1], np.int32))  # of each hand card type
        self._ability_cards = jnp.asarray(np.array([int(c) for c in ABILITY_CARDS], np.int32))
        self._ability_decision = jnp.asarray(
            np.array([int(_ABILITY_DECISION[c]) for c in ABILITY_CARDS], np.int32)
        )
        self._fly_types = jnp.asarray(_FLY_TYPES)
        full = np.zeros(PILE_KINDS, np.int32)
        full[:NUM_INSECTS] = o.counts
        full[MURRAY] = self.murray_count
        #: The deck's cards of each type but the Hawk's (numpy: the deal's sizes are Python constants).
        self._all_but_hawk = full
        # Draws one step can make: a pond refill, a turn's draws or a common-fly draw, and every
        # Murray drawn twice at most (before and after the one reshuffle); one word more for the
        # Deer Fly.
        draws = self.pond_size + max(self.draw_count, self.first_draw_count, 2) + 2 * self.murray_count + 1
        self._words = draws + 1

    # ----- the deal -------------------------------------------------------------------------------
    def init(self, key: jax.Array) -> GameState:
        """Deal the hands and the pond, then player_0's first draw (`MurrayGame.__init__`)."""
        n, h, ps = self.seats, self.hand_size, self.pond_size
        dealt, first = n * h + ps, self.first_draw_count
        draws = dealt + first + self.murray_count
        # Dealing a shuffled pile card by card is drawing uniformly among the cards left each time:
        # the insects go round the seats, h each, then to the pond. The Murrays are shuffled in for
        # the deck; player_0 then draws until `first` insects: a Murray (there is no swarm yet) is
        # discarded and another card drawn, so `murray_count` more at most. Every draw takes one
        # card, so the j-th draws among a known number of cards; the Murrays, the last type, lie
        # past every insect, so the deal never picks one.
        insects = int(self._all_but_hawk[:NUM_INSECTS].sum())
        left = insects + np.where(np.arange(draws) < dealt, 0, self.murray_count) - np.arange(draws)
        picks = (jax.random.bits(key, (draws,), jnp.uint32) % jnp.asarray(left, jnp.uint32)).astype(I32)
        kinds = jnp.arange(PILE_KINDS)

        def draw(carry, xs):
            # below[t]: the cards left of types up to t (kept so, a draw is one comparison); got: the
            # insects of the first draw so far.
            below, got = carry
            pick, dealing = xs
            card = (below <= pick).sum().astype(I32)
            drawing = dealing | (got < first)
            got = got + (drawing & ~dealing & (card != MURRAY))
            return (below - ((kinds >= card) & drawing), got), (card, drawing)

        dealing = jnp.asarray(np.arange(draws) < dealt)
        below = jnp.asarray(np.cumsum(self._all_but_hawk), I32)
        (below, _), (cards, drawn) = jax.lax.scan(draw, (below, jnp.zeros((), I32)), (picks, dealing))
        onehot = ((cards[:, None] == kinds) & drawn[:, None]).astype(I32)
        seat_of = np.minimum(np.arange(dealt) // h, n)
        held = jnp.stack([onehot[:dealt][seat_of == q].sum(0) for q in range(n + 1)])
        murrays = onehot[dealt:, MURRAY].sum()
        hands = held[:n, :HAND_KINDS].at[0].add(onehot[dealt:, :HAND_KINDS].sum(0))
        deck_counts = jnp.diff(below, prepend=0)
        zero = jnp.zeros((), I32)
        zeros, no = jnp.zeros(n, I32), jnp.zeros((), bool)
        game = GameState(
            hands=hands,
            deck=jnp.zeros(self.total_cards, I32),
            deck_counts=deck_counts,
            deck_ordered=no,
            pond=held[n, :NUM_INSECTS],
            discard=_onehot(HAWK, PILE_KINDS) + murrays * _onehot(MURRAY, PILE_KINDS),  # the Hawk starts it
            hawk_in=no,
            swarms=jnp.zeros((n, self.max_swarms, NUM_INSECTS), I32),
            tadpoles=zeros,
            hawk_seen=jnp.zeros(n, bool),
            hawk_known=no,
            hawk_draws=zeros,
            last_passed=zeros - 1,
            last_received=zeros - 1,
            seen=jnp.zeros((n, n, HAND_KINDS), I32),
            shown=jnp.zeros((n, HAND_KINDS), I32),
            player=zero,
            turn=jnp.ones((), I32),
            decision=jnp.asarray(int(Decision.TURN), I32),
            draws_left=zero,
            filling=no,
            murray_resets_pond=no,
            murray_this_turn=murrays > 0,
            may_go_out=murrays == 0,
            swapped=no,
            fly_drawn=no,
            passed=no,
            target=zero - 1,
            chosen_owner=zero - 1,
            chosen_slot=zero - 1,
            robber_left=zero,
            terminal=no,
            truncated=no,
            reshuffled=no,
        )
        return _materialize(self._narrow(game))

    def _widen(self, game: GameState) -> GameState:
        """The count leaves as int32 for arithmetic (they are stored narrow: see `small`)."""
        return game.replace(**{name: getattr(game, name).astype(I32) for name in _COUNT_LEAVES})

    def _narrow(self, game: GameState) -> GameState:
        """The count leaves in their storage dtype."""
        return game.replace(**{name: getattr(game, name).astype(self.small) for name in _COUNT_LEAVES})

    # ----- one decision ---------------------------------------------------------------------------
    def step(self, game: GameState, action: jax.Array, key: jax.Array) -> tuple[GameState, jax.Array]:
        """Apply a legal action of the turn player, then every draw it sets off (`MurrayGame.apply`).

        Every branch of the reference's `apply` is computed and masked by the action it belongs to
        (`_move`), in three parts: the cards in and out of hands (`_hand_moves`), the swarms, pond
        and discard pile (`_table_moves`), and the decision that follows (`_next_decision`)."""
        g = self._widen(game)
        n = self.seats
        words = jax.random.bits(key, (self._words,), jnp.uint32)
        m = self._move(g, action)
        p, i = m.p, m.i
        hands = self._hand_moves(g, m, words)
        table = self._table_moves(g, m, hands.played, hands.from_pond)
        decision, robber_left = self._next_decision(g, m, table.swarms, hands.size_p)
        picking = m.firefly_swarm | m.robber_swarm
        swarm_take, hornet_player, hornet_take = m.swarm_take, m.hornet_player, m.hornet_take
        g = g.replace(
            hands=hands.hands,
            pond=table.pond,
            discard=table.discard,
            swarms=table.swarms,
            tadpoles=table.tadpoles,
            hawk_seen=hands.hawk_seen,
            hawk_draws=hands.hawk_draws,
            last_passed=hands.last_passed,
            last_received=hands.last_received,
            seen=hands.seen,
            shown=hands.shown,
            decision=decision,
            filling=g.filling | table.reset_pond | m.dragonfly,
            murray_resets_pond=g.murray_resets_pond & ~m.murray,
            may_go_out=g.may_go_out & ~m.turn,
            swapped=g.swapped | m.swap,
            fly_drawn=g.fly_drawn | m.fly_draw,
            passed=g.passed | m.pass_,
            target=jnp.where(hornet_player, (p + i + 1) % n, jnp.where(hornet_take, -1, g.target)),
            chosen_owner=jnp.where(picking, m.picked_owner, jnp.where(swarm_take, -1, g.chosen_owner)),
            chosen_slot=jnp.where(picking, m.picked_slot, jnp.where(swarm_take, -1, g.chosen_slot)),
            robber_left=robber_left,
            terminal=g.terminal | m.go_out,
            reshuffled=jnp.zeros((), bool),
        )
        down_to_limit = hands.size_p <= self.hand_limit
        g = self._next_turn(g, m.end_turn | ((m.pass_ | m.discard_down) & down_to_limit))
        g, lazy = self._draw(g, jnp.where(m.fly_draw, 2, 0).astype(I32), words)
        return _materialize(self._narrow(g)), m.deer | lazy

    def _move(self, g: GameState, action: jax.Array) -> SimpleNamespace:
        """The action decoded: its block and index, and one flag per branch of `MurrayGame.apply`."""
        n, s = self.seats, self.max_swarms
        block, i = self._block_of[action], self._index_of[action]
        kind, p = g.decision, g.player
        seats = jnp.arange(n)

        def decided(d: Decision) -> jax.Array:
            return kind == int(d)

        def turn_action(name: str) -> jax.Array:
            return decided(Decision.TURN) & (block == self._block_id[name])

        firefly_take, robber_take = decided(Decision.FIREFLY_TAKE), decided(Decision.ROBBER_TAKE)
        ability = turn_action("ability")
        ability_card = self._ability_cards[jnp.clip(i, 0, len(ABILITY_CARDS) - 1)]
        return SimpleNamespace(
            i=i,
            kind=kind,
            p=p,
            seats=seats,
            me=seats == p,
            left=(p + 1) % n,
            turn=decided(Decision.TURN),
            go_out=turn_action("go_out"),
            create=turn_action("create"),
            add=turn_action("add"),
            ability=ability,
            swap=turn_action("swap"),
            fly_draw=turn_action("fly_draw"),
            pass_=turn_action("pass"),
            end_turn=turn_action("end_turn"),
            murray=decided(Decision.MURRAY),
            deer=decided(Decision.DEER_FLY),
            dragonfly=decided(Decision.DRAGONFLY),
            hornet_player=decided(Decision.HORNET_PLAYER),
            hornet_take=decided(Decision.HORNET_TAKE),
            firefly_swarm=decided(Decision.FIREFLY_SWARM),
            robber_swarm=decided(Decision.ROBBER_SWARM),
            firefly_take=firefly_take,
            robber_take=robber_take,
            discard_down=decided(Decision.DISCARD),
            swarm_take=firefly_take | robber_take,
            ability_card=ability_card,
            wasp=ability & (ability_card == PAPER_WASP),
            one=jnp.clip(i, 0, HAND_KINDS - 1),  # the card of a one-card block (add's card below)
            combo=self._combos[jnp.clip(i, 0, len(SWARM_COMBOS) - 1)],
            picked_owner=(p + i // s) % n,  # a `murray` or `swarm` block id: its owner and slot
            picked_slot=i % s,
        )

    def _hand_moves(self, g: GameState, m: SimpleNamespace, words: jax.Array) -> SimpleNamespace:
        """The cards that leave and enter hands, and what the table and each seat know of them."""
        n, ps = self.seats, self.pond_size
        i, p, seats, me, left, one, combo = m.i, m.p, m.seats, m.me, m.left, m.one, m.combo
        add_card = i % NUM_INSECTS
        pond_slot = jnp.where(m.swap, i % ps, i)  # swap: card i // ps with slot i % ps; Dragonfly: slot i
        from_pond = _nth(g.pond, pond_slot)
        played = (  # face up out of the hand (`_play_from_hand`)
            _where(m.go_out, _onehot(HAWK, HAND_KINDS))
            + _where(m.create, combo)
            + _where(m.add, _onehot(add_card, HAND_KINDS))
            + _where(m.ability, _onehot(m.ability_card, HAND_KINDS))
            + _where(m.fly_draw | m.discard_down, _onehot(one, HAND_KINDS))
        )
        given = _where(m.swap, _onehot(i // ps, HAND_KINDS))
        passed_card = _where(m.pass_, _onehot(one, HAND_KINDS))
        # A Deer Fly takes the card at a uniformly random position of the victim's hand in type order.
        victim = jnp.where(m.deer, (p + i + 1) % n, g.target)
        victim_hand = g.hands[jnp.clip(victim, 0, n - 1)]
        pick = words[-1] % jnp.maximum(victim_hand.sum(), 1).astype(jnp.uint32)
        taken_card = jnp.where(m.deer, _nth(victim_hand, pick.astype(I32)), one)
        taken = _where(m.deer | m.hornet_take, _onehot(taken_card, HAND_KINDS))
        shown_in = (  # face up into the hand: the table sees it
            _where(m.swap | m.dragonfly, _onehot(from_pond, HAND_KINDS))
            + _where(m.firefly_take, _onehot(one, HAND_KINDS))
            + taken
        )
        victims = (seats == victim)[:, None]
        hands = g.hands + me[:, None] * (shown_in - played - given - passed_card) - victims * taken
        hands = hands + (seats == left)[:, None] * passed_card
        # At most one card comes in view a step, counted up to the copies of its type
        # (`MurrayGame._seen_into`: a card seen, passed on face down and taken back is one card).
        shown_p = jnp.minimum(g.shown[p] - jnp.minimum(g.shown[p], played + given) + shown_in, self._copies)
        shown = jnp.where(me[:, None], shown_p, g.shown)
        shown = jnp.where(victims, shown - jnp.minimum(shown, taken), shown)
        sizes = hands.sum(1)
        size_p = sizes[p]
        hawk_seen = g.hawk_seen | (me & (taken[HAWK] > 0)) | ((seats == left) & (passed_card[HAWK] > 0))
        # The turn player left with a single card (before passing) does not hold the Hawk: nobody's
        # unseen draws can have been it.
        single = (played.sum() > 0) & ~g.passed & (size_p == 1)
        hawk_draws = jnp.where(single, 0, g.hawk_draws)
        hawk_draws = jnp.where(m.pass_ & (seats == left), 0, hawk_draws)
        last_passed = jnp.where(m.pass_ & me, i, g.last_passed)
        last_received = jnp.where(m.pass_ & (seats == left), i, g.last_received)
        seen_row = jnp.where((seats == g.target)[:, None], hands, g.seen[p])
        seen = jnp.where((m.hornet_take & me)[:, None, None], seen_row[None], g.seen)
        return SimpleNamespace(
            hands=hands,
            shown=shown,
            hawk_seen=hawk_seen,
            hawk_draws=hawk_draws,
            last_passed=last_passed,
            last_received=last_received,
            seen=seen,
            played=played,
            from_pond=from_pond,
            size_p=size_p,
        )

    def _table_moves(
        self, g: GameState, m: SimpleNamespace, played: jax.Array, from_pond: jax.Array
    ) -> SimpleNamespace:
        """The swarms (create, add, Murray, Firefly and Robber Fly takes), the pond and the discard pile."""
        n, s, ps = self.seats, self.max_swarms, self.pond_size
        i, p, seats, combo = m.i, m.p, m.seats, m.combo
        add_slot, add_card = i // NUM_INSECTS, i % NUM_INSECTS
        swarm_counts = (g.swarms.sum(-1) > 0).sum(-1)
        owner = jnp.where(m.create | m.add, p, jnp.where(m.murray, m.picked_owner, g.chosen_owner))
        slot = jnp.where(
            m.create,
            swarm_counts[p],
            jnp.where(m.add, add_slot, jnp.where(m.murray, m.picked_slot, g.chosen_slot)),
        )
        cell = (seats == owner)[:, None] & (jnp.arange(s) == slot)[None, :]
        change = _where(m.create, combo[:NUM_INSECTS]) + _where(m.add, _onehot(add_card, NUM_INSECTS))
        change = change - _where(m.swarm_take, _onehot(i, NUM_INSECTS))
        swarms = g.swarms + cell[:, :, None] * change
        destroyed = g.swarms[jnp.clip(owner, 0, n - 1), jnp.clip(slot, 0, s - 1)]
        emptied = swarms[jnp.clip(owner, 0, n - 1), jnp.clip(slot, 0, s - 1)].sum() == 0
        removed = m.murray | (m.swarm_take & emptied)
        shifted = jnp.concatenate([swarms[:, 1:], jnp.zeros_like(swarms[:, :1])], axis=1)
        closing = (seats == owner)[:, None] & (jnp.arange(s) >= slot)[None, :] & removed
        swarms = jnp.where(closing[:, :, None], shifted, swarms)
        tadpoles = g.tadpoles + (m.murray & (seats == m.picked_owner))

        # ---- the pond and the discard pile ----
        pond = (
            g.pond
            - _where(m.swap | m.dragonfly, _onehot(from_pond, NUM_INSECTS))
            + _where(m.swap, _onehot(i // ps, NUM_INSECTS))
        )
        reset_pond = m.wasp | (m.murray & g.murray_resets_pond)
        discard = (
            g.discard
            + _pad(_where(m.go_out | m.ability | m.fly_draw | m.discard_down, played), PILE_KINDS)
            + _pad(_where(m.robber_take, _onehot(i, NUM_INSECTS)), PILE_KINDS)
            + _where(m.murray, _pad(destroyed, PILE_KINDS) + _onehot(MURRAY, PILE_KINDS))
            + _where(reset_pond, _pad(pond, PILE_KINDS))
        )
        pond = _where(~reset_pond, pond)
        return SimpleNamespace(
            swarms=swarms, tadpoles=tadpoles, pond=pond, discard=discard, reset_pond=reset_pond
        )

    def _next_decision(
        self, g: GameState, m: SimpleNamespace, swarms: jax.Array, size_p: jax.Array
    ) -> tuple[jax.Array, jax.Array]:
        """The decision that follows the action, and the Robber Fly's discards left."""
        i = m.i
        robber_goes_on = m.robber_take & (g.robber_left > 1) & self._fly_swarm(swarms).any()
        decision = m.kind
        decision = jnp.where(
            m.ability, self._ability_decision[jnp.clip(i, 0, len(ABILITY_CARDS) - 1)], decision
        )
        for asked, nxt in (
            (m.murray | m.deer | m.hornet_take | m.dragonfly | m.firefly_take, Decision.TURN),
            (m.hornet_player, Decision.HORNET_TAKE),
            (m.firefly_swarm, Decision.FIREFLY_TAKE),
            (m.robber_swarm, Decision.ROBBER_TAKE),
            (m.robber_take, Decision.TURN),
            (robber_goes_on, Decision.ROBBER_SWARM),
            (m.pass_ & (size_p > self.hand_limit), Decision.DISCARD),
        ):
            decision = jnp.where(asked, int(nxt), decision)
        robber_left = jnp.where(m.ability & (m.ability_card == ROBBER_FLY), 2, g.robber_left)
        robber_left = jnp.where(m.robber_take, jnp.where(robber_goes_on, g.robber_left - 1, 0), robber_left)
        return decision, robber_left

    def _next_turn(self, g: GameState, moving: jax.Array) -> GameState:
        """`MurrayGame._next_turn` where `moving`: the next seat's turn begins, or the cap truncates."""
        n = self.seats
        player = jnp.where(moving, (g.player + 1) % n, g.player)
        turn = g.turn + moving
        capped = moving & (turn > self.max_turns)
        begins = moving & ~capped
        hawk_draws = jnp.where(begins & (jnp.arange(n) == player), 0, g.hawk_draws)
        single = begins & (g.hands[player].sum() == 1)
        hawk_draws = jnp.where(single, 0, hawk_draws)
        keep = ~begins
        return g.replace(
            player=player,
            turn=turn,
            truncated=g.truncated | capped,
            decision=jnp.where(begins, int(Decision.TURN), g.decision),
            draws_left=jnp.where(begins, self.draw_count, g.draws_left),
            murray_this_turn=g.murray_this_turn & keep,
            may_go_out=g.may_go_out & keep,
            swapped=g.swapped & keep,
            fly_drawn=g.fly_drawn & keep,
            passed=g.passed & keep,
            hawk_draws=hawk_draws,
        )

    def _draw(self, g: GameState, fly_left: jax.Array, words: jax.Array) -> tuple[GameState, jax.Array]:
        """Resolve pending draws until a decision (`MurrayGame._run`, and a common-fly draw's two).

        A common-fly draw's cards come first (a Murray among them is discarded, not replaced), then
        the pond refill, then the turn's draws. Returns the game and whether a card came from an
        unordered deck (fresh chance).
        """
        n, ps = self.seats, self.pond_size
        p = g.player
        me = jnp.arange(n) == p
        has_swarm = g.swarms.sum() > 0
        live = ~g.terminal & ~g.truncated

        def pending(c) -> jax.Array:
            return (c["fly_left"] > 0) | (c["filling"] & (c["pond"].sum() < ps)) | (c["draws_left"] > 0)

        def cond(c) -> jax.Array:
            return live & ~c["stop"] & pending(c)

        def body(c):
            return self._draw_one(g, words, me, has_swarm, c)

        names = (
            "hands", "deck_counts", "discard", "hawk_in", "pond", "hawk_seen", "hawk_draws", "filling",
            "draws_left", "murray_this_turn", "may_go_out", "decision", "murray_resets_pond", "terminal",
            "reshuffled",
        )  # fmt: skip
        carry = {name: getattr(g, name) for name in names}
        no = jnp.zeros((), bool)
        carry.update(ordered=g.deck_ordered, fly_left=fly_left, stop=no, lazy=no, word=jnp.zeros((), I32))
        c = jax.lax.while_loop(cond, body, carry)
        c["filling"] = c["filling"] & (c["pond"].sum() < ps)  # a full pond ends the refill
        return g.replace(deck_ordered=c["ordered"], **{name: c[name] for name in names}), c["lazy"]

    def _draw_one(self, g: GameState, words: jax.Array, me: jax.Array, has_swarm: jax.Array, c: dict) -> dict:
        """One card of `_draw`'s loop: from a common-fly draw, the pond refill or the turn's draws."""
        ps = self.pond_size
        c = dict(c)
        fly = c["fly_left"] > 0
        fill = ~fly & c["filling"] & (c["pond"].sum() < ps)
        draw = ~fly & ~fill
        empty = c["deck_counts"].sum() == 0
        over = empty & c["hawk_in"]  # no card left to draw: the game ends
        reshuffle = empty & ~c["hawk_in"]  # the discard pile, the Hawk in it, becomes the deck
        deck_counts = jnp.where(reshuffle, c["discard"], c["deck_counts"])
        discard = jnp.where(reshuffle, 0, c["discard"])
        hawk_in = c["hawk_in"] | reshuffle
        ordered = c["ordered"] & ~reshuffle
        left = deck_counts.sum()
        top = g.deck[jnp.clip(left - 1, 0, self.total_cards - 1)]
        pick = words[jnp.minimum(c["word"], self._words - 2)] % jnp.maximum(left, 1).astype(jnp.uint32)
        card = jnp.where(ordered, top, _nth(deck_counts, pick.astype(I32)))
        got = ~over
        deck_counts = deck_counts - _where(got, _onehot(card, PILE_KINDS))
        is_murray, is_hawk = got & (card == MURRAY), got & (card == HAWK)
        face_down = got & ~is_murray & (fly | draw)  # an insect or the Hawk into the hand
        ask = is_murray & has_swarm & ~fly  # Murray's target is the turn player's next decision
        murray_out = is_murray & (fly | ~has_swarm)  # discarded (from a common-fly draw: not replaced)
        hawk_pond = fill & is_hawk  # the Hawk entered the pond: the game ends
        c["hands"] = c["hands"] + (me & face_down)[:, None] * _onehot(card, HAND_KINDS)
        c["hawk_seen"] = c["hawk_seen"] | (me & face_down & is_hawk)
        unseen = face_down & hawk_in & ~g.hawk_known
        c["hawk_draws"] = c["hawk_draws"] + (~me & unseen)
        c["discard"] = (
            discard
            + _where(murray_out, _onehot(MURRAY, PILE_KINDS))
            + _where(hawk_pond, _onehot(HAWK, PILE_KINDS))
        )
        c["pond"] = c["pond"] + _where(fill & got & ~is_murray & ~is_hawk, _onehot(card, NUM_INSECTS))
        murray_this_turn = c["murray_this_turn"] | (draw & is_murray)
        draws_left = c["draws_left"] - (draw & (face_down | ask))
        c["may_go_out"] = jnp.where(draw & face_down & (draws_left == 0), ~murray_this_turn, c["may_go_out"])
        c["may_go_out"] = c["may_go_out"] & ~ask
        c["murray_this_turn"], c["draws_left"] = murray_this_turn, draws_left
        c["decision"] = jnp.where(ask, int(Decision.MURRAY), c["decision"])
        c["murray_resets_pond"] = jnp.where(ask, draw, c["murray_resets_pond"])
        c["fly_left"] = c["fly_left"] - fly
        c["terminal"] = c["terminal"] | over | hawk_pond
        c["stop"] = over | hawk_pond | ask
        c["deck_counts"], c["hawk_in"], c["ordered"] = deck_counts, hawk_in, ordered
        c["reshuffled"] = c["reshuffled"] | reshuffle
        c["lazy"] = c["lazy"] | (got & ~ordered)
        c["word"] = c["word"] + 1
        return c

    # ----- what the env asks ----------------------------------------------------------------------
    def _fly_swarm(self, swarms: jax.Array) -> jax.Array:
        """(n, max_swarms) bool: the swarm holds a fly (the Robber Fly's targets)."""
        return (swarms * self._fly_types).sum(-1) > 0

    def legal_mask(self, game: GameState) -> jax.Array:
        """`MurrayGame.legal_mask` as bools, block by block in the layout's order."""
        g = self._widen(game)
        n, s, ps = self.seats, self.max_swarms, self.pond_size
        p, kind = g.player, g.decision
        hand = g.hands[p]
        sizes = g.hands.sum(1)
        size, hawk = sizes[p], hand[HAWK] > 0
        held = hand[:NUM_INSECTS] > 0
        turn = kind == int(Decision.TURN)
        in_pond = jnp.arange(ps) < g.pond.sum()
        exists = g.swarms.sum(-1) > 0  # (n, s): slots fill from 0
        fly_swarm = self._fly_swarm(g.swarms)
        relative = (p + jnp.arange(n)) % n
        # The hand never empties, and a Hawk holder keeps a card beside it to pass it.
        spare = jnp.where(hawk, size - 2, size - 1)
        spend = turn & (size >= 2) & (spare > 0)
        swarm_value = (self._value[:NUM_INSECTS] * (g.swarms[p] > 0)).max(-1)  # (s,) 0 when empty
        targets = (sizes >= 2).sum() >= 2  # a Deer Fly or Hornet needs another seat holding two
        ability = jnp.stack(
            [
                (hand[DEER_FLY] > 0) & targets,
                (hand[DRAGONFLY] > 0),
                (hand[FIREFLY] > 0) & exists.any(),
                (hand[ROBBER_FLY] > 0) & fly_swarm.any(),
                hand[PAPER_WASP] > 0,
                (hand[HORNET] > 0) & targets,
            ]
        )
        chosen = g.swarms[jnp.clip(g.chosen_owner, 0, n - 1), jnp.clip(g.chosen_slot, 0, s - 1)] > 0
        looked_at = g.hands[jnp.clip(g.target, 0, n - 1), :NUM_INSECTS] > 0
        take = (
            (kind == int(Decision.FIREFLY_TAKE)) & chosen
            | (kind == int(Decision.ROBBER_TAKE)) & chosen & self._fly_types
            | (kind == int(Decision.HORNET_TAKE)) & looked_at
        )
        blocks = {
            "go_out": (turn & g.may_go_out & hawk)[None],
            "create": spend & (spare >= 3) & (exists[p].sum() < s) & (hand >= self._combos).all(1),
            "add": (
                spend & held[None, :] & (self._value[None, :NUM_INSECTS] == swarm_value[:, None])
            ).ravel(),
            "ability": spend & ability,
            "swap": (turn & ~g.swapped & held[:, None] & in_pond[None, :]).ravel(),
            "fly_draw": spend & ~g.fly_drawn & held[: len(COMMON_FLIES)],
            "pass": turn
            & (size >= 2)
            & jnp.where(hawk, jnp.arange(HAND_KINDS) == HAWK, _pad(held, HAND_KINDS)),
            "end_turn": (turn & (size < 2))[None],
            "murray": ((kind == int(Decision.MURRAY)) & exists[relative]).ravel(),
            "swarm": (
                (kind == int(Decision.FIREFLY_SWARM)) & exists[relative]
                | (kind == int(Decision.ROBBER_SWARM)) & fly_swarm[relative]
            ).ravel(),
            "player": (
                ((kind == int(Decision.DEER_FLY)) | (kind == int(Decision.HORNET_PLAYER)))
                & (sizes[relative[1:]] >= 2)
            ),
            "pond": (kind == int(Decision.DRAGONFLY)) & in_pond,
            "take": take,
            "discard": (kind == int(Decision.DISCARD)) & held,
        }
        return jnp.concatenate([blocks[block.name].astype(bool) for block in self.layout.blocks])

    def observe(self, game: GameState, player: jax.Array) -> jax.Array:
        """`MurrayObserver.encode`: raw counts in the observer's piece order times its scale vector."""
        g = self._widen(game)
        n, s, ps = self.seats, self.max_swarms, self.pond_size
        relative = (player + jnp.arange(n)) % n
        hand = g.hands[player]
        kind = g.decision
        mine = g.player == player
        status = jnp.where(
            ~g.hawk_in,
            HawkStatus.DISCARD_PILE,
            jnp.where(
                hand[HAWK] > 0,
                HawkStatus.IN_MY_HAND,
                jnp.where(g.hawk_seen[player], HawkStatus.LEFT_THE_DECK, HawkStatus.UNSEEN),
            ),
        )
        in_pond = jnp.arange(ps) < g.pond.sum()
        pond_cards = (_cumsum(g.pond)[None, :] <= jnp.arange(ps)[:, None]).sum(1)
        looking = jnp.where((kind == int(Decision.HORNET_TAKE)) & mine, g.target, -1)
        others = relative[1:]
        seen = jnp.where((others == looking)[:, None], g.hands[others], g.seen[player, others])
        chosen = jnp.where(
            g.chosen_owner >= 0, ((g.chosen_owner - player) % n) * s + g.chosen_slot, -1
        )  # fmt: skip
        pieces = {
            "decision": _onehot(kind, len(Decision)),
            "actor": _onehot((g.player - player) % n, n),
            "my_hand": hand,
            "hand_sizes": g.hands.sum(1)[relative],
            "swarms": g.swarms[relative].ravel(),
            "tadpoles": g.tadpoles[relative],
            "pond": ((pond_cards[:, None] == jnp.arange(NUM_INSECTS)) & in_pond[:, None]).ravel(),
            "discard_pile": g.discard,
            "deck_size": g.deck_counts.sum()[None],
            "murrays_in_deck": (self.murray_count - g.discard[MURRAY] - (kind == int(Decision.MURRAY)))[None],
            "hawk": _onehot(status, 4),
            "hawk_draws": jnp.where(status == HawkStatus.UNSEEN, g.hawk_draws[player], 0)[None],
            "turn_flags": mine & jnp.stack([g.swapped, g.fly_drawn, g.may_go_out & (hand[HAWK] > 0)]),
            "last_passed": _onehot(g.last_passed[player], HAND_KINDS),
            "last_received": _onehot(g.last_received[player], HAND_KINDS),
            "seen_hands": seen.ravel(),
            "table_seen": g.shown[relative].ravel(),
            "target_player": _onehot(jnp.where(g.target >= 0, (g.target - player) % n, -1), n),
            "chosen_swarm": _onehot(chosen, n * s),
            "robber_left": g.robber_left[None],
            "turn_progress": jnp.minimum(g.turn, self.max_turns)[None],
        }
        return self.assemble(pieces) * self._scale

    def current_player(self, game: GameState) -> jax.Array:
        """The turn player: every decision, Murray's target included, is theirs."""
        return game.player

    def terminal(self, game: GameState) -> jax.Array:
        """True once the game ended by its rules (going out, the Hawk in the pond, no card left)."""
        return game.terminal

    def truncated(self, game: GameState) -> jax.Array:
        """True once the turn cap cut the game off."""
        return game.truncated

    def scores(self, game: GameState) -> jax.Array:
        """Every seat's score if the game ended now (`rules.score_breakdown`'s total)."""
        g = self._widen(game)
        size = g.swarms.sum(-1)
        bonus = jnp.where(size >= self.big_swarm, self.big_swarm_points, 0)
        bonus = bonus + jnp.where((size > 0) & (g.swarms.max(-1) == size), self.perfect_swarm_points, 0)
        cards = (g.swarms * self._value[:NUM_INSECTS]).sum((1, 2))
        penalty = (g.hands * self._value[:HAND_KINDS]).sum(1)
        return bonus.sum(1) + g.tadpoles * (g.tadpoles + 1) + cards - penalty

    def returns(self, game: GameState) -> jax.Array:
        """The win reward of the highest scores (or score differences / 20); 0 when truncated."""
        rewards = final_rewards(self.scores(game), self.options.reward_mode, 20)
        return jnp.where(game.truncated, jnp.zeros_like(rewards), rewards)

    # ----- the reference's states -----------------------------------------------------------------
    def from_reference(self, game) -> GameState:
        """The GameState of a reference `MurrayGame` (its deck order kept)."""
        n, s = self.seats, self.max_swarms
        deck = np.zeros(self.total_cards, np.int32)
        deck[: len(game.deck)] = [int(c) for c in game.deck]
        swarms = np.zeros((n, s, NUM_INSECTS), np.int32)
        for q, owned in enumerate(game.swarms):
            for k, swarm in enumerate(owned):
                swarms[q, k] = swarm
        seen = np.zeros((n, n, HAND_KINDS), np.int32)
        for q, row in enumerate(game.seen):
            for r, hand in enumerate(row):
                if hand is not None:
                    seen[q, r] = hand
        i32, small = np.int32, np.dtype(self.small)
        return GameState(
            hands=as_array(game.hands, small),
            deck=as_array(deck, small),
            deck_counts=as_array(np.bincount(np.asarray(game.deck, np.int64), minlength=PILE_KINDS), small),
            deck_ordered=as_array(True, bool),
            pond=as_array(np.bincount(np.asarray(game.pond, np.int64), minlength=NUM_INSECTS), small),
            discard=as_array(game.discard, small),
            hawk_in=as_array(game.hawk_in, bool),
            swarms=as_array(swarms, small),
            tadpoles=as_array(game.tadpoles, i32),
            hawk_seen=as_array(game.hawk_seen, bool),
            hawk_known=as_array(game.start[2] >= 0, bool),
            hawk_draws=as_array(game.hawk_draws, i32),
            last_passed=as_array(game.last_passed, i32),
            last_received=as_array(game.last_received, i32),
            seen=as_array(seen, small),
            shown=as_array(game.shown, small),
            player=as_array(game.player, i32),
            turn=as_array(game.turn, i32),
            decision=as_array(int(game.decision_kind), i32),
            draws_left=as_array(game.draws_left, i32),
            filling=as_array(game.filling, bool),
            murray_resets_pond=as_array(game.murray_resets_pond, bool),
            murray_this_turn=as_array(game.murray_this_turn, bool),
            may_go_out=as_array(game.may_go_out, bool),
            swapped=as_array(game.swapped, bool),
            fly_drawn=as_array(game.fly_drawn, bool),
            passed=as_array(game.passed, bool),
            target=as_array(game.target, i32),
            chosen_owner=as_array(game.chosen[0], i32),
            chosen_slot=as_array(game.chosen[1], i32),
            robber_left=as_array(game.robber_left, i32),
            terminal=as_array(game.terminal, bool),
            truncated=as_array(game.truncated, bool),
            reshuffled=as_array(any(_RESHUFFLE_NOTE in line for line in game.log), bool),
        )

    def picture_game(self, game: GameState):
        """A `MurrayGame` holding this state's table, for drawing it (`State.save_svg`): hands,
        swarms, pond, piles and the decision as they are; a deck the twin shuffled holds its cards in
        type order (its order is not drawn), no log, and an ended game's reason said generically
        (the twin keeps no reason)."""
        from fowlplay.envs.murray.rules import MurrayGame

        g = {name: np.asarray(value).astype(np.int64) for name, value in vars(game).items()}
        reference = MurrayGame(self.options, np.random.default_rng(0))
        reference.hands = g["hands"].tolist()
        reference.hand_sizes = g["hands"].sum(1).tolist()
        size = int(g["deck_counts"].sum())
        if g["deck_ordered"]:
            cards = g["deck"][:size].tolist()
        else:
            cards = [kind for kind, count in enumerate(g["deck_counts"]) for _ in range(int(count))]
        reference.deck = cards
        reference.pond = [kind for kind, count in enumerate(g["pond"]) for _ in range(int(count))]
        reference.discard = g["discard"].tolist()
        reference.swarms = [[row.tolist() for row in seat if row.sum()] for seat in g["swarms"]]
        reference.seen = [[row.tolist() if row.any() else None for row in seat] for seat in g["seen"]]
        for name in ("tadpoles", "hawk_draws", "last_passed", "last_received", "shown"):
            setattr(reference, name, g[name].tolist())
        reference.hawk_seen = [bool(x) for x in g["hawk_seen"]]
        for name in ("player", "turn", "draws_left", "target", "robber_left"):
            setattr(reference, name, int(g[name]))
        for name in ("hawk_in", "filling", "murray_resets_pond", "murray_this_turn", "may_go_out"):
            setattr(reference, name, bool(g[name]))
        for name in ("swapped", "fly_drawn", "passed"):
            setattr(reference, name, bool(g[name]))
        reference.decision_kind = Decision(int(g["decision"]))
        reference.chosen = (int(g["chosen_owner"]), int(g["chosen_slot"]))
        reference._terminal, reference._truncated = bool(g["terminal"]), bool(g["truncated"])
        reference.end_reason = "ended by the rules" if reference._terminal else ""
        reference._notes = []
        return reference

    def public(self, game: GameState) -> dict[str, jax.Array]:
        """What a chance step must leave as the reference does.

        Always: the turn player and turn, the decision's target and chosen swarm, the Robber Fly's
        count, every swarm and tadpole, whether the Hawk is shuffled in, the turn's swap / fly-draw
        / pass flags, the cards last passed and received, the Hornet looks, the truncation flag and
        whether the step reshuffled. A Deer Fly's random card changes nothing more than the two
        hands (and what the table saw go into them), so on a step that did not reshuffle also: every
        hand size, the pond, the discard pile, the deck size, the decision, the turn's draws and
        Murray flags, the unseen-Hawk draw counts and the end of the game. After a reshuffle the
        draws that follow it depend on the new order, so those are left out.
        """
        g = self._widen(game)
        fixed = {
            "player": g.player,
            "turn": g.turn,
            "target": g.target,
            "chosen": jnp.stack([g.chosen_owner, g.chosen_slot]),
            "robber_left": g.robber_left,
            "swarms": g.swarms,
            "tadpoles": g.tadpoles,
            "hawk_in": g.hawk_in,
            "flags": jnp.stack([g.swapped, g.fly_drawn, g.passed]),
            "last_passed": g.last_passed,
            "last_received": g.last_received,
            "seen": g.seen,
            "truncated": g.truncated,
            "reshuffled": g.reshuffled,
        }
        drawn = {
            "hand_sizes": g.hands.sum(1),
            "pond": g.pond,
            "discard": g.discard,
            "deck_size": g.deck_counts.sum(),
            "decision": g.decision,
            "draws": jnp.stack(
                [g.draws_left, g.filling, g.murray_this_turn, g.may_go_out, g.murray_resets_pond]
            ),
            "hawk_draws": g.hawk_draws,
            "terminal": g.terminal,
        }
        drawn = {name: jnp.where(g.reshuffled, jnp.zeros_like(value), value) for name, value in drawn.items()}
        return {**fixed, **drawn}
