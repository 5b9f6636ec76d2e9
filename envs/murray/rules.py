"""Murray the A**hole Frog: the pure rules engine (no RL library is imported here).

Cards are ints (`Card`): 0-11 the twelve insect types, 12 the Hawk, 13 Murray. Hands, swarms and the
discard pile are counts per card type (their order carries no information); the deck is a list whose
top is its end, and the pond is kept sorted so its slots are canonical. Draws, Murray's arrival, pond
refills and the one reshuffle happen inside `apply`; every choice a player makes, Murray's target
included, is a decision of the current player.
"""

from __future__ import annotations

import itertools
import os
from bisect import insort
from dataclasses import dataclass
from enum import IntEnum
from itertools import compress
from types import SimpleNamespace
from typing import Any

import numpy as np
from fowlplay.envs.core import (
    ActionLayout,
    Game,
    check_int,
    check_player_count,
    check_reward_mode,
    final_rewards,
)
from fowlplay.envs.core.cards import random_index, shuffled
from fowlplay.envs.core.errors import RedealError
from fowlplay.envs.core.game import copy_rng
from fowlplay.envs.murray.cards import (
    ABILITY_CARDS,
    CARD_NAMES,
    COMMON_FLIES,
    COUNTS_3_4,
    COUNTS_5_6,
    HAND_KINDS,
    NUM_INSECTS,
    PILE_KINDS,
    SWARM_COMBOS,
    TYPES_OF_VALUE,
    VALUE,
    Card,
    card_value_sum,
    insect_cards,
    nth_card,
)
from fowlplay.envs.murray.events import Event
from fowlplay.envs.murray.text import COMBO_NAMES, action_text, table_text

PLAYER_COUNTS = range(3, 7)

#: `Card`'s members as plain attributes (the same objects): on Python 3.11 reading a member
#: through its enum class costs several times an attribute read, and the hot paths read them at
#: every decision.
_Card = SimpleNamespace(**Card.__members__)


class Decision(IntEnum):
    """The kinds of decision a player can be asked for."""

    TURN = 0  # the free part of a turn: swarms, abilities, the once-per-turn actions, going out, passing
    MURRAY = 1  # choose the swarm a drawn Murray destroys
    DEER_FLY = 2  # choose the player to take a random card from
    DRAGONFLY = 3  # choose the pond card to take
    FIREFLY_SWARM = 4  # choose the swarm to take an insect from
    FIREFLY_TAKE = 5  # choose the insect to take from that swarm
    ROBBER_SWARM = 6  # choose a swarm to rob a fly from
    ROBBER_TAKE = 7  # choose the fly to discard from that swarm
    HORNET_PLAYER = 8  # choose the player whose hand to look at
    HORNET_TAKE = 9  # choose the insect to take from the hand looked at
    DISCARD = 10  # discard down to the hand limit at the end of the turn


#: `Decision`'s members as plain attributes (the same objects): on Python 3.11 reading a member
#: through its enum class costs several times an attribute read, and the hot paths read them at
#: every decision.
_Decision = SimpleNamespace(**Decision.__members__)


@dataclass
class MurrayOptions:
    """Rule options of `murray_frog_v0`; every default is the documented game."""

    num_players: int = 3
    #: Copies of each insect type in `Card` order; None = the card table's column for the player count.
    insect_counts: tuple[int, ...] | None = None
    #: Murray cards in the deck; None = 3 for 3-4 players, 4 for 5-6 (card table).
    murrays: int | None = None
    #: Cards dealt to each player at setup (seed: 6).
    hand_size: int = 6
    #: Cards in the pond (seed: 3).
    pond_size: int = 3
    #: Cards drawn at the start of a turn (seed: 2).
    draw_count: int = 2
    #: Cards the first player draws on the first turn (seed: 3).
    first_draw_count: int = 3
    #: Hand size a player discards down to at the end of their turn (seed: 9).
    hand_limit: int = 9
    #: Swarms one player may own at once (house: 8, the bound of the action and observation encodings).
    max_swarms: int = 8
    #: A swarm of at least this many cards scores `big_swarm_points` (seed: 4 cards, 5 points).
    big_swarm: int = 4
    big_swarm_points: int = 5
    #: A perfect swarm (one insect type) scores this (seed: 5).
    perfect_swarm_points: int = 5
    #: Turns played before the game is truncated (house: 300).
    max_turns: int = 300
    #: "win": +1 / -1/(n-1) terminal rewards; "score": zero-sum score differences / 20.
    reward_mode: str = "win"

    def validate(self) -> None:
        """Raise ValueError on an impossible option."""
        check_player_count(self.num_players, PLAYER_COUNTS, "murray_frog_v0")
        if self.insect_counts is not None:
            counts = tuple(self.insect_counts)
            if len(counts) != NUM_INSECTS:
                raise ValueError(
                    f"insect_counts must list {NUM_INSECTS} counts in Card order; got {counts!r}"
                )
            for card, count in zip(Card, counts):
                check_int(f"insect_counts[{card.name}]", count, 0)
        if self.murrays is not None:
            check_int("murrays", self.murrays, 0)
        check_int("hand_size", self.hand_size, 1)
        check_int("pond_size", self.pond_size, 1)
        check_int("draw_count", self.draw_count, 1)
        check_int("first_draw_count", self.first_draw_count, 1)
        check_int("hand_limit", self.hand_limit, 1)
        check_int("max_swarms", self.max_swarms, 1)
        check_int("big_swarm", self.big_swarm, 1)
        check_int("big_swarm_points", self.big_swarm_points, 0)
        check_int("perfect_swarm_points", self.perfect_swarm_points, 0)
        check_int("max_turns", self.max_turns, 1)
        check_reward_mode(self.reward_mode)
        # The first player's opening draw must come from the deck as dealt: with fewer insects left
        # the reshuffle brings the Hawk in at once and the game can end before anyone decides.
        dealt = self.num_players * self.hand_size + self.pond_size
        needed = dealt + self.first_draw_count
        if sum(self.counts) < needed:
            raise ValueError(
                f"insect_counts hold {sum(self.counts)} insects; dealing {self.num_players} hands of "
                f"{self.hand_size} and a pond of {self.pond_size}, then player_0's first draw of "
                f"{self.first_draw_count} (first_draw_count) from the deck needs at least {needed}: "
                "add insects or lower hand_size, pond_size or first_draw_count"
            )

    @property
    def counts(self) -> tuple[int, ...]:
        """Copies of each insect type actually used."""
        if self.insect_counts is not None:
            return tuple(self.insect_counts)
        return COUNTS_3_4 if self.num_players <= 4 else COUNTS_5_6

    @property
    def murray_count(self) -> int:
        """Murray cards actually used."""
        if self.murrays is not None:
            return self.murrays
        return 3 if self.num_players <= 4 else 4

    @property
    def total_cards(self) -> int:
        """Insects, Murrays and the Hawk."""
        return sum(self.counts) + self.murray_count + 1


def action_layout(options: MurrayOptions) -> ActionLayout:
    """The named action blocks (ids in order); seats are relative to the acting player."""
    n, s, p = options.num_players, options.max_swarms, options.pond_size
    return ActionLayout(
        [
            ("go_out", 1, "discard the Hawk to go out (first action of the turn, no Murray this turn); ends the game"),
            ("create", len(SWARM_COMBOS), "create a swarm from the three cards of combination `SWARM_COMBOS[i]`"),
            ("add", s * NUM_INSECTS, "add one insect of type i % 12 to my swarm in slot i // 12"),
            ("ability", len(ABILITY_CARDS), "discard a Deer Fly, Dragonfly, Firefly, Robber Fly, Paper Wasp, Hornet (i) to use it"),
            ("swap", NUM_INSECTS * p, "once per turn: swap an insect of type i // pond_size from my hand with pond slot i % pond_size"),
            ("fly_draw", len(COMMON_FLIES), "once per turn: discard a common fly of type i (0-5) and draw two cards"),
            ("pass", HAND_KINDS, "end the turn passing one card of type i (12 = Hawk) to the left"),
            ("end_turn", 1, "end the turn passing nothing (only with a single card in hand)"),
            ("murray", n * s, "Murray destroys the swarm of relative seat i // max_swarms, slot i % max_swarms"),
            ("swarm", n * s, "Firefly / Robber Fly: pick the swarm of relative seat i // max_swarms, slot i % max_swarms"),
            ("player", n - 1, "Deer Fly / Hornet: target relative seat i + 1"),
            ("pond", p, "Dragonfly: take the card in pond slot i"),
            ("take", NUM_INSECTS, "Firefly / Robber Fly / Hornet: take an insect of type i from the chosen swarm or hand"),
            ("discard", NUM_INSECTS, "discard an insect of type i (down to the hand limit)"),
        ]
    )  # fmt: skip


def swarm_points(swarm: list[int], options: MurrayOptions) -> int:
    """Bonus points of one swarm (counts per insect type): 4+ cards, perfect, both, or none."""
    size = sum(swarm)
    points = options.big_swarm_points if size >= options.big_swarm else 0
    if size and max(swarm) == size:  # every card is one insect type
        points += options.perfect_swarm_points
    return points


def tadpole_points(tadpoles: int) -> int:
    """Each tadpole is worth one more than the number of tadpoles held."""
    return tadpoles * (tadpoles + 1)


def score_breakdown(swarms: list[list[int]], tadpoles: int, hand: list[int], options: MurrayOptions) -> dict:
    """The four parts of a final score and the total."""
    parts = {
        "swarm_points": sum(swarm_points(s, options) for s in swarms),
        "tadpole_points": tadpole_points(tadpoles),
        "card_points": sum(card_value_sum(s) for s in swarms),
        "penalty": card_value_sum(hand),
    }
    parts["total"] = parts["swarm_points"] + parts["tadpole_points"] + parts["card_points"] - parts["penalty"]
    return parts


# ----- speed shims: what the hot paths read instead of the card table -----------------------------
# They stay in this module: the speed tests hold them to the engine that reads them
# (`rules._CREATE_TABLES`, `rules._HAWK`, ...).


def _combo_needs(combo: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    return tuple((int(t), combo.count(t)) for t in sorted(set(combo)))


# Plain-int copies of the constants the legal-mask hot path reads (IntEnum indexing is slower).
_INSECT_IDS = tuple(range(NUM_INSECTS))
_HAWK = int(_Card.HAWK)
_ABILITY_IDS = tuple(int(c) for c in ABILITY_CARDS)
_DEER_FLY, _DRAGONFLY, _FIREFLY, _ROBBER_FLY, _PAPER_WASP, _HORNET = _ABILITY_IDS  # `ABILITY_CARDS` order
_COMMON_IDS = tuple(int(c) for c in COMMON_FLIES)
#: The `fly_draw` block's slots: common fly i is card type i, so a hand's first counts pick them.
_COMMON_SLOTS = tuple(range(len(COMMON_FLIES)))
assert _COMMON_IDS == _COMMON_SLOTS, "the common flies must be the card types 0, 1, 2, ..."
#: Per insect type: every insect type of the same value (what may join a swarm holding it).
_SAME_VALUE = tuple(tuple(int(t) for t in TYPES_OF_VALUE[VALUE[card]]) for card in range(NUM_INSECTS))
#: The mask's dtype, passed positionally: numpy's keyword parsing costs more than `frombuffer` itself.
_INT8 = np.dtype(np.int8)
_MURRAY = int(_Card.MURRAY)
_EV_TURN, _EV_DRAW, _EV_REVEAL, _EV_RESHUFFLE, _EV_OUT, _EV_IN, _EV_TAKE, _EV_PASS, _EV_LOOK, _EV_SWAP = (
    int(e) for e in Event
)

#: Per value: its insect types and (create-block index, needs) of every combination of that value.
_COMBOS_BY_VALUE = tuple(
    (TYPES_OF_VALUE[v], tuple((i, _combo_needs(c)) for i, c in enumerate(SWARM_COMBOS) if VALUE[c[0]] == v))
    for v in range(1, 6)
)


def _create_table(types: tuple[int, ...], combos: tuple[tuple[int, tuple[tuple[int, int]]], ...]) -> tuple:
    """Create-block indices a hand can make, by its counts of `types` capped at 3, read base 4."""
    table = []
    for key in range(4 ** len(types)):
        held, rest = {}, key
        for t in reversed(types):
            rest, held[t] = divmod(rest, 4)
        table.append(tuple(i for i, needs in combos if all(held[t] >= k for t, k in needs)))
    return tuple(table)


#: Per value: its insect types and the `_create_table` of its combinations (a combination needs at
#: most 3 of a type, so counts capped at 3 decide it).
_CREATE_BY_VALUE = tuple(
    (tuple(types), _create_table(tuple(types), combos)) for types, combos in _COMBOS_BY_VALUE
)


def _three_digit_table(types: tuple[int, ...], table: tuple) -> tuple[int, int, int, tuple]:
    """A value's create table read from exactly three counts (capped at 3, base 4).

    A value with two insect types gets the Hawk as a third digit that its table ignores (every
    Hawk count gives the same entry), so the legal mask computes every key the same way.
    """
    if len(types) == 3:
        return (*types, table)
    if len(types) != 2:
        raise AssertionError(f"the create tables expect two or three insect types of a value; got {types}")
    a, b = types
    return a, b, _HAWK, tuple(table[key // 4] for key in range(4**3))


#: `_CREATE_BY_VALUE` with every table keyed by three counts: (type, type, type, table).
_CREATE_TABLES = tuple(_three_digit_table(types, table) for types, table in _CREATE_BY_VALUE)


#: A number never handed out before. A seat's swarms and what the table saw go into its hand get a
#: new one each time they change (`MurrayGame.swarm_stamps`, `shown_stamps`), so the observer tells
#: "changed since I last looked" by comparing one int per seat instead of the nested lists; new
#: numbers keep two clones that part ways from ever sharing one. Each process counts from its own
#: random 64-bit start (OS entropy: a stamp is an identity, never part of play), so an env pickled
#: in one process and played on in another does not meet its observer's remembered stamps again.
_new_stamp = itertools.count(int.from_bytes(os.urandom(8), "little") << 32).__next__


#: `_layout_bindings` by (players, max swarms, pond size), the options the action layout depends on.
_BINDINGS: dict[tuple[int, int, int], dict[str, Any]] = {}


def _layout_bindings(options: MurrayOptions) -> dict[str, Any]:
    """The action layout and the first id of each block, as `MurrayGame` attributes (made once per layout).

    Every game of an env shares them: building the layout at every reset took about a third of
    the reset (cProfile).
    """
    key = (options.num_players, options.max_swarms, options.pond_size)
    bindings = _BINDINGS.get(key)
    if bindings is None:
        layout = action_layout(options)
        starts = {f"_{block.name}": block.start for block in layout.blocks}
        bindings = _BINDINGS[key] = {
            "layout": layout,
            "_size": layout.size,
            **{name: starts[name] for name in _BLOCK_ATTRIBUTES},
            # The action id that uses each ability card, by card.
            "_use": {card: starts["_ability"] + i for i, card in enumerate(_ABILITY_IDS)},
            # (block name, index in the block) of every action id: `layout.decode` without a call.
            "_decoded": tuple(layout.decode(action) for action in range(layout.size)),
        }
    return bindings


#: The blocks whose first id a game keeps as an attribute (`_` + block name).
_BLOCK_ATTRIBUTES = (
    "_go_out", "_create", "_add", "_ability", "_swap", "_fly_draw", "_pass", "_end_turn",
    "_murray", "_swarm", "_player", "_pond", "_take", "_discard",
)  # fmt: skip


class MurrayGame(Game):
    """A game of Murray the A**hole Frog in progress."""

    def __init__(self, options: MurrayOptions, rng: np.random.Generator) -> None:
        self.options = options
        self.rng = rng
        self.num_players = n = options.num_players
        #: Copies of each hand card type (insects in `Card` order, then the Hawk): the most of a type
        #: the table can have seen go into one hand (`_seen_into`).
        self._copies = (*options.counts, 1)
        self._bind_layout(options)
        insects = shuffled(insect_cards(options.counts), rng)
        self.hands = [[0] * HAND_KINDS for _ in range(n)]
        for p in range(n):
            for card in insects[p * options.hand_size : (p + 1) * options.hand_size]:
                self.hands[p][card] += 1
        self.hand_sizes = [options.hand_size] * n
        dealt = n * options.hand_size
        self.pond = sorted(insects[dealt : dealt + options.pond_size])
        self.deck = shuffled(
            insects[dealt + options.pond_size :] + [_Card.MURRAY] * options.murray_count, rng
        )
        self.discard = [0] * PILE_KINDS
        self.discard[_Card.HAWK] = 1  # the Hawk is the starting discard pile
        self.hawk_in = False  # True once the reshuffle has brought the Hawk into the deck
        self.swarms: list[list[list[int]]] = [[] for _ in range(n)]
        self.swarm_stamps = [_new_stamp() for _ in range(n)]  # see `_swarms_changed`
        self.tadpoles = [0] * n
        self._init_knowledge(hawk_holder=-1)
        self.player = 0
        self.turn = 1
        self.decision_kind = _Decision.TURN
        self.draws_left = options.first_draw_count
        self.filling = False
        self.murray_resets_pond = False
        self.murray_this_turn = False
        self.may_go_out = False
        self.swapped = False
        self.fly_drawn = False
        self.target = -1  # seat chosen for a Deer Fly or Hornet
        self.chosen = (-1, -1)  # (owner, slot) chosen for a Firefly or Robber Fly
        self.robber_left = 0
        self.end_reason = ""
        # What the last action did, as (str.format template, arguments): formatted only when `log`
        # is read, which most games never do.
        self._notes: list[tuple[str, tuple]] = []
        self._terminal = False
        self._truncated = False
        self.events.append((_EV_TURN, 0))
        self._run()

    def _init_knowledge(self, hawk_holder: int) -> None:
        """Fresh bookkeeping of who knows what, and the history start `resample_hidden` replays from."""
        n = self.num_players
        self.hawk_seen = [q == hawk_holder for q in range(n)]  # has held the Hawk since it was shuffled in
        self.last_passed = [-1] * n
        self.last_received = [-1] * n
        self.seen: list[list[list[int] | None]] = [
            [None] * n for _ in range(n)
        ]  # q's hand after p's last Hornet look
        # shown[p]: cards the table saw go into p's hand (pond, swarm, a Deer Fly or Hornet take) and
        # has not seen leave it. A face-down pass may have carried one of them on unseen.
        self.shown = [[0] * HAND_KINDS for _ in range(n)]
        self.shown_stamps = [_new_stamp() for _ in range(n)]  # see `_shown_changed`
        self.shown_any = 0  # cards in all of `shown` (the observation skips the piece when none)
        # hawk_draws[p]: face-down draws by the others that could have brought the Hawk out of the
        # deck without p knowing: since the reshuffle, since p's last turn or card received, and
        # since a turn player (who would hold an out Hawk) was seen holding a single card.
        self.hawk_draws = [0] * n
        self.passed = False  # the turn player has passed this turn (the Hawk, if out, went left)
        # The table as it stood when this history began (hands, deck, a Hawk in view in a hand),
        # and every card move since: the other worlds a player cannot tell apart replay these.
        self.start = (tuple(tuple(h) for h in self.hands), tuple(self.deck), hawk_holder)
        self.events: list[tuple] = []

    def _bind_layout(self, options: MurrayOptions) -> None:
        self.__dict__.update(_layout_bindings(options))

    @classmethod
    def action_layout(cls, options: MurrayOptions) -> ActionLayout:
        """go_out, create, add, ability, swap, fly_draw, pass, end_turn, then the target blocks."""
        return action_layout(options)

    def set_table(
        self,
        hands: list[list[int]],
        pond: list[int],
        deck: list[int],
        swarms: list[list[list[int]]] | None = None,
        discard: list[int] | None = None,
        tadpoles: list[int] | None = None,
        hawk_in: bool = False,
        player: int = 0,
        draws: int | None = None,
    ) -> None:
        """Lay out a stacked table and start `player`'s turn on it (for tests and tools).

        Cards are listed by type: `hands[p]`, the pond, the deck (top card first), each swarm of
        `swarms[p]` and the discard pile (default: just the Hawk unless `hawk_in`). Keeping the card
        counts those of a real game is the caller's business.
        """
        n = self.num_players
        self.hands = [[0] * HAND_KINDS for _ in range(n)]
        for p, cards in enumerate(hands):
            for card in cards:
                self.hands[p][card] += 1
        self.hand_sizes = [sum(h) for h in self.hands]
        self.pond = sorted(pond)
        self.deck = list(reversed(deck))
        self.swarms = [[] for _ in range(n)]
        for p, owned in enumerate(swarms or []):
            for cards in owned:
                self.swarms[p].append([cards.count(t) for t in range(NUM_INSECTS)])
        self.swarm_stamps = [_new_stamp() for _ in range(n)]
        self.discard = [0] * PILE_KINDS
        for card in [_Card.HAWK] if discard is None and not hawk_in else discard or []:
            self.discard[card] += 1
        self.tadpoles = list(tadpoles) if tadpoles else [0] * n
        self.hawk_in = hawk_in
        holders = [q for q in range(n) if self.hands[q][_Card.HAWK]]
        # A Hawk laid in a hand is in everyone's view: the table starts knowing where it is.
        self._init_knowledge(hawk_holder=holders[0] if holders and hawk_in else -1)
        self.player = player
        self.turn = 1
        self.decision_kind = _Decision.TURN
        self.draws_left = self.options.draw_count if draws is None else draws
        self.filling = self.murray_resets_pond = self.murray_this_turn = self.may_go_out = False
        self.swapped = self.fly_drawn = False
        self.target, self.chosen, self.robber_left = -1, (-1, -1), 0
        self.end_reason = ""
        self._notes = []
        self._terminal = self._truncated = False
        self.events.append((_EV_TURN, player))
        self._run()

    # ----- chance: drawing, the pond, Murray --------------------------------------------------------
    def _draw(self) -> int:
        """Top card of the deck, reshuffling once to bring the Hawk in; -1 (game over) when none is left."""
        if not self.deck:
            if self.hawk_in:
                self._finish("no card left to draw")
                return -1
            pile = [t for t, c in enumerate(self.discard) for _ in range(c)]
            self.events.append((_EV_RESHUFFLE, tuple(self.discard)))
            self.deck = shuffled(pile, self.rng)
            self.discard = [0] * PILE_KINDS
            self.hawk_in = True
            self._notes.append(("the discard pile is shuffled into a new deck: the Hawk is in", ()))
        return self.deck.pop()

    def _to_hand(self, player: int, card: int) -> None:
        self.hands[player][card] += 1
        self.hand_sizes[player] += 1
        if card == _Card.HAWK:
            self.hawk_seen[player] = True

    def _from_hand(self, player: int, card: int) -> None:
        self.hands[player][card] -= 1
        self.hand_sizes[player] -= 1

    # Every card move into or out of a hand goes through one of these, which record it in `events`.
    def _draw_face_down(self, player: int, card: int) -> None:
        self._to_hand(player, card)
        self.events.append((_EV_DRAW, player, card))
        if self.hawk_in and self.start[2] < 0:  # the Hawk may be in the deck: this draw may be it
            for q in range(self.num_players):
                if q != player:
                    self.hawk_draws[q] += 1

    def _reveal(self, card: int) -> None:
        self.events.append((_EV_REVEAL, card))

    def _play_from_hand(self, player: int, card: int) -> None:
        self._from_hand(player, card)
        self.events.append((_EV_OUT, player, card))
        if self.shown[player][card]:
            self.shown[player][card] -= 1
            self.shown_any -= 1
            self._shown_changed(player)
        if not self.passed and self.hand_sizes[player] == 1:
            self._hawk_not_out()

    def _hawk_not_out(self) -> None:
        """The turn player holds a single card, so not the Hawk: everyone knows it is still in the deck."""
        self.hawk_draws = [0] * self.num_players

    def _seen_into(self, player: int, card: int) -> None:
        """The table saw `card` go into `player`'s hand: counted, up to the copies of its type.

        A card seen going in, passed on face down and taken back in view is one card, not two: with
        every copy of its type already counted in that hand, the table knows it is one of them."""
        if self.shown[player][card] < self._copies[card]:
            self.shown[player][card] += 1
            self.shown_any += 1

    def _take_into_hand(self, player: int, card: int) -> None:
        self._to_hand(player, card)
        self.events.append((_EV_IN, player, card))
        self._seen_into(player, card)
        self._shown_changed(player)

    def _swap_with_pond(self, player: int, given: int, taken: int) -> None:
        # One event: the card given was in the hand before the swap (never the one taken), and
        # the hand is never a card short.
        self._from_hand(player, given)
        self._to_hand(player, taken)
        self.events.append((_EV_SWAP, player, given, taken))
        if self.shown[player][given]:
            self.shown[player][given] -= 1
            self.shown_any -= 1
        self._seen_into(player, taken)
        self._shown_changed(player)

    def _take_from(self, player: int, victim: int, card: int, hornet: bool) -> None:
        self._from_hand(victim, card)
        self._to_hand(player, card)
        self.events.append((_EV_TAKE, player, victim, card, hornet))
        if self.shown[victim][card]:
            self.shown[victim][card] -= 1
            self.shown_any -= 1
            self._shown_changed(victim)
        self._seen_into(player, card)
        self._shown_changed(player)

    def _pass_left(self, player: int, card: int) -> None:
        left = (player + 1) % self.num_players
        self._from_hand(player, card)
        self._to_hand(left, card)
        self.events.append((_EV_PASS, player, card))
        self.last_passed[player] = card
        self.last_received[left] = card
        self.hawk_draws[left] = 0  # an out Hawk would have come to `left` with this pass
        self.passed = True

    # Every change to `swarms` or `shown` goes through one of these (tests hold every path to it).
    def _swarms_changed(self, seat: int) -> None:
        """`seat`'s swarms changed: give them a new stamp."""
        self.swarm_stamps[seat] = _new_stamp()

    def _shown_changed(self, seat: int) -> None:
        """What the table saw go into `seat`'s hand changed: give it a new stamp."""
        self.shown_stamps[seat] = _new_stamp()

    def _has_swarm(self) -> bool:
        return any(self.swarms)

    def _reset_pond(self) -> None:
        for card in self.pond:
            self.discard[card] += 1
        self.pond = []
        self.filling = True

    def _run(self) -> None:
        """Resolve pending draws (pond first, then the turn's draws) until a player must decide."""
        p = self.player
        while True:
            if self.filling:
                if len(self.pond) >= self.options.pond_size:
                    self.filling = False
                    continue
                card = self._draw()
                if card < 0:
                    return
                self._reveal(card)
                if card == _Card.MURRAY:
                    if self._has_swarm():
                        self._ask_murray(resets_pond=False)
                        return
                    self.discard[_Card.MURRAY] += 1
                    self._notes.append(("Murray finds no swarm and is discarded", ()))
                    continue
                if card == _Card.HAWK:
                    self.discard[_Card.HAWK] += 1
                    self._finish("the Hawk entered the pond")
                    return
                insort(self.pond, card)
            elif self.draws_left:
                card = self._draw()
                if card < 0:
                    return
                if card == _Card.MURRAY:
                    self._reveal(card)
                    self.murray_this_turn = True
                    if self._has_swarm():
                        self.draws_left -= 1  # a Murray that hits a swarm is not replaced
                        self._ask_murray(resets_pond=True)
                        return
                    self.discard[_Card.MURRAY] += 1
                    self._notes.append(("Murray finds no swarm: discarded, another card is drawn", ()))
                    continue
                self._draw_face_down(p, card)
                self.draws_left -= 1
                if not self.draws_left:
                    self.may_go_out = not self.murray_this_turn
            else:
                break
        self.decision_kind = _Decision.TURN

    def _ask_murray(self, resets_pond: bool) -> None:
        self.decision_kind = _Decision.MURRAY
        self.murray_resets_pond = resets_pond
        self.may_go_out = False

    def _finish(self, reason: str) -> None:
        self._terminal = True
        self.end_reason = reason
        self._notes.append(("game over: {}", (reason,)))

    def _next_turn(self) -> None:
        self.player = (self.player + 1) % self.num_players
        self.turn += 1
        if self.turn > self.options.max_turns:
            self._truncated = True
            self._notes.append(("turn cap {} reached: truncated", (self.options.max_turns,)))
            return
        self.decision_kind = _Decision.TURN
        self.draws_left = self.options.draw_count
        self.murray_this_turn = self.may_go_out = self.swapped = self.fly_drawn = self.passed = False
        self.events.append((_EV_TURN, self.player))
        self.hawk_draws[self.player] = 0  # an out Hawk would be in this player's hand now
        if self.hand_sizes[self.player] == 1:
            self._hawk_not_out()
        self._run()

    # ----- the Game interface -----------------------------------------------------------------------
    @property
    def log(self) -> list[str]:
        """What the last action (and the chance events it started) did, in words."""
        return [template.format(*args) for template, args in self._notes]

    @property
    def current_player(self) -> int:
        """The seat whose turn it is (every decision, Murray's target included, is theirs)."""
        return self.player

    def _seat_at(self, relative: int) -> int:
        return (self.player + relative) % self.num_players

    def _swarm_at(self, index: int) -> tuple[int, int]:
        rel, slot = divmod(index, self.options.max_swarms)
        return self._seat_at(rel), slot

    def _has_fly_swarm(self) -> bool:
        for swarms in self.swarms:
            for swarm in swarms:
                if any(swarm[: _ROBBER_FLY + 1]):  # the flies are the types 0.._ROBBER_FLY
                    return True
        return False

    def legal_mask(self) -> np.ndarray:
        """An exact mask of the current player's legal actions."""
        # Built in a bytearray (a byte written from Python costs half a numpy element write) and
        # handed out as an int8 array over it.
        mask = bytearray(self._size)
        kind = self.decision_kind
        if kind == _Decision.TURN:
            self._turn_mask(mask)
        elif kind == _Decision.MURRAY or kind == _Decision.FIREFLY_SWARM:
            start, s = self._murray if kind == _Decision.MURRAY else self._swarm, self.options.max_swarms
            for rel, seat in enumerate(self._seats_from_player()):
                first = start + rel * s
                count = len(self.swarms[seat])
                mask[first : first + count] = b"\x01" * count
        elif kind == _Decision.ROBBER_SWARM:
            start, s = self._swarm, self.options.max_swarms
            for rel, seat in enumerate(self._seats_from_player()):
                for slot, swarm in enumerate(self.swarms[seat]):
                    if any(swarm[: _ROBBER_FLY + 1]):  # the flies are the types 0.._ROBBER_FLY
                        mask[start + rel * s + slot] = 1
        elif kind == _Decision.DEER_FLY or kind == _Decision.HORNET_PLAYER:
            for rel in range(1, self.num_players):
                if self.hand_sizes[self._seat_at(rel)] >= 2:
                    mask[self._player + rel - 1] = 1
        elif kind == _Decision.DRAGONFLY:
            mask[self._pond : self._pond + len(self.pond)] = b"\x01" * len(self.pond)
        elif kind == _Decision.FIREFLY_TAKE or kind == _Decision.ROBBER_TAKE:
            owner, slot = self.chosen
            swarm = self.swarms[owner][slot]
            takeable = swarm[: _ROBBER_FLY + 1] if kind == _Decision.ROBBER_TAKE else swarm
            for t in compress(_INSECT_IDS, takeable):
                mask[self._take + t] = 1
        elif kind == _Decision.HORNET_TAKE:
            for t in compress(_INSECT_IDS, self.hands[self.target]):
                mask[self._take + t] = 1
        else:  # DISCARD
            for t in compress(_INSECT_IDS, self.hands[self.player]):
                mask[self._discard + t] = 1
        return np.frombuffer(mask, _INT8)

    def _seats_from_player(self) -> list[int]:
        """Every seat in relative order: the current player first, then clockwise."""
        p = self.player
        seats = list(range(self.num_players))
        return seats[p:] + seats[:p]

    def _turn_mask(self, mask: bytearray) -> None:
        p = self.player
        hand = self.hands[p]
        size = self.hand_sizes[p]
        hawk = hand[_HAWK]
        held = list(compress(_INSECT_IDS, hand))  # the insect types in hand
        if self.may_go_out and hawk:
            mask[self._go_out] = 1
        if not self.swapped:
            width = len(self.pond)
            ones = b"\x01" * width
            swap, pond_size = self._swap, self.options.pond_size
            for t in held:
                base = swap + t * pond_size
                mask[base : base + width] = ones
        # The hand may never become empty: playing, discarding or passing the last card is illegal.
        if size < 2:
            mask[self._end_turn] = 1
            return
        pass_ = self._pass
        if hawk:
            mask[pass_ + _HAWK] = 1
        else:
            for t in held:
                mask[pass_ + t] = 1
        # Cards this turn may still spend: the last card stays, and a Hawk holder keeps one beside
        # the Hawk, so that it can always pass the Hawk at the end of the turn (seed: "you must").
        spare = size - 2 if hawk else size - 1
        if not spare:
            return
        swarms = self.swarms[p]
        if spare >= 3 and len(swarms) < self.options.max_swarms:
            create = self._create
            for a, b, c, table in _CREATE_TABLES:
                x, y, z = hand[a], hand[b], hand[c]
                if x + y + z < 3:  # fewer than three cards of this value (z may be the Hawk: only more)
                    continue
                for i in table[(x if x < 3 else 3) * 16 + (y if y < 3 else 3) * 4 + (z if z < 3 else 3)]:
                    mask[create + i] = 1
        for slot, swarm in enumerate(swarms):
            base = self._add + slot * NUM_INSECTS
            for t in _SAME_VALUE[next(compress(_INSECT_IDS, swarm))]:
                if hand[t]:
                    mask[base + t] = 1
        self._ability_mask(mask, hand)
        if not self.fly_drawn:
            fly_draw = self._fly_draw
            for i in compress(_COMMON_SLOTS, hand):
                mask[fly_draw + i] = 1

    def _ability_mask(self, mask: bytearray, hand: list[int]) -> None:
        """The abilities in hand that have something to work on."""
        use = self._use
        if hand[_DEER_FLY] or hand[_HORNET]:  # need another player holding two cards or more
            sizes = self.hand_sizes
            # The player holds two or more (it has a card to spare), so a second such seat is needed.
            if len(sizes) - sizes.count(0) - sizes.count(1) >= 2:
                if hand[_DEER_FLY]:
                    mask[use[_DEER_FLY]] = 1
                if hand[_HORNET]:
                    mask[use[_HORNET]] = 1
        if hand[_DRAGONFLY]:
            mask[use[_DRAGONFLY]] = 1
        if hand[_FIREFLY] and self._has_swarm():
            mask[use[_FIREFLY]] = 1
        if hand[_ROBBER_FLY] and self._has_fly_swarm():
            mask[use[_ROBBER_FLY]] = 1
        if hand[_PAPER_WASP]:
            mask[use[_PAPER_WASP]] = 1

    def apply(self, action: int) -> None:
        """Apply a legal action of the current player, then resolve every chance event it starts."""
        self._notes = []
        kind = self.decision_kind
        if kind == _Decision.TURN:
            self._apply_turn(action)
        elif kind == _Decision.MURRAY:
            self._apply_murray(action - self._murray)
        elif kind == _Decision.DEER_FLY:
            victim = self._seat_at(action - self._player + 1)
            card = nth_card(self.hands[victim], random_index(self.hand_sizes[victim], self.rng))
            self._take_from(self.player, victim, card, hornet=False)
            self._notes.append(
                ("player_{} takes a {} at random from player_{}", (self.player, CARD_NAMES[card], victim))
            )
            self.decision_kind = _Decision.TURN
        elif kind == _Decision.HORNET_PLAYER:
            self.target = self._seat_at(action - self._player + 1)
            self.events.append((_EV_LOOK, self.player, self.target, tuple(self.hands[self.target])))
            self._notes.append(("player_{} looks at player_{}'s hand", (self.player, self.target)))
            self.decision_kind = _Decision.HORNET_TAKE
        elif kind == _Decision.HORNET_TAKE:
            card = action - self._take
            self._take_from(self.player, self.target, card, hornet=True)
            self.seen[self.player][self.target] = list(self.hands[self.target])
            self._notes.append(
                ("player_{} takes a {} from player_{}", (self.player, CARD_NAMES[card], self.target))
            )
            self.target = -1
            self.decision_kind = _Decision.TURN
        elif kind == _Decision.DRAGONFLY:
            card = self.pond.pop(action - self._pond)
            self._take_into_hand(self.player, card)
            self._notes.append(("player_{} takes a {} from the pond", (self.player, CARD_NAMES[card])))
            self.decision_kind = _Decision.TURN
            self.filling = True
            self._run()
        elif kind == _Decision.FIREFLY_SWARM or kind == _Decision.ROBBER_SWARM:
            self.chosen = self._swarm_at(action - self._swarm)
            nxt = _Decision.FIREFLY_TAKE if kind == _Decision.FIREFLY_SWARM else _Decision.ROBBER_TAKE
            self.decision_kind = nxt
        elif kind == _Decision.FIREFLY_TAKE or kind == _Decision.ROBBER_TAKE:
            self._apply_take(kind, action - self._take)
        else:  # DISCARD
            card = action - self._discard
            self._play_from_hand(self.player, card)
            self.discard[card] += 1
            if self.hand_sizes[self.player] <= self.options.hand_limit:
                self._next_turn()

    def _apply_turn(self, action: int) -> None:
        p = self.player
        block, i = self._decoded[action]
        self.may_go_out = False
        if block == "go_out":
            self._play_from_hand(p, _Card.HAWK)
            self.discard[_Card.HAWK] += 1
            self._finish(f"player_{p} went out with the Hawk")
        elif block == "create":
            swarm = [0] * NUM_INSECTS
            for t in SWARM_COMBOS[i]:
                self._play_from_hand(p, t)
                swarm[t] += 1
            self.swarms[p].append(swarm)
            self._swarms_changed(p)
            self._notes.append(("player_{} creates a swarm of {}", (p, COMBO_NAMES[i])))
        elif block == "add":
            slot, card = divmod(i, NUM_INSECTS)
            self._play_from_hand(p, card)
            self.swarms[p][slot][card] += 1
            self._swarms_changed(p)
            self._notes.append(("player_{} adds a {} to swarm {}", (p, CARD_NAMES[card], slot)))
        elif block == "ability":
            card = ABILITY_CARDS[i]
            self._play_from_hand(p, card)
            self.discard[card] += 1
            self._notes.append(("player_{} discards a {} to use it", (p, CARD_NAMES[card])))
            if card == _Card.DEER_FLY:
                self.decision_kind = _Decision.DEER_FLY
            elif card == _Card.DRAGONFLY:
                self.decision_kind = _Decision.DRAGONFLY
            elif card == _Card.FIREFLY:
                self.decision_kind = _Decision.FIREFLY_SWARM
            elif card == _Card.ROBBER_FLY:
                self.robber_left = 2
                self.decision_kind = _Decision.ROBBER_SWARM
            elif card == _Card.HORNET:
                self.decision_kind = _Decision.HORNET_PLAYER
            else:  # Paper Wasp
                self._reset_pond()
                self._run()
        elif block == "swap":
            card, slot = divmod(i, self.options.pond_size)
            taken = self.pond.pop(slot)
            self._swap_with_pond(p, card, taken)
            insort(self.pond, card)
            self.swapped = True
            self._notes.append(
                ("player_{} swaps a {} for the pond's {}", (p, CARD_NAMES[card], CARD_NAMES[taken]))
            )
        elif block == "fly_draw":
            card = COMMON_FLIES[i]
            self._play_from_hand(p, card)
            self.discard[card] += 1
            self.fly_drawn = True
            self._notes.append(("player_{} discards a {} and draws two", (p, CARD_NAMES[card])))
            for _ in range(2):
                drawn = self._draw()
                if drawn < 0:
                    return
                if drawn == _Card.MURRAY:  # this action cannot play Murray: discarded, not replaced
                    self._reveal(drawn)
                    self.discard[_Card.MURRAY] += 1
                    self._notes.append(("a Murray drawn this way is discarded", ()))
                else:
                    self._draw_face_down(p, drawn)
        elif block == "pass":
            left = (p + 1) % self.num_players
            self._pass_left(p, i)
            self._notes.append(("player_{} passes a card to player_{}", (p, left)))
            if self.hand_sizes[p] > self.options.hand_limit:
                self.decision_kind = _Decision.DISCARD
            else:
                self._next_turn()
        else:  # end_turn with a single card: nothing is passed
            self._notes.append(("player_{} ends the turn holding a single card", (p,)))
            self._next_turn()

    def _apply_murray(self, index: int) -> None:
        owner, slot = self._swarm_at(index)
        self.decision_kind = _Decision.TURN  # Murray is resolved even if the game ends below
        swarm = self.swarms[owner].pop(slot)
        self._swarms_changed(owner)
        for t, c in enumerate(swarm):
            self.discard[t] += c
        self.discard[_Card.MURRAY] += 1
        self.tadpoles[owner] += 1
        self._notes.append(
            ("Murray destroys player_{}'s swarm {}; player_{} gets a tadpole", (owner, slot, owner))
        )
        if self.murray_resets_pond:
            self.murray_resets_pond = False
            self._reset_pond()
        self._run()

    def _apply_take(self, kind: Decision, card: int) -> None:
        owner, slot = self.chosen
        swarm = self.swarms[owner][slot]
        swarm[card] -= 1
        if not any(swarm):  # a swarm with no card left is gone
            self.swarms[owner].pop(slot)
        self._swarms_changed(owner)
        self.chosen = (-1, -1)
        if kind == _Decision.FIREFLY_TAKE:
            self._take_into_hand(self.player, card)
            self._notes.append(
                ("player_{} takes a {} from player_{}'s swarm", (self.player, CARD_NAMES[card], owner))
            )
            self.decision_kind = _Decision.TURN
            return
        self.discard[card] += 1
        self.robber_left -= 1
        self._notes.append(("the Robber Fly discards a {} from player_{}'s swarm", (CARD_NAMES[card], owner)))
        if self.robber_left and self._has_fly_swarm():
            self.decision_kind = _Decision.ROBBER_SWARM
        else:
            self.robber_left = 0
            self.decision_kind = _Decision.TURN

    def scores(self) -> list[int]:
        """Every seat's score if the game ended now."""
        return [self.score_breakdown(p)["total"] for p in range(self.num_players)]

    def score_breakdown(self, player: int) -> dict:
        """Swarm, tadpole and card points, the hand penalty and the total of one seat."""
        return score_breakdown(self.swarms[player], self.tadpoles[player], self.hands[player], self.options)

    def returns(self) -> list[float]:
        """Zero-sum rewards: the win reward, or score differences in 'score' mode; 0 on truncation."""
        if self._truncated:  # cut off by the turn cap: skip scoring a game that did not end
            return [0.0] * self.num_players
        return final_rewards(self.scores(), truncated=False, reward_mode=self.options.reward_mode, scale=20.0)

    def decision(self) -> str:
        """The kind of decision being made, e.g. 'turn' or 'murray'."""
        return self.decision_kind.name.lower()

    # ----- hidden information ------------------------------------------------------------------------
    def resample_hidden(self, player: int | None, rng: np.random.Generator) -> None:
        """Re-deal everything `player` has not seen: another history of this game it cannot tell apart.

        Kept: everything public (hand sizes, the pond, the discard pile, swarms, tadpoles, the deck
        size and its Murrays, the reshuffle, every face-up move into or out of a hand), everything
        `player` saw (its hand, its draws, what it passed and received, its Hornet looks), every
        card the table saw go into a hand stays there until seen leaving it, and the Hawk's rules
        (once drawn it is with the turn player). The other players' hands, memories and draws and
        the order of the deck are drawn anew; see `envs.murray.posterior`.

        With `player=None` (no viewer: every hand face up) only the deck's order is unseen: every
        card outside the deck is in a hand its holder saw or on the table, and the cards left in a
        shuffled deck lie in a uniform order whatever was drawn from it, so a shuffle is exact.
        """
        if player is None:
            self.deck = shuffled(sorted(self.deck), rng)  # sorted: one seed, one deal per state
            return
        from fowlplay.envs.murray.posterior import resample  # the replay machinery is only needed here

        if not resample(self, player, rng):
            raise RedealError(
                f"resample_hidden could not re-deal for player_{player}: no replay of the game's "
                "events fitted what it saw (please report this game's seed and actions)"
            )

    def hidden_action(self, viewer: int, action: int) -> bool:
        """True if `viewer` cannot see which action of its block the current player takes.

        Only a face-down pass between two other players is hidden: the table sees that a card was
        passed, not which. Every other action id is seen by the whole table.
        """
        if self.player == viewer or not self.layout["pass"].start <= action < self.layout["pass"].stop:
            return False
        return (self.player + 1) % self.num_players != viewer

    def action_name(self, action: int) -> str:
        """Human-readable name of an action id."""
        return action_text(self, action)

    def render(self) -> str:
        """The table as an umpire sees it."""
        return table_text(self)

    def clone(self) -> MurrayGame:
        """An independent copy (faster than a deep copy)."""
        other = object.__new__(MurrayGame)
        other.__dict__.update(self.__dict__)
        other.rng = copy_rng(self.rng)
        other.hands = [list(h) for h in self.hands]
        other.hand_sizes = list(self.hand_sizes)
        other.pond = list(self.pond)
        other.deck = list(self.deck)
        other.discard = list(self.discard)
        other.swarms = [[list(s) for s in swarms] for swarms in self.swarms]
        other.swarm_stamps = list(self.swarm_stamps)
        other.tadpoles = list(self.tadpoles)
        other.hawk_seen = list(self.hawk_seen)
        other.last_passed = list(self.last_passed)
        other.last_received = list(self.last_received)
        other.seen = [[None if h is None else list(h) for h in row] for row in self.seen]
        other.shown = [list(h) for h in self.shown]
        other.shown_stamps = list(self.shown_stamps)
        other.hawk_draws = list(self.hawk_draws)
        other.events = list(self.events)
        other._notes = list(self._notes)
        return other

    def state_dict(self) -> dict[str, Any]:
        """The whole present state as plain values (deck order and hidden hands included).

        The history behind it (`start`, `events`) is left out: two games that stand the same way
        now are the same world, however they got there.
        """
        return {
            "player": self.player,
            "turn": self.turn,
            "decision": self.decision(),
            "deck": [int(c) for c in self.deck],
            "hands": [list(h) for h in self.hands],
            "hand_sizes": list(self.hand_sizes),
            "pond": [int(c) for c in self.pond],
            "discard": list(self.discard),
            "hawk_in": self.hawk_in,
            "swarms": [[list(s) for s in swarms] for swarms in self.swarms],
            "tadpoles": list(self.tadpoles),
            "hawk_seen": list(self.hawk_seen),
            "last_passed": list(self.last_passed),
            "last_received": list(self.last_received),
            "seen": [[None if h is None else list(h) for h in row] for row in self.seen],
            "shown": [list(h) for h in self.shown],
            "hawk_draws": list(self.hawk_draws),
            "passed": self.passed,
            "draws_left": self.draws_left,
            "filling": self.filling,
            "murray_resets_pond": self.murray_resets_pond,
            "murray_this_turn": self.murray_this_turn,
            "may_go_out": self.may_go_out,
            "swapped": self.swapped,
            "fly_drawn": self.fly_drawn,
            "target": self.target,
            "chosen": list(self.chosen),
            "robber_left": self.robber_left,
            "end_reason": self.end_reason,
            "terminal": self._terminal,
            "truncated": self._truncated,
        }
