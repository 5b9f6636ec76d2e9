"""The re-deal behind `MurrayGame.resample_hidden`: another history of the game, one that a given
player could not tell from the real one.

Why a history and not just a fresh deal of the unseen cards: cards go into hands face up (pond
swaps, a Dragonfly, a Firefly, a Deer Fly or Hornet take) and leave them face down (the pass at the
end of every turn), so what a player knows about another hand depends on the order of events, and
the other players' own memories (what they passed, received, saw with a Hornet, whether they held
the Hawk) must fit the new cards too. So the game keeps `events`, every card move into or out of a
hand, and this module replays them with the cards the viewer did not see left open:

- every card is a token; a token the viewer saw (its own cards, face-up moves, what it passed,
  received or looked at) has a type, the others are open, each belonging to one of the two decks
  (the deck as dealt, and the discard pile reshuffled into a new deck when the first one runs out);
- a face-up move out of a hand uses a token of that type already there (a card the table saw go
  in), else gives an open token that type (an open token of a deck is more likely that type the
  more of the deck's unseen rest it is), keeping back what later face-up draws from that deck need;
- a face-down pass between two other players carries an open token, so that a card the table saw go
  into a hand stays there until seen leaving it, unless the passer's own face-up cards before its
  next pass need more unseen cards than it would keep (then it passed a seen card it does not need);
- when a replay meets an event its choices cannot explain (a face-up card the hand cannot have, a
  Hornet look showing other cards), it is repaired and run again: a pass is made to carry a seen
  card on, or an earlier face-up card to come from another token; after a while fresh replays also
  try other choices at random;
- the Hawk, once the reshuffle brought it into the deck, is always in the hand of the player whose
  turn it is as soon as someone has drawn it (its holder must pass it every turn); where the viewer
  has not seen it, it is put in one of the face-down draws that could have been it (see
  `MurrayGame.hawk_draws`) or left in the deck, each draw or deck place equally likely;
- at the end the open tokens of each deck get that deck's unseen cards in a uniformly random
  arrangement (Murrays and an undrawn Hawk only in the deck).

Only what the viewer knows is read: the types of other players' face-down draws and passes and of
other players' Hornet looks are never used. The result is a complete history; the other players'
memories and the event list are rebuilt from it, so a later re-deal for someone else starts from a
consistent world. Its weights are not the chance process's exactly (see the rules page, "Hidden
information"), but every world it returns is one the viewer's history allows.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from fowlplay.envs.core.game import Game
from fowlplay.envs.murray.cards import HAND_KINDS, PILE_KINDS, Card
from fowlplay.envs.murray.events import Event

# Every `game` below is a `MurrayGame`, typed by its base class: the rules import this module (in
# `resample_hidden`), so importing them back would make a circle.

_HAWK, _MURRAY = int(Card.HAWK), int(Card.MURRAY)
_TURN, _DRAW, _REVEAL, _RESHUFFLE, _OUT, _IN, _TAKE, _PASS, _LOOK, _SWAP = (int(e) for e in Event)
#: Replays tried before giving up (each is one pass over the events).
MAX_REPLAYS = 20000
#: Repairs tried on one replay before starting afresh.
MAX_REPAIRS = 30
#: Fresh replays that keep every seen card where it was seen; later ones cycle through the chances
#: in `_EXPLORE` (calm ones among them: most hard games need many calm repairs, a few need seen
#: cards moved on): with that chance a face-up card uses an open card though a seen one is there,
#: and a pass carries any card.
_CALM = 10
_EXPLORE = (0.0, 0.1, 0.2, 0.4, 0.8)


class _DeadEndError(Exception):
    """A replay reached an event its choices cannot explain."""

    def __init__(
        self, index: int, seat: int, card: int, why: str, token: int = -1, decks: tuple = ()
    ) -> None:
        super().__init__(why)
        self.index, self.seat, self.card, self.why, self.token = index, seat, card, why, token
        # For "need": the decks whose unseen cards could still supply `card` (none: only a card of
        # that type the table or the viewer saw can).
        self.decks = decks


class _Draws:
    """Uniform draws from a numpy generator, taken in batches (one numpy call per scalar is slow)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self._left: list[float] = []

    def below(self, k: int) -> int:
        """A uniform int in [0, k)."""
        if not self._left:
            self._left = self.rng.random(64).tolist()
        return min(int(self._left.pop() * k), k - 1)

    def chance(self) -> float:
        """A uniform float in [0, 1)."""
        if not self._left:
            self._left = self.rng.random(64).tolist()
        return self._left.pop()


class _Replay:
    """One replay of the events for `viewer`, with open tokens for what it did not see."""

    def __init__(self, game: Game, viewer: int, rng: np.random.Generator, plan: dict, hawk_slot,
                 explore: float, ahead: dict) -> None:  # fmt: skip
        self.game, self.v, self.rng, self.plan, self.explore = game, viewer, rng, plan, explore
        self.ahead = ahead
        # token -> the last event the plan moves it at: until then no unplanned choice takes it.
        self.held_for: dict[int, int] = {}
        for index, planned in plan.items():
            if isinstance(planned, int):
                self.held_for[planned] = max(index, self.held_for.get(planned, -1))
        self.draw = _Draws(rng)
        self.hawk_slot = hawk_slot  # event index of the face-down draw that was the Hawk, or None
        self.n = n = game.num_players
        self.kind: list[int] = []  # token -> card type, -1 while open
        self.deck_of: list[int] = []  # token -> 0 (deck as dealt) / 1 (reshuffled) / -1 (face up)
        self.arrived: list[int] = []  # token -> event index at which it entered its current hand
        self.hands: list[list[int]] = [[] for _ in range(n)]
        self.ev_token: dict[int, object] = {}  # event index -> token (draws, passes) / tokens (looks)
        self.last_pass = [-1] * n
        self.looked: dict[tuple[int, int], list[int]] = {}
        self.hawk_token = -1
        self.hawk_holders: set[int] = set()
        self.third_passes: list[tuple[int, int]] = []  # (event index, passer) of the viewer-blind passes
        self.bound: list[tuple[int, int, int]] = []  # (event, seat, token): an open token given a type there
        start_hands, start_deck, hawk_holder = game.start
        pool = [0] * PILE_KINDS
        for hand in start_hands:
            for t, c in enumerate(hand):
                pool[t] += c
        for t in start_deck:
            pool[t] += 1
        self.free = [pool, [0] * PILE_KINDS]  # unseen cards of each deck not yet given to a token
        self.reserve = self._reserve(game.events)
        self.start_tokens: list[list[int]] = []
        for q, hand in enumerate(start_hands):
            tokens = []
            for t, c in enumerate(hand):
                for _ in range(c):
                    if q == viewer or (t == _HAWK and q == hawk_holder):
                        tok = self._token(t, 0, -1)
                        self._use(0, t)
                        if t == _HAWK:
                            self.hawk_token = tok
                            self.hawk_holders.add(q)
                    else:
                        tok = self._token(-1, 0, -1)
                    tokens.append(tok)
            self.hands[q] = list(tokens)
            self.start_tokens.append(list(tokens))
        self.deck = 0
        self.deck_left = len(start_deck)
        self.drawn = [[], []]  # per deck: (token or face-up type) of each card drawn, in order

    def _reserve(self, events: list[tuple]) -> list[list[int]]:
        """Per deck and type: cards the viewer will see drawn from it (face up, or its own draws)."""
        reserve = [[0] * PILE_KINDS, [0] * PILE_KINDS]
        deck = 0
        for ev in events:
            kind = ev[0]
            if kind == _REVEAL:
                reserve[deck][ev[1]] += 1
            elif kind == _DRAW and ev[1] == self.v:
                reserve[deck][ev[2]] += 1
            elif kind == _RESHUFFLE:
                deck = 1
        return reserve

    def _token(self, kind: int, deck: int, arrived: int) -> int:
        self.kind.append(kind)
        self.deck_of.append(deck)
        self.arrived.append(arrived)
        return len(self.kind) - 1

    def _use(self, deck: int, card: int, index: int = -1, seat: int = -1) -> None:
        if self.free[deck][card] <= 0:
            raise _DeadEndError(index, seat, card, "exhausted")
        self.free[deck][card] -= 1

    # ----- the replay -------------------------------------------------------------------------
    def run(self) -> None:
        """Replay every event; raises `_DeadEndError` at the first one the choices made cannot explain."""
        v, n, hands = self.v, self.n, self.hands
        for i, ev in enumerate(self.game.events):
            kind = ev[0]
            if kind == _DRAW:
                p = ev[1]
                tok = self._token(-1, self.deck, i)
                self.deck_left -= 1
                self.drawn[self.deck].append(tok)
                if p == v:
                    self._use(self.deck, ev[2], i, p)
                    self.reserve[self.deck][ev[2]] -= 1
                    self.kind[tok] = ev[2]
                elif i == self.hawk_slot:
                    self._use(self.deck, _HAWK, i, p)
                    self.kind[tok] = _HAWK
                if self.kind[tok] == _HAWK:
                    self.hawk_token = tok
                    self.hawk_holders.add(p)
                hands[p].append(tok)
                self.ev_token[i] = tok
            elif kind == _REVEAL:
                self._use(self.deck, ev[1], i)
                self.reserve[self.deck][ev[1]] -= 1
                self.deck_left -= 1
                self.drawn[self.deck].append(-2 - ev[1])  # a face-up type, not a token
            elif kind == _RESHUFFLE:
                self.deck = 1
                self.free[1] = list(ev[1])
                self.deck_left = sum(ev[1])
            elif kind == _OUT:
                p = ev[1]
                hands[p].remove(self._pick(p, ev[2], i))
            elif kind == _IN:
                hands[ev[1]].append(self._token(ev[2], -1, i))
            elif kind == _SWAP:  # the card given was in the hand before the one taken came in
                p = ev[1]
                hands[p].remove(self._pick(p, ev[2], i))
                hands[p].append(self._token(ev[3], -1, i))
            elif kind == _TAKE:
                p, victim, card = ev[1], ev[2], ev[3]
                tok = self._pick(victim, card, i)
                hands[victim].remove(tok)
                hands[p].append(tok)
                self.arrived[tok] = i
                if tok == self.hawk_token:
                    self.hawk_holders.add(p)
                if ev[4] and p != v:
                    self.looked[p, victim] = list(hands[victim])
            elif kind == _PASS:
                p = ev[1]
                left = (p + 1) % n
                tok = self._pass_token(i, p, left, ev[2])
                hands[p].remove(tok)
                hands[left].append(tok)
                self.arrived[tok] = i
                self.ev_token[i] = tok
                self.last_pass[p] = tok
                if tok == self.hawk_token:
                    self.hawk_holders.add(left)
            elif kind == _LOOK:
                p, target = ev[1], ev[2]
                if p == v:
                    self._match(target, ev[3], i)
                self.ev_token[i] = list(hands[target])

    def _pick(self, seat: int, card: int, index: int) -> int:
        """The token of `seat`'s hand that leaves it face up as `card` (an open one gets that type)."""
        hand = self.hands[seat]
        kind = self.kind
        if self.plan:
            planned = self.plan.get(index)
            if planned is not None:
                if planned not in hand or kind[planned] not in (-1, card):
                    raise _DeadEndError(index, seat, card, "plan")
                if kind[planned] < 0:
                    self._use(self.deck_of[planned], card, index, seat)
                    kind[planned] = card
                    self.bound.append((index, seat, planned))
                return planned
        known = [tok for tok in hand if kind[tok] == card]
        if seat == self.v or card in (_HAWK, _MURRAY):
            if not known:
                raise _DeadEndError(index, seat, card, "need")
            return known[self.draw.below(len(known))] if len(known) > 1 else known[0]
        # A card the table saw go in is used first, as the table's bookkeeping assumes (one the plan
        # moves later is kept for it); a replay exploring alternatives sometimes uses an open card.
        held = self.held_for
        unheld = [tok for tok in known if held.get(tok, -1) <= index] if held else known
        if unheld and (not self.explore or self.draw.chance() >= self.explore):
            return unheld[self.draw.below(len(unheld))] if len(unheld) > 1 else unheld[0]
        free, reserve, deck_of = self.free, self.reserve, self.deck_of
        spare = (free[0][card] - reserve[0][card], free[1][card] - reserve[1][card])
        # An open card of a deck is this type with the chance that a card of that deck's unseen
        # rest is: so a deck nearly used up is the likelier source of a type it still has.
        rest = (sum(free[0]) - sum(reserve[0]) or 1, sum(free[1]) - sum(reserve[1]) or 1)
        open_ = []
        weights = []
        for tok in hand:
            d = deck_of[tok]
            if kind[tok] < 0 and spare[d] > 0:
                open_.append(tok)
                weights.append(spare[d] / rest[d])
        if not open_:
            if known:
                return known[0]
            decks = tuple(d for d in (0, 1) if spare[d] > 0)
            raise _DeadEndError(index, seat, card, "need", decks=decks)
        tok = open_[self._choose(weights)] if len(open_) > 1 else open_[0]
        free[deck_of[tok]][card] -= 1
        kind[tok] = card
        self.bound.append((index, seat, tok))
        return tok

    def _choose(self, weights: list) -> int:
        """An index drawn with probability proportional to its weight."""
        x = self.draw.chance() * sum(weights)
        for j, w in enumerate(weights):
            if x < w:
                return j
            x -= w
        return max(j for j, w in enumerate(weights) if w > 0)

    def _pass_token(self, index: int, p: int, left: int, card: int) -> int:
        """The token `p` passes left at event `index`."""
        hand = self.hands[p]
        if p == self.v:
            return next(tok for tok in hand if self.kind[tok] == card)
        if self.hawk_token in hand:  # a Hawk holder must pass the Hawk
            if left == self.v and card != _HAWK:
                raise _DeadEndError(index, p, card, "hawk")
            return self.hawk_token
        if left == self.v:
            return self._pick(p, card, index)
        self.third_passes.append((index, p))
        planned = self.plan.get(index)
        if planned is not None:
            if isinstance(planned, int):
                if planned not in hand:
                    raise _DeadEndError(index, p, -1, "plan")
                return planned
            if planned[0] == "keep":  # any card but that one (a seen card its hand needs later)
                choices = [tok for tok in hand if tok != planned[1]]
            else:
                choices = [tok for tok in hand if self.kind[tok] < 0 and self.deck_of[tok] == planned[1]]
            if not choices:
                raise _DeadEndError(index, p, -1, "plan")
            return choices[self.draw.below(len(choices))]
        kind = self.kind
        open_ = [tok for tok in hand if kind[tok] < 0]
        if len(open_) == len(hand):
            return open_[self.draw.below(len(open_))]
        if len(hand) > 1 and self.explore and self.draw.chance() < self.explore:
            return hand[self.draw.below(len(hand))]
        # Seen cards stay, unless the hand's face-up cards before its next pass need more unseen
        # cards than it would keep: then it passed a seen card it does not need.
        exits, entries, hidden = self.ahead[index]
        seen = Counter(kind[tok] for tok in hand if kind[tok] >= 0) + entries
        short = sum(max(0, c - seen[t]) for t, c in exits.items()) - (len(open_) - 1 + hidden)
        if open_ and short <= 0:
            return open_[self.draw.below(len(open_))]
        spare = [tok for tok in hand if kind[tok] >= 0 and seen[kind[tok]] > exits.get(kind[tok], 0)]
        if spare:
            return spare[self.draw.below(len(spare))]
        return (open_ or hand)[self.draw.below(len(open_ or hand))]

    def _match(self, target: int, seen: tuple, index: int) -> None:
        """The viewer looks at `target`'s hand: its tokens must be exactly the cards `seen`."""
        need = list(seen)
        open_ = []
        for tok in self.hands[target]:
            card = self.kind[tok]
            if card < 0:
                open_.append(tok)
                continue
            need[card] -= 1
            if need[card] < 0:
                raise _DeadEndError(index, target, card, "surplus", tok)
        if need[_HAWK]:  # the Hawk is never an open token: it is placed before the replay
            raise _DeadEndError(index, target, _HAWK, "need")
        by_deck = (
            [tok for tok in open_ if self.deck_of[tok] == 0],
            [tok for tok in open_ if self.deck_of[tok] == 1],
        )
        spare = [[max(0, self.free[d][t] - self.reserve[d][t]) for t in range(HAND_KINDS)] for d in (0, 1)]
        # How many of each needed type come from the first deck: between what the second cannot
        # supply and what the first can, summing to the first deck's open tokens.
        low = [max(0, need[t] - spare[1][t]) for t in range(HAND_KINDS)]
        high = [min(need[t], spare[0][t]) for t in range(HAND_KINDS)]
        first = len(by_deck[0])
        short = next((t for t in range(HAND_KINDS) if need[t] > spare[0][t] + spare[1][t]), -1)
        if short >= 0:  # more of a type than both decks have left: a card seen elsewhere came here
            raise _DeadEndError(index, target, short, "need")
        if sum(low) > first:  # too few open cards from the first deck for what only it has left
            raise _DeadEndError(
                index, target, next(t for t in range(HAND_KINDS) if low[t]), "need", decks=(0,)
            )
        if sum(high) < first:  # too few from the second deck
            raise _DeadEndError(
                index, target, next(t for t in range(HAND_KINDS) if need[t] > high[t]), "need", decks=(1,)
            )
        take = list(low)
        room = [hi - lo for lo, hi in zip(low, high)]
        for _ in range(first - sum(low)):
            t = self._choose(room)
            take[t] += 1
            room[t] -= 1
        for deck, tokens, counts in (
            (0, by_deck[0], take),
            (1, by_deck[1], [a - b for a, b in zip(need, take)]),
        ):
            cards = [t for t, c in enumerate(counts) for _ in range(c)]
            self.rng.shuffle(cards)
            for tok, card in zip(tokens, cards):
                self.kind[tok] = card
                self.free[deck][card] -= 1

    # ----- the world this replay describes ------------------------------------------------------
    def finish(self) -> None:
        """Give every open token a card, then write the new world into the game."""
        game, rng = self.game, self.rng
        deck = self.deck
        deck_tokens = [self._token(-1, deck, -1) for _ in range(self.deck_left)]
        # Tokens only leave hands face up (and then have a type), so every open token is in a
        # hand or in the deck.
        in_hands = [[tok for hand in self.hands for tok in hand if self.kind[tok] < 0 and self.deck_of[tok] == d]
                    for d in (0, 1)]  # fmt: skip
        for d in (0, 1):
            free = self.free[d]
            slots = list(in_hands[d])
            if d == deck:
                # Murrays and an undrawn Hawk can only be in the deck.
                special = [_MURRAY] * free[_MURRAY] + [_HAWK] * free[_HAWK]
                order = list(rng.permutation(len(deck_tokens)))
                for j, card in enumerate(special):
                    self.kind[deck_tokens[order[j]]] = card
                slots += [deck_tokens[j] for j in order[len(special) :]]
                free[_MURRAY] = free[_HAWK] = 0
            elif free[_MURRAY] or free[_HAWK]:
                raise AssertionError("a Murray or the Hawk left over in a used-up deck")
            cards = [t for t, c in enumerate(free) for _ in range(c)]
            if len(cards) != len(slots):
                raise AssertionError(f"deck {d}: {len(cards)} unseen cards for {len(slots)} places")
            rng.shuffle(cards)
            for tok, card in zip(slots, cards):
                self.kind[tok] = card
        kind = self.kind
        n = self.n
        hands = [[0] * HAND_KINDS for _ in range(n)]
        for q, tokens in enumerate(self.hands):
            for tok in tokens:
                hands[q][kind[tok]] += 1
        if [sum(h) for h in hands] != game.hand_sizes or hands[self.v] != game.hands[self.v]:
            raise AssertionError("the replay lost track of the hand sizes")
        game.hands = hands
        game.deck = [kind[tok] for tok in deck_tokens]
        for p, tok in enumerate(self.last_pass):
            if tok >= 0:
                game.last_passed[p] = kind[tok]
                game.last_received[(p + 1) % n] = kind[tok]
        for (p, target), tokens in self.looked.items():
            game.seen[p][target] = self._counts(tokens)
        game.hawk_seen = [q in self.hawk_holders for q in range(n)]
        events = list(game.events)
        for i, tok in self.ev_token.items():
            ev = events[i]
            if ev[0] == _DRAW or ev[0] == _PASS:
                events[i] = (ev[0], ev[1], kind[tok])
            elif ev[1] != self.v:  # a look by another player: what it showed in this world
                events[i] = (ev[0], ev[1], ev[2], tuple(self._counts(tok)))
        game.events = events
        # The deck as dealt: what is left of it, under what was drawn from it (the top is the end).
        dealt_deck = ([kind[tok] for tok in deck_tokens] if deck == 0 else []) + [
            kind[c] if c >= 0 else -2 - c for c in reversed(self.drawn[0])
        ]
        start_hands = tuple(tuple(self._counts(tokens)) for tokens in self.start_tokens)
        game.start = (start_hands, tuple(dealt_deck), game.start[2])

    def _counts(self, tokens: list[int]) -> list[int]:
        counts = [0] * HAND_KINDS
        for tok in tokens:
            counts[self.kind[tok]] += 1
        return counts


#: What `hawk_slots` says about the Hawk: no hidden choice to make (not shuffled in, in view, or
#: drawn by the viewer); in one of the draws or still in the deck; in one of the draws.
HAWK_KNOWN, HAWK_DRAWN_OR_DECK, HAWK_DRAWN = 0, 1, 2


def hawk_slots(game: Game, viewer: int) -> tuple[list[int], int]:
    """Face-down draws by others that could have been the Hawk without `viewer` knowing, and what
    the viewer knows (`HAWK_KNOWN`, `HAWK_DRAWN_OR_DECK`, `HAWK_DRAWN`) about where it is.

    Once the Hawk is drawn it is always with the player whose turn it is, so a draw stops counting
    when the Hawk would have reached the viewer since (its turn, a card passed to it) or when the
    turn player was seen holding a single card (a Hawk holder keeps two). `MurrayGame.hawk_draws`
    counts the same draws as the game goes.
    """
    start_hands, start_deck, hawk_holder = game.start
    if hawk_holder >= 0:
        return [], HAWK_KNOWN
    sizes = [sum(h) for h in start_hands]
    live = _HAWK in start_deck or any(h[_HAWK] for h in start_hands)
    slots: list[int] = []
    player, passed, n = 0, False, game.num_players
    for i, ev in enumerate(game.events):
        kind = ev[0]
        if kind == _TURN:
            player, passed = ev[1], False
            if player == viewer or sizes[player] == 1:
                slots = []
        elif kind == _RESHUFFLE:
            live = bool(ev[1][_HAWK])
            slots = []
        elif kind == _DRAW:
            sizes[ev[1]] += 1
            if live and ev[1] != viewer:
                slots.append(i)
            elif live and ev[2] == _HAWK:  # the viewer drew it: no face-down draw was the Hawk
                return [], HAWK_KNOWN
        elif kind == _OUT:
            sizes[ev[1]] -= 1
            if ev[1] == player and not passed and sizes[ev[1]] == 1:
                slots = []  # a turn player with one card holds no Hawk: it is still in the deck
        elif kind == _IN:
            sizes[ev[1]] += 1
        elif kind == _TAKE:
            sizes[ev[1]] += 1
            sizes[ev[2]] -= 1
            if ev[1] == viewer and ev[3] == _HAWK:
                return slots, HAWK_DRAWN
        elif kind == _PASS:
            p = ev[1]
            sizes[p] -= 1
            sizes[(p + 1) % n] += 1
            if p == player:
                passed = True
            if (p + 1) % n == viewer:
                if ev[2] == _HAWK:
                    return slots, HAWK_DRAWN
                slots = []
        elif kind == _LOOK:
            if ev[1] == viewer and ev[3][_HAWK]:
                return slots, HAWK_DRAWN
        elif kind == _REVEAL and ev[1] == _HAWK:
            return [], HAWK_KNOWN
    return slots, HAWK_DRAWN_OR_DECK if live else HAWK_KNOWN


def resample(game: Game, viewer: int, rng: np.random.Generator) -> bool:
    """Replace `game`'s hidden cards by a history `viewer` cannot tell from the real one.

    Returns False (and leaves the game as it was) if no replay explained the events within
    `MAX_REPLAYS` tries; the tests check that this does not happen in played games.
    """
    slots, known = hawk_slots(game, viewer)

    def draw_hawk_slot() -> int | None:
        """The face-down draw that was the Hawk in this world (None: no such draw)."""
        if known == HAWK_DRAWN and slots:
            return slots[int(rng.integers(len(slots)))]
        if known == HAWK_DRAWN_OR_DECK:  # each draw and each place in the deck equally likely
            # (the places the Murrays hold excepted: how many are in the deck is public)
            places = len(game.deck) - game.deck.count(_MURRAY)
            pick = int(rng.integers(len(slots) + places))
            return slots[pick] if pick < len(slots) else None
        return None

    # A replay that meets an event its choices cannot explain is repaired (a pass made to carry a
    # seen card on, a face-up card taken from another token) and run again, up to `MAX_REPAIRS`
    # times; then a fresh replay starts. A repaired replay reuses its family's random stream, so
    # every choice before the first repaired event comes out the same.
    ahead = _lookahead(game, viewer)
    explore = 0.0
    families = 0
    plan: dict = {}
    hawk_slot = draw_hawk_slot()
    family = int(rng.integers(2**63))
    repairs = 0
    for _ in range(MAX_REPLAYS):
        replay, dead = _attempt(game, viewer, family, plan, hawk_slot, explore, ahead)
        if dead is None:
            replay.finish()
            return True
        fixes = _repairs(replay, dead) if repairs < MAX_REPAIRS else []
        if fixes:
            plan = {**plan, **fixes[replay.draw.below(len(fixes))]}
            repairs += 1
        else:  # start afresh, more and more often also moving seen cards on, and other Hawk draws
            families += 1
            plan, repairs, explore = {}, 0, _exploration(families)
            hawk_slot = draw_hawk_slot()
            family = int(rng.integers(2**63))
    return False


def _exploration(families: int) -> float:
    """The chance that a fresh replay after `families` failed ones moves a seen card on."""
    return 0.0 if families < _CALM else _EXPLORE[(families - _CALM) % len(_EXPLORE)]


def _lookahead(game: Game, viewer: int) -> dict:
    """For each face-down pass between two others: what the passer does before its next pass.

    (face-up cards out of its hand by type, face-up cards into it by type, cards it gets unseen):
    public facts, which the replay uses to choose which card such a pass carried.
    """
    n = game.num_players
    ahead: dict[int, tuple] = {}
    open_windows: dict[int, tuple] = {}  # passer -> its window being filled
    for i, ev in enumerate(game.events):
        kind = ev[0]
        if kind in (_OUT, _IN, _DRAW):
            window = open_windows.get(ev[1])
            if window is not None:
                if kind == _OUT:
                    window[0][ev[2]] += 1
                elif kind == _IN:
                    window[1][ev[2]] += 1
                else:
                    window[2][0] += 1
        elif kind == _SWAP:
            window = open_windows.get(ev[1])
            if window is not None:
                window[0][ev[2]] += 1
                window[1][ev[3]] += 1
        elif kind == _TAKE:
            taker, victim = open_windows.get(ev[1]), open_windows.get(ev[2])
            if taker is not None:
                taker[1][ev[3]] += 1
            if victim is not None:
                victim[0][ev[3]] += 1
        elif kind == _PASS:
            p, left = ev[1], (ev[1] + 1) % n
            received = open_windows.get(left)
            if received is not None:
                received[2][0] += 1
            open_windows.pop(p, None)
            if viewer not in (p, left):
                window = (Counter(), Counter(), [0])
                open_windows[p] = window
                ahead[i] = window
    return {i: (exits, entries, hidden[0]) for i, (exits, entries, hidden) in ahead.items()}


def _attempt(game: Game, viewer: int, family: int, plan: dict, hawk_slot, explore: float, ahead: dict):
    """One replay: (the replay, None) if it explains every event, else (the replay, its dead end)."""
    replay = _Replay(game, viewer, np.random.default_rng(family), plan, hawk_slot, explore, ahead)
    try:
        replay.run()
    except _DeadEndError as dead:
        return replay, dead
    return replay, None


def _repairs(replay: _Replay, dead: _DeadEndError) -> list[dict]:
    """Changes to the replay's choices (event index -> token, or for a pass ("deck", d) or ("keep",
    token): an open card of deck d, any card but that one) that may carry it past `dead`: a pass
    carrying a seen card on or keeping it, a face-up card taken from another token."""
    n, v = replay.n, replay.v
    passes = [(i, p) for i, p in replay.third_passes if i < dead.index and i not in replay.plan]
    if dead.why == "surplus":  # the viewer's look proves a card the table saw had been passed on
        tok = dead.token
        route = _route(passes, replay.arrived[tok], dead.seat, (dead.seat + 1) % n, n, v)
        return [] if route is None else [{i: tok for i in route}]
    if dead.why != "need" or dead.card < 0:
        return []
    seat, card, decks = dead.seat, dead.card, dead.decks
    kind, deck_of, arrived, hands = replay.kind, replay.deck_of, replay.arrived, replay.hands
    mine = {deck_of[tok] for tok in hands[seat] if kind[tok] < 0}  # decks of this hand's open cards
    options = []
    # A card of that type seen going into a hand to the right was passed on to here; or an open
    # card of a deck that can still supply one was.
    for g in range(n):
        if g in (seat, v):
            continue
        for tok in hands[g]:
            if kind[tok] == card or (kind[tok] < 0 and deck_of[tok] in decks):
                route = _route(passes, arrived[tok], g, seat, n, v)
                if route is not None:
                    what = tok if kind[tok] == card else ("deck", deck_of[tok])
                    options.append({i: what for i in route})
    # Or a pass of this hand carried away a seen card of that type: it carried another card.
    for i, p in passes:
        carried = replay.ev_token.get(i)
        if p == seat and kind[carried] == card:
            options.append({i: ("keep", carried)})
    # Or a card the table saw go into this hand left it face down, so that the unseen card that
    # pass carried stayed here for this hand's later face-up cards.
    for i, p in passes:
        carried = replay.ev_token.get(i)
        if p != seat or not decks or deck_of[carried] < 0:
            continue
        for tok in hands[seat]:
            if 0 <= kind[tok] != _HAWK and arrived[tok] < i:
                options.append({i: tok})
    for j, g, used in replay.bound:
        if j in replay.plan or j > dead.index:
            continue
        was = kind[used]
        if was == card and deck_of[used] in mine:
            # That earlier face-up card took one of the unseen cards this hand's deck had left; it
            # could have been a seen card of that type (there, or passed on to there), or an open
            # card of another deck, instead.
            for tok in hands[g]:
                if arrived[tok] < j and (kind[tok] == card or (kind[tok] < 0 and deck_of[tok] in decks)):
                    options.append({j: tok})
            options.extend(_routed_in(replay, passes, card, g, j))
        elif g == seat and deck_of[used] in decks:
            # An earlier face-up card of this hand took an open card of a deck that could supply
            # this one; another of its open cards, of the other deck, could have been it, or a
            # card of that type the table saw go into a hand to the right, passed on to here.
            for tok in hands[seat]:
                fits = kind[tok] < 0 and arrived[tok] < j and deck_of[tok] != deck_of[used]
                if fits and _spare(replay, deck_of[tok], was) > 0:
                    options.append({j: tok})
            options.extend(_routed_in(replay, passes, was, seat, j))
    return options


def _routed_in(replay: _Replay, passes: list[tuple[int, int]], card: int, seat: int, j: int) -> list[dict]:
    """Plans that bring a seen `card` from a hand to the right into `seat` for its face-up card at `j`."""
    n, v, kind = replay.n, replay.v, replay.kind
    before = [(i, p) for i, p in passes if i < j]
    plans = []
    for other in range(n):
        if other in (seat, v):
            continue
        for tok in replay.hands[other]:
            if kind[tok] == card:
                route = _route(before, replay.arrived[tok], other, seat, n, v)
                if route is not None:
                    plans.append({**{i: tok for i in route}, j: tok})
    return plans


def _spare(replay: _Replay, deck: int, card: int) -> int:
    return replay.free[deck][card] - replay.reserve[deck][card]


def _route(
    passes: list[tuple[int, int]], after: int, src: int, dst: int, n: int, viewer: int
) -> list[int] | None:
    """Viewer-blind passes carrying a card from `src` leftwards to `dst`, after event `after`.

    The latest such passes (`passes` holds only those before the event to explain): the card
    stays where the table saw it for as long as the story allows.
    """
    hops = (dst - src) % n
    seats = [(src + h) % n for h in range(hops)]
    if viewer in seats or (dst == viewer):
        return None
    route: list[int] = []
    time = 1 << 62
    for seat in reversed(seats):
        hop = next((i for i, p in reversed(passes) if p == seat and after < i < time), None)
        if hop is None:
            return None
        route.append(hop)
        time = hop
    return route[::-1]
