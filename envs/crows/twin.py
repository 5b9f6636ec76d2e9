"""Murder, She Crows' batched twin: the rules of `envs/crows/rules.py` as pure JAX functions.

`fowlplay.envs.make_jax("murder_she_crows_v1", **options)` wraps `Twin` in the shared `TwinEnv`
(Pgx's API). The reference engine decides what the rules are; the alignment suite
(`tests/envs/test_twin_crows.py`) holds this file equal to it, observation for observation.

How the state is held, so that one step costs a few hundred vector operations under `vmap`:
- A RUN is a stretch of consecutive values, kept as a bit mask (bit v set: value v is in it); a
  SET as its value and size. A card fits a RUN where `(run << 1 | run >> 1) & ~run` has its bit.
- The turn player's provisional RUN cards are a bit mask too, their provisional SET cards a count.
- The discard pile, the deck's composition, the revealed and the available cards are counts per
  value; the claimers still to ask after a bust are "seats k, k+1, ... to the turn player's right".

Chance: the deck. A deck converted from the reference (`from_reference`) keeps the reference's
order (`ordered`, cards in `deck`, top last) and is popped exactly as the reference pops it. A deck
the twin deals or reshuffles itself is held as its composition and a 32-bit `seed` hashed from the
step's key (`key_words`): the card at deck size m is the r-th card of the composition in value
order, r = floor(h * m / 2**32) with h = fmix32(seed ^ m * 0x9E3779B9) (MurmurHash3's finaliser).
For one seed that fixes the whole order at the deal or reshuffle (the order is only read lazily,
one card per draw), and drawing uniformly among the cards left at each draw is exactly a uniform
shuffle, as the reference's `rng.permutation` draws; the chi-square tests check it. So no step
sorts a deck: a reshuffle costs what a draw costs, which matters because under `vmap` every step
pays for every branch. `step` reports chance exactly when it reshuffled the discard pile (at a
reveal or at either draw of the next turn's opening two cards); `public` then names what that
chance cannot change (see its docstring).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from fowlplay.envs.core.twin import (
    TwinRules,
    as_array,
    below,
    exact_ratio,
    final_rewards,
    fmix32,
    key_words,
    pytree_dataclass,
)
from fowlplay.envs.crows.rules import Decision, Pile

_KEEP, _PRESS, _PLACE, _COIN, _CLAIM = (int(d) for d in Decision)
_RUN, _SET = int(Pile.RUN), int(Pile.SET)

#: What each action block does: (effect, pile, whether its ids name a card value).
_EFFECTS = (
    "keep",
    "discard_both",
    "reveal",
    "stop",
    "place",
    "score",
    "toss",
    "coin",
    "skip",
    "claim",
    "pass",
)
_BLOCKS = {
    "keep_run": ("keep", _RUN, True),
    "keep_set": ("keep", _SET, True),
    "discard_both": ("discard_both", _RUN, False),
    "reveal": ("reveal", _RUN, False),
    "stop": ("stop", _RUN, False),
    "place_run": ("place", _RUN, False),
    "place_set": ("place", _SET, False),
    "score_run": ("score", _RUN, False),
    "score_set": ("score", _SET, False),
    "discard_run": ("toss", _RUN, False),
    "discard_set": ("toss", _SET, False),
    "coin_run": ("coin", _RUN, True),
    "coin_set": ("coin", _SET, True),
    "coin_skip": ("skip", _RUN, False),
    "claim_run": ("claim", _RUN, True),
    "claim_set": ("claim", _SET, True),
    "claim_pass": ("pass", _RUN, False),
}


@pytree_dataclass
class GameState:
    """One game of Murder, She Crows; values 1..max_value index per-value arrays at value - 1."""

    deck: jax.Array  # int8 [deck_size]: a converted deck's order, top at deck_len - 1 (while `ordered`)
    ordered: jax.Array  # bool: the deck follows `deck`; else it is the order `seed` fixes
    seed: jax.Array  # uint32: the order of a deck the twin dealt or reshuffled
    deck_len: jax.Array  # int32 cards in the deck
    deck_counts: jax.Array  # int32 [V] cards of each value in the deck
    discard: jax.Array  # int32 [V] the discard pile
    run: jax.Array  # int32 [n] each seat's RUN as a bit mask (bit v: value v)
    set_value: jax.Array  # int32 [n] each seat's SET value (0 when empty)
    set_size: jax.Array  # int32 [n]
    track: jax.Array  # int32 [n]
    turn_player: jax.Array  # int32
    to_act: jax.Array  # int32
    phase: jax.Array  # int32 `Decision` (PRESS with coins pending is a COIN decision)
    prov_run: jax.Array  # int32 bit mask of the turn player's provisional RUN cards
    prov_set: jax.Array  # int32 provisional cards on top of the turn player's SET
    coins: jax.Array  # int32 coins the turn player still has to use
    pile_discards: jax.Array  # int32 piles the turn player discarded this turn
    revealed: jax.Array  # int32 [V] the turn's opening cards awaiting `keep`
    pending: jax.Array  # int32 the revealed card awaiting a pile (0 = none)
    available: jax.Array  # int32 [V] a busted player's cards open to claims
    next_claim: jax.Array  # int32 k: the next seat asked is turn_player - k (n once nobody is left)
    turns: jax.Array  # int32
    decisions: jax.Array  # int32
    reshuffles: jax.Array  # int32
    terminal: jax.Array  # bool: ended by its rules (or by a cap with cap_ending="standings")
    truncated: jax.Array  # bool: cut off by a cap with cap_ending="draw"


class _Act(NamedTuple):
    """An action read through the layout (`Twin._act`): one effect flag set, its pile and card."""

    keep: jax.Array  # bool: keep a revealed opening card
    discard_both: jax.Array  # bool: discard both opening cards
    reveal: jax.Array  # bool: reveal the deck's top card
    stop: jax.Array  # bool: end the turn
    place: jax.Array  # bool: place the card that fits both piles
    score: jax.Array  # bool: score a pile
    toss: jax.Array  # bool: discard a pile
    coin: jax.Array  # bool: take a card from the discard pile for a coin
    skip: jax.Array  # bool: use a coin on nothing
    claim: jax.Array  # bool: claim an available card
    claim_pass: jax.Array  # bool: claim nothing
    opening: jax.Array  # bool: keep or discard_both (the turn's opening cards settled)
    to_run: jax.Array  # bool: the action's pile is the RUN
    to_set: jax.Array  # bool: the action's pile is the SET
    card: jax.Array  # int32 the card value it names (0 none)
    card_hot: jax.Array  # int32 [V] `card` one-hot


def _ratio(denominator: int, high: int) -> Any:
    """float32 k / denominator for ints k in 0..high, rounded as the reference's float64 quotient."""
    return lambda k: exact_ratio(k, denominator, 0, high)


def _products(factor: float, high: int) -> Any:
    """float32 of the float64 k * factor for ints k in 0..high (how the reference scales counts)."""
    table = jnp.asarray(np.array([k * factor for k in range(high + 1)], dtype=np.float32))
    return lambda k: table[jnp.clip(k, 0, high)]


def _float32_sums(step: float, count: int) -> Any:
    """`x += step` repeated on a float32 numpy array, as the reference observer adds up `available`."""
    vector = np.zeros(1, dtype=np.float32)
    sums = [0.0]
    for _ in range(count):
        vector[0] += step  # the reference's own operation (float32 arithmetic on a numpy view)
        sums.append(float(vector[0]))
    table = jnp.asarray(np.array(sums, dtype=np.float32))
    return lambda k: table[jnp.clip(k, 0, count)]


class Twin(TwinRules):
    """Murder, She Crows for one option set, every player count (2-5) and rule option."""

    def __init__(self, options: Any, observer: Any, layout: Any) -> None:
        super().__init__(options, observer, layout)
        o = options
        self.n, self.v = o.num_players, o.max_value
        v = self.v
        self.deck_size = d = o.deck_size
        if d >= 1 << 16:
            raise ValueError(
                f"the JAX twin deals at most 65535 cards; got {d} (max_value x copies_per_value)"
            )
        self.copies = o.copies_per_value
        self.values = jnp.arange(1, v + 1, dtype=jnp.int32)
        self.full_bits = sum(1 << c for c in range(1, v + 1))
        self.coin_spaces = jnp.asarray(np.array(sorted(o.coin_spaces), dtype=np.int32).reshape(-1))
        self._tables(o)
        # The action layout, read block by block: each id's effect, pile and card value.
        effect, pile, card = (np.zeros(layout.size, np.int32) for _ in range(3))
        for block in layout.blocks:
            if block.name not in _BLOCKS:
                raise ValueError(f"the twin does not know the action block {block.name!r}")
            what, which, carries_card = _BLOCKS[block.name]
            ids = slice(block.start, block.stop)
            effect[ids], pile[ids] = _EFFECTS.index(what), which
            card[ids] = np.arange(1, block.size + 1) if carries_card else 0
        self._code = jnp.asarray(effect | pile << 4 | card << 5)
        self._order = sorted(observer.pieces, key=lambda piece: self.piece(piece.name).start)

    def _tables(self, o: Any) -> None:
        """Every observation number as the reference computes it, rounded as it rounds."""
        d, copies = self.deck_size, self.copies
        self.count_value = _products(1.0 / copies, d + 1)  # `_count_row`, `_write_counts`: count * (1/copies)
        self.size_value = _ratio(copies, d + 1)  # len(cards) / copies
        self.available_value = _float32_sums(1.0 / copies, d + 1)
        self.deck_value = _ratio(d, d)
        self.track_value = _ratio(o.track_length, o.track_length)
        self.coins_value = _ratio(max(len(o.coin_spaces), 1), len(o.coin_spaces))
        per_turn = max(o.pile_discards_per_turn, 1)
        self.discards_left = lambda k: exact_ratio(o.pile_discards_per_turn - k, per_turn, 0, per_turn)
        self.turn_value = _ratio(o.max_turns, o.max_turns)
        self.decision_value = _ratio(o.max_decisions, o.max_decisions)

    # ----- small pieces -----------------------------------------------------------------------
    def _bits(self, mask: jax.Array) -> jax.Array:
        """Per value 1..V, 1 where the bit mask holds it (int32; a leading axis is kept)."""
        return (mask[..., None] >> self.values) & 1

    def _value_bits(self, counts: jax.Array) -> jax.Array:
        """The bit mask of the values with a non-zero count."""
        return ((counts > 0).astype(jnp.int32) << self.values).sum(-1)

    def _run_fits(self, run: jax.Array) -> jax.Array:
        """Bit mask of the values a RUN takes: any when empty, else one past either end."""
        return jnp.where(run == 0, self.full_bits, ((run << 1) | (run >> 1)) & ~run)

    def _set_fits(self, set_value: jax.Array, set_size: jax.Array) -> jax.Array:
        """Bit mask of the values a SET takes: any when empty, else its own value."""
        return jnp.where(set_size == 0, self.full_bits, jnp.left_shift(1, set_value))

    def _one_hot(self, card: jax.Array) -> jax.Array:
        """int32 [V] with a 1 at `card` (nothing for card 0)."""
        return (self.values == card).astype(jnp.int32)

    def _kind(self, g: GameState) -> jax.Array:
        """The decision asked for: a pending coin comes before the next reveal or stop."""
        return jnp.where((g.phase == _PRESS) & (g.coins > 0), _COIN, g.phase)

    def _draw(self, g: GameState, do: jax.Array, seed: jax.Array) -> tuple[GameState, jax.Array, jax.Array]:
        """The top card if `do` (0 if none), the discard pile shuffled in first when the deck is empty
        (the new order fixed by `seed`): (state, card, reshuffled)."""
        total = g.discard.sum()
        reshuffle = do & (g.deck_len == 0) & (total > 0)
        counts = jnp.where(reshuffle, g.discard, g.deck_counts)
        size = jnp.where(reshuffle, total, g.deck_len)
        seed = jnp.where(reshuffle, seed, g.seed)
        ordered = g.ordered & ~reshuffle
        top = g.deck[jnp.clip(size - 1, 0, self.deck_size - 1)].astype(jnp.int32)
        r = below(fmix32(seed ^ (size.astype(jnp.uint32) * jnp.uint32(0x9E3779B9))), size)
        drawn = 1 + (jnp.cumsum(counts) <= r).sum()
        has = do & (size > 0)
        card = jnp.where(has, jnp.where(ordered, top, drawn), 0)
        g = g.replace(
            ordered=ordered,
            seed=seed,
            deck_len=size - has,
            deck_counts=counts - self._one_hot(card),
            discard=jnp.where(reshuffle, 0, g.discard),
            reshuffles=g.reshuffles + reshuffle,
        )
        return g, card, reshuffle

    def _start_turn(self, g: GameState, do: jax.Array, seat: jax.Array, seed: jax.Array):
        """If `do`: `seat`'s turn begins with two cards revealed: (state, reshuffled)."""
        g, first, shuffled_first = self._draw(g, do, seed)
        g, second, shuffled_second = self._draw(g, do, seed)
        revealed = self._one_hot(first) + self._one_hot(second)
        zero = jnp.zeros((), jnp.int32)
        g = g.replace(
            turn_player=jnp.where(do, seat, g.turn_player),
            to_act=jnp.where(do, seat, g.to_act),
            prov_run=jnp.where(do, zero, g.prov_run),
            prov_set=jnp.where(do, zero, g.prov_set),
            coins=jnp.where(do, zero, g.coins),
            pile_discards=jnp.where(do, zero, g.pile_discards),
            revealed=jnp.where(do, revealed, g.revealed),
            phase=jnp.where(do, jnp.where(first > 0, _KEEP, _PRESS), g.phase),
        )
        return g, shuffled_first | shuffled_second

    def _cap(self, g: GameState, capped: jax.Array) -> GameState:
        """House: a cap ends the game by the standings, or (cap_ending="draw") truncates it."""
        if self.options.cap_ending == "standings":  # an option: fixed when the twin is made
            return g.replace(terminal=g.terminal | capped)
        return g.replace(truncated=g.truncated | capped)

    # ----- TwinRules ---------------------------------------------------------------------------
    def init(self, key: jax.Array) -> GameState:
        """A new deal: a full deck in the order `key` fixes, and player_0's opening two cards."""
        n, v = self.n, self.v
        zero, zeros_n, zeros_v = jnp.zeros((), jnp.int32), jnp.zeros(n, jnp.int32), jnp.zeros(v, jnp.int32)
        g = GameState(
            deck=jnp.zeros(self.deck_size, jnp.int8),
            ordered=jnp.zeros((), bool),
            seed=key_words(key, 1)[0],
            deck_len=jnp.asarray(self.deck_size, jnp.int32),
            deck_counts=jnp.full(v, self.copies, jnp.int32),
            discard=zeros_v,
            run=zeros_n,
            set_value=zeros_n,
            set_size=zeros_n,
            track=zeros_n,
            turn_player=zero,
            to_act=zero,
            phase=jnp.asarray(_PRESS, jnp.int32),
            prov_run=zero,
            prov_set=zero,
            coins=zero,
            pile_discards=zero,
            revealed=zeros_v,
            pending=zero,
            available=zeros_v,
            next_claim=jnp.asarray(n, jnp.int32),
            turns=zero,
            decisions=zero,
            reshuffles=zero,
            terminal=jnp.zeros((), bool),
            truncated=jnp.zeros((), bool),
        )
        g, _ = self._start_turn(g, jnp.ones((), bool), zero, g.seed)
        return g

    def step(self, g: GameState, action: jax.Array, key: jax.Array) -> tuple[GameState, jax.Array]:
        """Apply a legal action, then the reveal, bust, claims, turn end and deal it sets off."""
        act = self._act(action)
        reveal_seed, turn_seed = key_words(key, 2)
        p = g.turn_player
        # What a revealed card fits: the turn player's piles as they were before this decision.
        fits = self._run_fits(g.run[p]), self._set_fits(g.set_value[p], g.set_size[p])
        g = self._own_effect(g, act)
        g, revealed_card, shuffled = self._draw(g, act.reveal, reveal_seed)
        g, bust = self._join_pile(g, act, revealed_card, fits)
        g = self._bust(g, bust, revealed_card)
        g, ended = self._claims(g, act, bust)
        g, shuffled_turn = self._end_turn(g, act.stop | ended, turn_seed)
        return g, shuffled | shuffled_turn

    def _act(self, action: jax.Array) -> _Act:
        """The action read through the layout's table: its effect, its pile and the card it names."""
        code = self._code[action]
        effect, pile, card = code & 15, (code >> 4) & 1, code >> 5
        keep, discard_both, reveal, stop, place, score, toss, coin, skip, claim, claim_pass = (
            effect == i for i in range(len(_EFFECTS))
        )
        return _Act(
            keep=keep,
            discard_both=discard_both,
            reveal=reveal,
            stop=stop,
            place=place,
            score=score,
            toss=toss,
            coin=coin,
            skip=skip,
            claim=claim,
            claim_pass=claim_pass,
            opening=keep | discard_both,
            to_run=pile == _RUN,
            to_set=pile == _SET,
            card=card,
            card_hot=self._one_hot(card),
        )

    def _own_effect(self, g: GameState, act: _Act) -> GameState:
        """The decision's own effect on the discard pile, the track and the turn's counters."""
        o, n = self.options, self.n
        p, seats = g.turn_player, jnp.arange(n)
        at_p = seats == p
        run_p, value_p, size_p = g.run[p], g.set_value[p], g.set_size[p]
        card_hot, to_run, to_set, score = act.card_hot, act.to_run, act.to_set, act.score
        pile_cards = jnp.where(to_run, self._bits(run_p), self._one_hot(value_p) * size_p)
        empties = score | act.toss
        steps = (jnp.sum(pile_cards * self.values) + o.points_step - 1) // o.points_step
        old = g.track[p]
        passed = ((self.coin_spaces > old) & (self.coin_spaces <= old + steps)).sum()
        discard = (
            g.discard
            + jnp.where(act.opening, g.revealed - card_hot * act.keep, 0)
            + jnp.where(empties, pile_cards, 0)
            - card_hot * act.coin
        )
        emptied_set = at_p & empties & to_set
        return g.replace(
            discard=discard,
            track=jnp.where(at_p & score, jnp.minimum(old + steps, o.track_length), g.track),
            coins=g.coins + jnp.where(score, passed, 0) - (act.coin | act.skip),
            run=jnp.where(at_p & empties & to_run, 0, g.run),
            set_value=jnp.where(emptied_set, 0, g.set_value),
            set_size=jnp.where(emptied_set, 0, g.set_size),
            prov_run=jnp.where(empties & to_run, 0, g.prov_run),
            prov_set=jnp.where(empties & to_set, 0, g.prov_set),
            revealed=jnp.where(act.opening, 0, g.revealed),
            pile_discards=g.pile_discards + act.toss,
        )

    def _join_pile(
        self, g: GameState, act: _Act, revealed_card: jax.Array, fits
    ) -> tuple[GameState, jax.Array]:
        """One card joins a pile: kept, placed, taken for a coin, claimed, or revealed into the one
        pile it fits; a revealed card that fits both waits for a choice: (state, busted)."""
        p, seats = g.turn_player, jnp.arange(self.n)
        reveal, place, claim = act.reveal, act.place, act.claim
        fits_run = (fits[0] >> revealed_card) & 1 == 1
        fits_set = (fits[1] >> revealed_card) & 1 == 1
        both = reveal & fits_run & fits_set
        bust = reveal & ~fits_run & ~fits_set
        lone = reveal & (fits_run ^ fits_set)
        adds = act.keep | place | act.coin | claim | lone
        added = jnp.where(place, g.pending, jnp.where(reveal, revealed_card, act.card))
        into_run = jnp.where(reveal, fits_run, act.to_run)
        who = jnp.where(claim, g.to_act, p)
        provisional = place | act.coin | lone
        bit = jnp.left_shift(1, added)
        at_who = (seats == who) & adds
        g = g.replace(
            run=jnp.where(at_who & into_run, g.run | bit, g.run),
            set_size=g.set_size + (at_who & ~into_run),
            set_value=jnp.where(at_who & ~into_run, added, g.set_value),
            prov_run=jnp.where(adds & provisional & into_run, g.prov_run | bit, g.prov_run),
            prov_set=g.prov_set + (adds & provisional & ~into_run),
            available=g.available - act.card_hot * claim,
            phase=jnp.where(both, _PLACE, jnp.where(act.opening | place, _PRESS, g.phase)),
            pending=jnp.where(both, revealed_card, jnp.where(place, 0, g.pending)),
        )
        return g, bust

    def _bust(self, g: GameState, bust: jax.Array, revealed_card: jax.Array) -> GameState:
        """A bust: the provisional cards and the busting card become available to claim."""
        p = g.turn_player
        at_p = jnp.arange(self.n) == p
        lost = jnp.where(bust, g.prov_set, 0)
        available = g.available + jnp.where(
            bust,
            self._bits(g.prov_run) + self._one_hot(g.set_value[p]) * lost + self._one_hot(revealed_card),
            0,
        )
        set_size = g.set_size - at_p * lost
        return g.replace(
            available=available,
            run=jnp.where(at_p & bust, g.run & ~g.prov_run, g.run),
            set_size=set_size,
            set_value=jnp.where(set_size == 0, 0, g.set_value),
            prov_run=jnp.where(bust, 0, g.prov_run),
            prov_set=g.prov_set - lost,
        )

    def _claims(self, g: GameState, act: _Act, bust: jax.Array) -> tuple[GameState, jax.Array]:
        """Claims, in reverse turn order from `next_claim` on: the first seat that can place an
        available card decides; with none left the cards go to the discard pile: (state, ended)."""
        n, p = self.n, g.turn_player
        run, set_value, set_size, available = g.run, g.set_value, g.set_size, g.available
        claims = bust | act.claim | act.claim_pass
        ks = jnp.arange(1, n)
        asked = (p - ks) % n
        fit = self._run_fits(run[asked]) | self._set_fits(set_value[asked], set_size[asked])
        first_k = jnp.where(bust, 1, g.next_claim)
        can = ((fit & self._value_bits(available)) != 0) & (ks >= first_k)
        found = claims & can.any()
        k = ks[jnp.argmax(can)]
        ended = claims & ~found
        g = g.replace(
            discard=g.discard + jnp.where(ended, available, 0),
            available=jnp.where(ended, 0, available),
            next_claim=jnp.where(found, k + 1, jnp.where(ended, n, g.next_claim)),
            to_act=jnp.where(found, (p - k) % n, g.to_act),
            phase=jnp.where(found, _CLAIM, g.phase),
        )
        return g, ended

    def _end_turn(self, g: GameState, end: jax.Array, seed: jax.Array) -> tuple[GameState, jax.Array]:
        """If `end`, the turn ends: the game with the round that reached the end of the track, or by
        the turn cap, else the next seat's turn starts; then the decision cap: (state, reshuffled)."""
        o, n = self.options, self.n
        turns = g.turns + end
        nxt = (g.turn_player + 1) % n
        finished = end & (nxt == 0) & (g.track.max() >= o.track_length)
        capped = end & ~finished & (turns >= o.max_turns)
        g = self._cap(g.replace(turns=turns, terminal=g.terminal | finished), capped)
        g, shuffled_turn = self._start_turn(g, end & ~finished & ~capped, nxt, seed)
        decisions = g.decisions + 1
        over = g.terminal | g.truncated
        g = self._cap(g.replace(decisions=decisions), ~over & (decisions >= o.max_decisions))
        return g, shuffled_turn

    def legal_mask(self, g: GameState) -> jax.Array:
        """Exact mask of the current decision, block by block in the layout's order."""
        o = self.options
        kind = self._kind(g)
        own = kind != _CLAIM
        p, a = g.turn_player, g.to_act
        run_p, value_p, size_p = g.run[p], g.set_value[p], g.set_size[p]
        may_toss = own & (g.pile_discards < o.pile_discards_per_turn)
        run_size = jax.lax.population_count(run_p)
        fits_run, fits_set = self._run_fits(run_p), self._set_fits(value_p, size_p)
        revealed = self._value_bits(g.revealed) * (kind == _KEEP)
        keep_run, keep_set = fits_run & revealed, fits_set & revealed
        coin_cards = self._value_bits(g.discard) * (kind == _COIN)
        claim_cards = self._value_bits(g.available) * (kind == _CLAIM)
        pending = jnp.left_shift(1, g.pending) * (kind == _PLACE)

        def cards(bits):
            return self._bits(bits) == 1

        def one(flag):
            return jnp.reshape(flag, (1,))

        blocks = {
            "keep_run": cards(keep_run),
            "keep_set": cards(keep_set),
            "discard_both": one((kind == _KEEP) & ((keep_run | keep_set) == 0)),
            "reveal": one((kind == _PRESS) & ((g.deck_len > 0) | (g.discard.sum() > 0))),
            "stop": one(kind == _PRESS),
            "place_run": one((fits_run & pending) != 0),
            "place_set": one((fits_set & pending) != 0),
            "score_run": one(own & (run_size >= o.min_murder)),
            "score_set": one(own & (size_p >= o.min_murder)),
            "discard_run": one(may_toss & (run_p != 0)),
            "discard_set": one(may_toss & (size_p > 0)),
            "coin_run": cards(fits_run & coin_cards),
            "coin_set": cards(fits_set & coin_cards),
            "coin_skip": one(kind == _COIN),
            "claim_run": cards(self._run_fits(g.run[a]) & claim_cards),
            "claim_set": cards(self._set_fits(g.set_value[a], g.set_size[a]) & claim_cards),
            "claim_pass": one(kind == _CLAIM),
        }
        return jnp.concatenate([blocks[block.name] for block in self.layout.blocks])

    def observe(self, g: GameState, player: jax.Array) -> jax.Array:
        """`player`'s observation, piece by piece as `CrowsObserver.fill` writes it."""
        n, v = self.n, self.v
        seats = (player + jnp.arange(n)) % n
        f32 = jnp.float32

        def seat(absolute):
            return (jnp.arange(n) == (absolute - player) % n).astype(f32)

        turn = g.turn_player
        size_value = self.size_value
        zero = jnp.zeros(1, f32)
        pieces = {
            "decision": (jnp.arange(len(Decision)) == self._kind(g)).astype(f32),
            "acting_seat": seat(g.to_act),
            "turn_seat": seat(turn),
            "last_seat": seat(n - 1),
            "run": self._bits(g.run[seats]).astype(f32).reshape(n * v),
            "set": (self._one_hot_rows(g.set_value[seats]) * size_value(g.set_size[seats])[:, None]).reshape(
                n * v
            ),
            "provisional_run": self._bits(g.prov_run).astype(f32),
            "provisional_set": self._one_hot(g.set_value[turn]).astype(f32) * size_value(g.prov_set),
            "revealed": g.revealed.astype(f32) * f32(0.5),
            "to_place": self._one_hot(g.pending).astype(f32),
            "available": self.available_value(g.available),
            "discard_pile": self.count_value(g.discard),
            "deck_counts": self.count_value(g.deck_counts),
            "deck_size": self.deck_value(g.deck_len)[None],
            "track": self.track_value(g.track[seats]),
            "coins_pending": self.coins_value(g.coins)[None] if self.options.coin_spaces else zero,
            "final_round": (g.track.max() >= self.options.track_length).astype(f32)[None],
            "pile_discards_left": (
                self.discards_left(g.pile_discards)[None] if self.options.pile_discards_per_turn else zero
            ),
            "turn_progress": self.turn_value(g.turns)[None],
            "decision_progress": self.decision_value(g.decisions)[None],
        }
        parts = []
        for piece in self._order:
            part = pieces[piece.name].astype(f32)
            if part.shape != (piece.size,):
                raise ValueError(
                    f"piece {piece.name!r}: the twin built {part.shape}, the observer has {piece.size}"
                )
            parts.append(part)
        return jnp.concatenate(parts)

    def _one_hot_rows(self, cards: jax.Array) -> jax.Array:
        """float32 [rows, V], a 1 at each row's card (nothing for card 0)."""
        return (self.values == cards[:, None]).astype(jnp.float32)

    def current_player(self, g: GameState) -> jax.Array:
        """The seat deciding: the turn player, or a claimer after a bust."""
        return g.to_act

    def terminal(self, g: GameState) -> jax.Array:
        """Ended by the rules (the final round played out) or by a cap with cap_ending="standings"."""
        return g.terminal

    def truncated(self, g: GameState) -> jax.Array:
        """Cut off by a cap with cap_ending="draw"."""
        return g.truncated

    def returns(self, g: GameState) -> jax.Array:
        """The win reward of the furthest track (or track differences / track_length); 0 when truncated."""
        o = self.options
        rewards = final_rewards(g.track, o.reward_mode, o.track_length)
        return jnp.where(g.truncated & ~g.terminal, jnp.zeros_like(rewards), rewards)

    def public(self, g: GameState) -> tuple[jax.Array, ...]:
        """What a reshuffle's outcome cannot change, whatever cards it brings up in the same step:
        every track, the decision count, every seat's permanent cards (the turn player's RUN and
        SET less their provisional cards), and how many cards of each value the game holds in all
        (deck, discard pile, piles, revealed, waiting and available cards: nothing lost or made).

        The cards drawn after a reshuffle may fit or bust, so who acts next, the provisional and
        available cards and the deck's composition may all differ; none of them is compared.
        """
        turn = jnp.arange(self.n) == g.turn_player
        run = jnp.where(turn, g.run & ~g.prov_run, g.run)
        size = g.set_size - turn * g.prov_set
        value = jnp.where(size > 0, g.set_value, 0)
        held = (
            g.deck_counts
            + g.discard
            + self._bits(g.run).sum(0)
            + (self._one_hot_rows(g.set_value) * g.set_size[:, None]).sum(0).astype(jnp.int32)
            + g.revealed
            + self._one_hot(g.pending)
            + g.available
        )
        return g.track, g.decisions, run, size, value, held

    def from_reference(self, game: Any) -> GameState:
        """The GameState of a reference `CrowsGame` (its deck in the same order)."""
        n, v = self.n, self.v
        deck = np.zeros(self.deck_size, np.int8)
        deck[: len(game.deck)] = game.deck  # bottom first: the top, `game.deck[-1]`, is drawn next

        def mask(cards):
            return sum(1 << c for c in cards)

        claimers = list(game.claimers)
        i32 = np.int32
        return GameState(
            deck=as_array(deck, np.int8),
            ordered=as_array(True, bool),
            seed=as_array(0, np.uint32),
            deck_len=as_array(len(game.deck), i32),
            deck_counts=as_array(game.deck_counts[1 : v + 1], i32),
            discard=as_array(game.discard[1 : v + 1], i32),
            run=as_array([mask(r) for r in game.runs], i32),
            set_value=as_array([s[0] if s else 0 for s in game.sets], i32),
            set_size=as_array([len(s) for s in game.sets], i32),
            track=as_array(game.track, i32),
            turn_player=as_array(game.turn_player, i32),
            to_act=as_array(game.to_act, i32),
            phase=as_array(int(game.phase), i32),
            prov_run=as_array(mask(game.prov_run), i32),
            prov_set=as_array(game.prov_set, i32),
            coins=as_array(game.coins, i32),
            pile_discards=as_array(game.pile_discards, i32),
            revealed=as_array(_counts(game.revealed, v), i32),
            pending=as_array(game.pending, i32),
            available=as_array(_counts(game.available, v), i32),
            next_claim=as_array((game.turn_player - claimers[0]) % n if claimers else n, i32),
            turns=as_array(game.turns, i32),
            decisions=as_array(game.decisions, i32),
            reshuffles=as_array(game.reshuffles, i32),
            terminal=as_array(game._terminal, bool),
            truncated=as_array(game._truncated, bool),
        )

    def picture_game(self, game: GameState) -> Any:
        """A `CrowsGame` holding this state's table, for drawing it (`State.save_svg`): piles, track,
        turn and decision as they are; a deck the twin shuffled holds its cards in value order (its
        order is not drawn), and no log."""
        from fowlplay.envs.crows.rules import CrowsGame, Decision

        g = {name: np.asarray(value) for name, value in vars(game).items()}
        n, v = self.n, self.v
        values = range(1, v + 1)

        def cards(mask) -> list[int]:
            return [c for c in values if int(mask) >> c & 1]

        def listed(counts) -> list[int]:
            return [c for c in values for _ in range(int(counts[c - 1]))]

        reference = CrowsGame(self.options, np.random.default_rng(0))
        if g["ordered"]:
            reference.deck = [int(c) for c in g["deck"][: int(g["deck_len"])]]
        else:
            reference.deck = listed(g["deck_counts"])[::-1]
        reference.deck_counts = [0, *g["deck_counts"].tolist()]
        reference.discard = [0, *g["discard"].tolist()]
        reference.runs = [cards(mask) for mask in g["run"]]
        reference.sets = [[int(value)] * int(size) for value, size in zip(g["set_value"], g["set_size"])]
        reference.track = g["track"].tolist()
        for name in ("turn_player", "to_act", "prov_set", "coins", "pile_discards", "pending", "turns"):
            setattr(reference, name, int(g[name]))
        reference.decisions, reference.reshuffles = int(g["decisions"]), int(g["reshuffles"])
        reference.phase = Decision(int(g["phase"]))
        reference.prov_run = cards(g["prov_run"])
        reference.revealed = listed(g["revealed"])
        reference.available = listed(g["available"])
        turn, asked = int(g["turn_player"]), int(g["next_claim"])
        reference.claimers = [(turn - k) % n for k in range(asked, n)]
        reference._log = []
        reference._terminal, reference._truncated = bool(g["terminal"]), bool(g["truncated"])
        return reference


def _counts(cards: list[int], v: int) -> np.ndarray:
    """Cards of each value 1..v in a list of cards."""
    return np.bincount(np.asarray(cards, dtype=np.int64), minlength=v + 1)[1 : v + 1]
