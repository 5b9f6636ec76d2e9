"""Murder Most Fowl: the pure rules engine (no RL library is imported here).

Cards are ints. The bird of type t (0-based) and value v (1..max_value) is `t * max_value + v - 1`;
the four wiles follow all the birds in `Wile` order. Identical cards (two Blocking wiles) share an
id, so a hand or a pile is a multiset of ids. Each player's grid is one row of `grids`, a flat
`grid_size * grid_size` array (cell = row * grid_size + col) holding a card id or `EMPTY`. The top of
the deck and of every discard pile is the end of its list.

A turn is a chain of decisions (`Decision`): first draw, second draw, discard, play a card, then the
card's target(s). Draws, discards and everything a play sets off happen inside `apply`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from functools import cache
from types import SimpleNamespace
from typing import Any

import numpy as np
from fowlplay.envs.core import ActionLayout, Game, best_players, check_int, check_player_count, win_rewards
from fowlplay.envs.core.cards import shuffled
from fowlplay.envs.core.game import copy_rng

PLAYER_COUNTS = range(2, 5)
#: The six bird types of the published deck; a game uses the first `num_types` of them.
TYPE_NAMES = ("Birbles", "Grushes", "Piptits", "Runceys", "Thrums", "Wardlurs")
#: The mask's dtype, passed positionally: numpy's keyword parsing costs more than the call itself.
_INT8 = np.dtype(np.int8)
#: A grid cell with no card (as an index it picks the all-zero last row of a lookup table).
EMPTY = -1


class Wile(IntEnum):
    """The four wiles; a wile's escalation value is its kind + 1."""

    BLOCKING = 0
    DISCARD = 1
    SWAP = 2
    MURDER = 3


#: `Wile`'s members as plain attributes (the same objects): on Python 3.11 reading a member
#: through its enum class costs several times an attribute read, and the hot paths read them at
#: every decision.
_Wile = SimpleNamespace(**Wile.__members__)


#: Escalation needs one wile of each of these kinds in some grid (the Murder's own value, 4, is not
#: among them: it is the card that Escalation arms).
ESCALATION_WILES = (_Wile.BLOCKING, _Wile.DISCARD, _Wile.SWAP)


class Decision(IntEnum):
    """The kinds of decision a turn is split into."""

    FIRST_DRAW = 0
    SECOND_DRAW = 1
    DISCARD = 2
    PLAY = 3
    EXTRA_DISCARD = 4
    PLACE_BIRD = 5
    PLACE_BLOCKING = 6
    DISCARD_TARGET = 7
    SWAP_CELL = 8
    SWAP_TARGET = 9
    MURDER_CELL = 10
    MURDER_TARGET = 11


#: `Decision`'s members as plain attributes (the same objects): on Python 3.11 reading a member
#: through its enum class costs several times an attribute read, and the hot paths read them at
#: every decision.
_Decision = SimpleNamespace(**Decision.__members__)


DECISION_NAMES = {
    _Decision.FIRST_DRAW: "first draw",
    _Decision.SECOND_DRAW: "second draw",
    _Decision.DISCARD: "discard",
    _Decision.PLAY: "play a card",
    _Decision.EXTRA_DISCARD: "discard again (nothing playable)",
    _Decision.PLACE_BIRD: "place the bird",
    _Decision.PLACE_BLOCKING: "place the Blocking wile",
    _Decision.DISCARD_TARGET: "Discard wile target",
    _Decision.SWAP_CELL: "Swap wile cell",
    _Decision.SWAP_TARGET: "Swap wile target",
    _Decision.MURDER_CELL: "Murder wile cell",
    _Decision.MURDER_TARGET: "Murder target",
}


# ----- log lines: what `FowlGame.log` writes from each recorded event's values ---------------------
_DECK_EMPTY = "the deck is empty: the game ends".format
_LAST_ONE_PLAYING = "only player_{} is still playing: the game ends".format
_SHOWS_HAND = "player_{} cannot play and shows their hand".format
_DRAWS = "player_{} draws from the deck".format
_TAKES = "player_{} takes {} from player_{}'s pile".format
_NOTHING_TO_DRAW = "nothing left to draw".format
_DISCARDS = "player_{} discards {}".format
_PLAYS = "player_{} plays {}".format
_PUTS = "player_{} puts {} on {}".format
_INTO_GRID = "... into player_{}'s grid at {}".format
_TO_PILE = "... player_{}'s {} goes to their pile".format
_SWAPPED = "... swapped with player_{}'s {}".format
_MURDERS = "player_{} murders player_{}".format
_CAUGHT = "player_{} tries to murder player_{} and is caught".format


@dataclass
class FowlOptions:
    """Rule options of `murder_most_fowl_v0`; every default is the documented game."""

    num_players: int = 2
    #: Bird types in the deck; None follows the seed's table: 4/5/6 types for 2/3/4 players.
    num_types: int | None = None
    #: Birds of each type are numbered 1..max_value (seed: 10).
    max_value: int = 10
    #: Blocking wiles (escalation value 1) in the deck (seed: 4).
    blocking_wiles: int = 4
    #: Discard wiles (escalation value 2) in the deck (seed: 3).
    discard_wiles: int = 3
    #: Swap wiles (escalation value 3) in the deck (seed: 2).
    swap_wiles: int = 2
    #: Murder wiles (value 4) in the deck (seed: 1).
    murder_wiles: int = 1
    #: Each player's area is a grid_size x grid_size grid, first card in the centre (house: 11; the
    #: published game lays cards on an open table).
    grid_size: int = 11
    #: Shortest route that scores (seed: 4).
    min_route: int = 4
    #: A murder succeeds without Escalation if the victim's score is at least this much above
    #: the murderer's (seed: 4).
    murder_margin: int = 4

    def validate(self) -> None:
        """Raise ValueError on an impossible option."""
        check_player_count(self.num_players, PLAYER_COUNTS, "murder_most_fowl_v0")
        if self.num_types is not None:
            check_int("num_types", self.num_types, 1, len(TYPE_NAMES))
        check_int("max_value", self.max_value, 1, 20)
        check_int("blocking_wiles", self.blocking_wiles, 0)
        check_int("discard_wiles", self.discard_wiles, 0)
        check_int("swap_wiles", self.swap_wiles, 0)
        check_int("murder_wiles", self.murder_wiles, 0)
        check_int("grid_size", self.grid_size, 1, 25)
        if self.grid_size % 2 == 0:
            raise ValueError(
                f"option grid_size must be odd (the first card goes in the centre); got {self.grid_size}"
            )
        check_int("min_route", self.min_route, 1)
        check_int("murder_margin", self.murder_margin, 0)
        # Setup needs a pile card and two hand cards per player, and the first turn a deck card.
        needed = 3 * self.num_players + 1
        if self.deck_size < needed:
            raise ValueError(
                f"the deck has {self.deck_size} cards but {self.num_players} players need at least {needed}"
            )

    @property
    def types(self) -> int:
        """Bird types in play."""
        return self.num_types if self.num_types is not None else self.num_players + 2

    @property
    def num_birds(self) -> int:
        """Distinct bird cards (= the id of the first wile)."""
        return self.types * self.max_value

    @property
    def num_kinds(self) -> int:
        """Distinct card ids: every bird plus the four wiles."""
        return self.num_birds + len(Wile)

    @property
    def wile_counts(self) -> tuple[int, int, int, int]:
        """Copies of each wile, in `Wile` order."""
        return (self.blocking_wiles, self.discard_wiles, self.swap_wiles, self.murder_wiles)

    @property
    def deck_size(self) -> int:
        """Cards in a full deck."""
        return self.num_birds + sum(self.wile_counts)

    @property
    def cells(self) -> int:
        """Cells in one grid."""
        return self.grid_size * self.grid_size

    @property
    def max_score(self) -> int:
        """The best route score possible: a full run of one type, doubled."""
        return 2 * self.max_value


def action_layout(options: FowlOptions) -> ActionLayout:
    """The named action blocks; seats in actions are relative (0 = the acting player, 1 = their left)."""
    return _action_layout(options.num_players, options.num_kinds, options.cells)


@cache
def _action_layout(n: int, k: int, c: int) -> ActionLayout:
    """`action_layout` for n players, k card ids and c cells (built once: every game of an env shares it)."""
    return ActionLayout(
        [
            ("draw_deck", 1, "draw the top card of the deck"),
            ("draw_pile", n, "draw the top card of the discard pile of relative seat id (0 = my own pile)"),
            ("discard", k, "put my card with card id = id on my discard pile (also the extra discard)"),
            ("play", k, "play my card with card id = id; its target follows as the next decision"),
            (
                "own_cell",
                c,
                "put the bird, the Swap wile or the Murder wile on my grid's cell id (= row * grid_size + col)",
            ),
            (
                "opponent_cell",
                (n - 1) * c,
                "target cell id % cells of relative seat id // cells + 1: an empty cell for Blocking, "
                "a bird for Discard or Swap",
            ),
            ("murder", n - 1, "the Murder names the player at relative seat id + 1"),
        ]
    )


def full_deck(options: FowlOptions) -> list[int]:
    """Every card of the game, unshuffled."""
    deck = list(range(options.num_birds))
    for kind, copies in zip(Wile, options.wile_counts):
        deck += [options.num_birds + kind] * copies
    return deck


def card_name(card: int, max_value: int, first_wile: int) -> str:
    """'Grushes 7' or 'Swap wile'."""
    if card >= first_wile:
        return f"{Wile(card - first_wile).name.title()} wile"
    t, v = divmod(card, max_value)
    return f"{TYPE_NAMES[t]} {v + 1}"


@cache
def card_names(max_value: int, num_kinds: int) -> tuple[str, ...]:
    """`card_name` of every card id (the log records names, which it would otherwise make each move)."""
    first_wile = num_kinds - len(Wile)
    return tuple(card_name(card, max_value, first_wile) for card in range(num_kinds))


@cache
def cell_names(grid_size: int) -> tuple[str, ...]:
    """'(row,col)' of every flat cell index."""
    return tuple(f"({r},{c})" for r in range(grid_size) for c in range(grid_size))


@cache
def grid_neighbours(grid_size: int) -> tuple[tuple[int, ...], ...]:
    """The orthogonal neighbours of every cell of a flat grid."""
    out = []
    for cell in range(grid_size * grid_size):
        r, c = divmod(cell, grid_size)
        nbs = [(r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)]
        out.append(tuple(x * grid_size + y for x, y in nbs if 0 <= x < grid_size and 0 <= y < grid_size))
    return tuple(out)


def route_points(types: Iterable[int], min_length: int = 4) -> int:
    """Points of a route whose birds have these types: its length, doubled if one type is more than half."""
    types = list(types)
    if len(types) < min_length:
        return 0
    top = max(types.count(t) for t in set(types))
    return 2 * len(types) if 2 * top > len(types) else len(types)


def best_route(
    birds: Mapping[tuple[int, int], tuple[int, int]],
    min_length: int = 4,
    barred: Iterable[int] = (),
) -> tuple[int, tuple[tuple[int, int], ...]]:
    """(points, cells) of a best route through a grid's birds, {(row, col): (type, value)}; (0, ()) if none.

    A route is a chain of orthogonally adjacent birds with strictly increasing values, at least
    `min_length` long, whose first and last birds share a type that is not `barred`. Cells missing
    from `birds` (empty, or holding a wile) break routes. Among equal scores the first route found
    (starting cells in sorted order) is returned.
    """
    if len(birds) < min_length:  # too few birds for any route (the common case early in a game)
        return 0, ()
    barred = set(barred)
    higher: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for (r, c), (_, value) in birds.items():
        nbs = ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
        higher[(r, c)] = [nb for nb in nbs if nb in birds and birds[nb][1] > value]
    if not birds:
        return 0, ()
    top_value = max(value for _, value in birds.values())
    best = [0, ()]
    counts: dict[int, int] = {}
    path: list[tuple[int, int]] = []

    def walk(cell: tuple[int, int], start_type: int, majority: int) -> None:
        kind, value = birds[cell]
        path.append(cell)
        counts[kind] = counts.get(kind, 0) + 1
        majority = max(majority, counts[kind])
        length = len(path)
        if kind == start_type and length >= min_length:
            points = 2 * length if 2 * majority > length else length
            if points > best[0]:
                best[0], best[1] = points, tuple(path)
        # Values strictly increase, so at most top_value - value more birds can follow.
        reach = length + top_value - value
        if 2 * reach > best[0] and reach >= min_length:
            for nxt in higher[cell]:
                walk(nxt, start_type, majority)
        counts[kind] -= 1
        path.pop()

    for start in sorted(birds):
        start_type, value = birds[start]
        reach = top_value - value + 1
        if start_type in barred or 2 * reach <= best[0] or reach < min_length:
            continue
        walk(start, start_type, 0)
    return best[0], best[1]


class FowlGame(Game):
    """A game of Murder Most Fowl in progress."""

    def __init__(self, options: FowlOptions, rng: np.random.Generator) -> None:
        self.options = options
        self.rng = rng
        self.num_players = n = options.num_players
        self.layout = action_layout(options)
        self._size = options.grid_size
        self._centre = options.cells // 2
        self._neighbours = grid_neighbours(options.grid_size)
        self._value_base = options.max_value
        self._first_wile = options.num_birds
        self._blocks = {b.name: b.start for b in self.layout.blocks}
        # The blocks' first ids as attributes: `apply` reads them at every decision.
        self._draw_pile_at = self._blocks["draw_pile"]
        self._discard_at = self._blocks["discard"]
        self._play_at = self._blocks["play"]
        self._own_cell_at = self._blocks["own_cell"]
        self._opponent_cell_at = self._blocks["opponent_cell"]
        self._murder_at = self._blocks["murder"]
        self._card_names = card_names(options.max_value, options.num_kinds)
        self._cell_names = cell_names(options.grid_size)

        deck = shuffled(full_deck(options), rng)
        self.deck: list[int] = deck
        self.piles: list[list[int]] = [[deck.pop()] for _ in range(n)]
        self.hands: list[list[int]] = [[deck.pop(), deck.pop()] for _ in range(n)]
        #: Cards in each hand that everyone has seen (taken from a pile, or the hand was shown).
        self.known: list[list[int]] = [[] for _ in range(n)]
        self.grids = np.full((n, options.cells), EMPTY, dtype=np.int16)
        self.alive = [True] * n
        self.murdered = [False] * n
        self.caught = [False] * n
        #: Bird types recorded against each murderer (their victims' hand types): a best route
        #: that starts and ends with one of them gets the murderer arrested.
        self.recorded: list[set[int]] = [set() for _ in range(n)]
        self.to_act = 0
        self.stage = _Decision.FIRST_DRAW
        self.first_from_pile = False
        self.pending_card = EMPTY
        self.pending_cell = EMPTY
        self.turn = 1
        #: What happened since the last decision, as (line maker, its values): `log` writes the lines
        #: only when someone reads them (the game records every step, but few steps are ever read).
        self._log: list[tuple[Callable[..., str], tuple]] = []
        self._terminal = False
        self._rebuild()

    @classmethod
    def action_layout(cls, options: FowlOptions) -> ActionLayout:
        """Draws, discards, card choice and the card's target (see the rules page)."""
        return action_layout(options)

    # ----- derived state ----------------------------------------------------------------------
    def _rebuild(self) -> None:
        """Recompute every field derived from grids and piles (after setup or `arrange`)."""
        opts = self.options
        n = self.num_players
        self.frontier: list[set[int]] = []
        self.bird_cells: list[set[int]] = []
        #: Wiles of each kind (`Wile` order) lying in any grid.
        self.wiles_in_grids = [0] * len(Wile)
        #: Cards in each grid (Blocking needs a card to lie beside).
        self.placed = [0] * n
        #: `grids` as Python lists, kept in step with it by every write: the route searches and
        #: the frontier read single cells, which a list serves several times faster than numpy.
        self.grid_lists: list[list[int]] = self.grids.tolist()
        for p in range(n):
            row = self.grid_lists[p]
            taken = (self.grids[p] != EMPTY).nonzero()[0].tolist()
            self.placed[p] = len(taken)
            self.bird_cells.append({c for c in taken if row[c] < self._first_wile})
            for c in taken:
                if row[c] >= self._first_wile:
                    self.wiles_in_grids[row[c] - self._first_wile] += 1
            if taken:
                edge = {nb for c in taken for nb in self._neighbours[c] if row[nb] == EMPTY}
            else:
                edge = {self._centre}
            self.frontier.append(edge)
        self.pile_counts = np.zeros((n, opts.num_kinds), dtype=np.int16)
        for p, pile in enumerate(self.piles):
            for card in pile:
                self.pile_counts[p, card] += 1
        self._scores: list[int | None] = [None] * n
        self._clear_scores: list[int | None] = [None] * n
        #: Cells where birds were added since `_scores` / `_clear_scores` were computed (no bird
        #: has left the grid since, or the cached value would be None).
        self._score_added: list[list[int]] = [[] for _ in range(n)]
        self._clear_added: list[list[int]] = [[] for _ in range(n)]

    def arrange(
        self,
        deck: list[int] | None = None,
        hands: list[list[int]] | None = None,
        piles: list[list[int]] | None = None,
        grids: list[Mapping[tuple[int, int], int]] | None = None,
    ) -> None:
        """Stack the table (tests and puzzles): deck (top last), hands, piles (top last), grid cards by (row, col)."""
        if deck is not None:
            self.deck = list(deck)
        if hands is not None:
            self.hands = [list(h) for h in hands]
            self.known = [[] for _ in range(self.num_players)]
        if piles is not None:
            self.piles = [list(p) for p in piles]
        if grids is not None:
            self.grids[:] = EMPTY
            for p, cards in enumerate(grids):
                for (r, c), card in cards.items():
                    if not (0 <= r < self._size and 0 <= c < self._size):
                        raise ValueError(f"cell ({r},{c}) is outside the {self._size}x{self._size} grid")
                    self.grids[p, r * self._size + c] = card
        self._rebuild()

    @property
    def log(self) -> list[str]:
        """What happened since the last decision (the decision itself first), one line per event."""
        return [line(*values) for line, values in self._log]

    def card_name(self, card: int) -> str:
        """'Grushes 7' or 'Swap wile'."""
        return card_name(card, self._value_base, self._first_wile)

    def grid_birds(self, player: int) -> dict[tuple[int, int], tuple[int, int]]:
        """The birds of a player's grid as {(row, col): (type, value)}."""
        row = self.grid_lists[player]
        out = {}
        for cell in self.bird_cells[player]:
            t, v = divmod(row[cell], self._value_base)
            out[divmod(cell, self._size)] = (t, v + 1)
        return out

    def score(self, player: int) -> int:
        """A player's current best route score (0 if they have no route)."""
        cached = self._scores[player]
        added = self._score_added[player]
        if cached is None:
            cached = best_route(self.grid_birds(player), self.options.min_route)[0]
        elif added:
            # Birds only added since: every old route still stands, a new one passes a new bird.
            for cell in added:
                cached = max(cached, self._best_through(player, cell, (), cached))
        added.clear()
        self._scores[player] = cached
        return cached

    def clear_score(self, player: int) -> int:
        """The best score of a route whose end type is not recorded against the player."""
        if not self.recorded[player]:
            return self.score(player)
        cached = self._clear_scores[player]
        added = self._clear_added[player]
        if cached is None:
            birds = self.grid_birds(player)
            cached = best_route(birds, self.options.min_route, self.recorded[player])[0]
        elif added:
            for cell in added:
                cached = max(cached, self._best_through(player, cell, self.recorded[player], cached))
        added.clear()
        self._clear_scores[player] = cached
        return cached

    def _best_through(self, player: int, cell: int, barred: Iterable[int], floor: int = 0) -> int:
        """The best points of a route through the bird on `cell` (as `best_route` scores them), or `floor` if more.

        A route through it is a path down the values from it to the first bird, joined to a path up
        the values from it to the last: every pair of such paths whose ends share a type not
        `barred` is one.
        """
        cards = self.grid_lists[player]
        top, first_wile, neighbours = self._value_base, self._first_wile, self._neighbours
        # Most new birds lie on no route long enough to score, or to beat `floor` (the score so
        # far): the longest chains down and up from the bird bound every route through it.
        longest = self._chain(cards, cell, False) + self._chain(cards, cell, True) - 1
        min_length = self.options.min_route
        if longest < min_length or 2 * longest <= floor:
            return floor
        types = self.options.types

        def paths(up: bool) -> list[tuple[int, int, tuple[int, ...]]]:
            """(type at the far end, length, birds of each type) of every path from `cell`."""
            out: list[tuple[int, int, tuple[int, ...]]] = []
            counts = [0] * types

            def walk(at: int, length: int) -> None:
                kind, value = divmod(cards[at], top)
                counts[kind] += 1
                out.append((kind, length, tuple(counts)))
                for nb in neighbours[at]:
                    card = cards[nb]
                    if 0 <= card < first_wile and ((card % top > value) if up else (card % top < value)):
                        walk(nb, length + 1)
                counts[kind] -= 1

            walk(cell, 1)
            return out

        barred = set(barred)
        here = cards[cell] // top
        ups = paths(up=True)
        best = floor
        for first, down_length, down_counts in paths(up=False):
            if first in barred:
                continue
            for last, up_length, up_counts in ups:
                length = down_length + up_length - 1  # the bird on `cell` is in both paths
                if last != first or length < min_length or 2 * length <= best:
                    continue
                majority = max(a + b - (t == here) for t, (a, b) in enumerate(zip(down_counts, up_counts)))
                best = max(best, 2 * length if 2 * majority > length else length)
        return best

    def _chain(self, cards: list[int], cell: int, up: bool) -> int:
        """Birds in the longest chain from the bird on `cell` through neighbours of rising (up) or falling values."""
        top, first_wile = self._value_base, self._first_wile
        value = cards[cell] % top
        longest = 0
        for nb in self._neighbours[cell]:
            card = cards[nb]
            if 0 <= card < first_wile and ((card % top > value) if up else (card % top < value)):
                longest = max(longest, self._chain(cards, nb, up))
        return longest + 1

    def arrested(self, player: int) -> bool:
        """True if every best route of the player starts and ends with a type recorded against them.

        The arrest is judged on the table as it stands: at the end of the game it puts the murderer
        out of the winning. Among equally good routes the murderer shows one that avoids arrest;
        with no route at all there is nothing to arrest them for.
        """
        return bool(self.recorded[player]) and self.clear_score(player) < self.score(player)

    def can_win(self, player: int) -> bool:
        """Still playing and not arrested (murdered and caught players are out of the winning)."""
        return self.alive[player] and not self.arrested(player)

    @property
    def escalated(self) -> bool:
        """True once a Blocking, a Discard and a Swap wile each lie in some grid."""
        counts = self.wiles_in_grids
        return bool(counts[_Wile.BLOCKING] and counts[_Wile.DISCARD] and counts[_Wile.SWAP])

    def _place(self, player: int, cell: int, card: int) -> None:
        """Put a card on an empty cell of a player's grid."""
        self.grids[player, cell] = card
        grid = self.grid_lists[player]
        grid[cell] = card
        self.placed[player] += 1
        frontier = self.frontier[player]
        frontier.discard(cell)
        for nb in self._neighbours[cell]:
            if grid[nb] == EMPTY:
                frontier.add(nb)
        if card < self._first_wile:
            self._bird_added(player, cell)
        else:
            self.wiles_in_grids[card - self._first_wile] += 1
            # A wile on an empty cell breaks no existing route: the score stays valid.

    def _bird_added(self, player: int, cell: int) -> None:
        """Note a bird that now lies on `cell` where there was none (an empty cell, or a wile)."""
        self.bird_cells[player].add(cell)
        # A bird added breaks no route: the scores are brought up to date from this cell.
        if self._scores[player] is not None:
            self._score_added[player].append(cell)
        if self._clear_scores[player] is not None:
            self._clear_added[player].append(cell)

    def _bird_removed(self, player: int, cell: int) -> None:
        """Note the bird taken off `cell` (a wile lies there now)."""
        self.bird_cells[player].discard(cell)
        # A bird removed only breaks routes: a grid without a route (score 0) still has none, and
        # the birds added since it was scored, this one aside, bring it up to date as before.
        # Any other score is searched again.
        for cached, added in ((self._scores, self._score_added), (self._clear_scores, self._clear_added)):
            if cached[player] == 0:
                if cell in added[player]:
                    added[player].remove(cell)
            else:
                cached[player] = None

    def _take_from_hand(self, player: int, card: int) -> None:
        self.hands[player].remove(card)
        known = self.known[player]
        if card in known:
            known.remove(card)

    def _discard(self, player: int, card: int) -> None:
        self._take_from_hand(player, card)
        self.piles[player].append(card)
        self.pile_counts[player, card] += 1

    # ----- turn flow ------------------------------------------------------------------------------
    def _start_turn(self, player: int) -> None:
        if not self.deck:
            self._log.append((_DECK_EMPTY, ()))
            self._terminal = True
            return
        self.to_act = player
        self.stage = _Decision.FIRST_DRAW
        self.first_from_pile = False

    def _end_turn(self) -> None:
        self.pending_card = self.pending_cell = EMPTY
        alive, n = self.alive, self.num_players
        if alive.count(True) == 1:
            self._log.append((_LAST_ONE_PLAYING, (alive.index(True),)))
            self._terminal = True
            return
        nxt = (self.to_act + 1) % n
        while not alive[nxt]:
            nxt = (nxt + 1) % n
        self.turn += 1
        self._start_turn(nxt)

    def _can_draw_second(self) -> bool:
        if self.first_from_pile:
            return bool(self.deck)
        return bool(self.deck) or any(self.piles)

    def _opponents(self, player: int) -> list[int]:
        """Living opponents of `player` (the only legal targets of wiles and Murder)."""
        n = self.num_players
        return [(player + j) % n for j in range(1, n) if self.alive[(player + j) % n]]

    def _playable(self, player: int, card: int) -> bool:
        if card < self._first_wile:
            return bool(self.frontier[player])
        kind = card - self._first_wile
        if kind == _Wile.MURDER:
            # Played into my own grid like any card; a living opponent exists while the game runs.
            return bool(self.frontier[player])
        if kind == _Wile.BLOCKING:
            return any(self.placed[q] and self.frontier[q] for q in self._opponents(player))
        has_bird = any(self.bird_cells[q] for q in self._opponents(player))
        if kind == _Wile.DISCARD:
            return has_bird
        return has_bird and bool(self.frontier[player])

    def _any_playable(self, player: int) -> bool:
        """True if the player holds a card they can play now."""
        hand = self.hands[player]
        # A bird is playable wherever the player's grid has room: the usual case, checked first.
        if hand and min(hand) < self._first_wile and self.frontier[player]:
            return True
        return any(self._playable(player, card) for card in set(hand))

    def _after_discard(self) -> None:
        player = self.to_act
        if self._any_playable(player):
            self.stage = _Decision.PLAY
        else:
            # house: the player shows their hand to prove nothing can be played
            self.known[player] = list(self.hands[player])
            self._log.append((_SHOWS_HAND, (player,)))
            self.stage = _Decision.EXTRA_DISCARD

    # ----- the Game interface -------------------------------------------------------------------
    def legal_mask(self) -> np.ndarray:
        """1 for each legal action of the acting player at the current decision."""
        # Built in a bytearray (a byte written from Python costs less than a numpy element or a
        # fancy-indexed write) and handed out as an int8 array over it.
        mask = bytearray(self.layout.size)
        b = self._blocks
        me = self.to_act
        n = self.num_players
        stage = self.stage
        if stage == _Decision.FIRST_DRAW or stage == _Decision.SECOND_DRAW:
            if self.deck:
                mask[b["draw_deck"]] = 1
            if stage == _Decision.FIRST_DRAW or not self.first_from_pile:
                for j in range(n):
                    if self.piles[(me + j) % n]:
                        mask[b["draw_pile"] + j] = 1
        elif stage == _Decision.DISCARD or stage == _Decision.EXTRA_DISCARD:
            start = b["discard"]
            for card in self.hands[me]:
                mask[start + card] = 1
        elif stage == _Decision.PLAY:
            start, first_wile, room = b["play"], self._first_wile, bool(self.frontier[me])
            for card in set(self.hands[me]):
                # A bird needs room in my grid (`_playable`, inlined for the common card).
                playable = room if card < first_wile else self._playable(me, card)
                if playable:
                    mask[start + card] = 1
        elif stage == _Decision.PLACE_BIRD or stage == _Decision.SWAP_CELL or stage == _Decision.MURDER_CELL:
            start = b["own_cell"]
            for c in self.frontier[me]:
                mask[start + c] = 1
        elif stage == _Decision.MURDER_TARGET:
            for q in self._opponents(me):
                mask[b["murder"] + (q - me) % n - 1] = 1
        else:
            cells = self.options.cells
            for q in self._opponents(me):
                start = b["opponent_cell"] + ((q - me) % n - 1) * cells
                if stage == _Decision.PLACE_BLOCKING:
                    if self.placed[q]:
                        for c in self.frontier[q]:
                            mask[start + c] = 1
                else:
                    for c in self.bird_cells[q]:
                        mask[start + c] = 1
        return np.frombuffer(mask, _INT8)

    def apply(self, action: int) -> None:
        """Apply one decision of the acting player and everything it sets off."""
        self._log = []
        me = self.to_act
        stage = self.stage
        if action < self._discard_at:
            pile = self._draw_pile_at
            self._apply_draw(me, action - pile if action >= pile else -1)
        elif action < self._play_at:
            card = action - self._discard_at
            self._discard(me, card)
            self._log.append((_DISCARDS, (me, self._card_names[card])))
            if stage == _Decision.DISCARD:
                self._after_discard()
            else:
                self._end_turn()
        elif action < self._own_cell_at:
            self._choose_card(me, action - self._play_at)
        elif action < self._opponent_cell_at:
            cell = action - self._own_cell_at
            card = self.pending_card
            self._place(me, cell, card)
            self._log.append((_PUTS, (me, self._card_names[card], self._cell_names[cell])))
            if stage == _Decision.SWAP_CELL or stage == _Decision.MURDER_CELL:
                self.pending_cell = cell
                self.stage = (
                    _Decision.SWAP_TARGET if stage == _Decision.SWAP_CELL else _Decision.MURDER_TARGET
                )
            else:
                self._end_turn()
        elif action < self._murder_at:
            j, cell = divmod(action - self._opponent_cell_at, self.options.cells)
            self._wile_on(me, (me + j + 1) % self.num_players, cell)
            self._end_turn()
        else:
            self._murder(me, (me + action - self._murder_at + 1) % self.num_players)
            self._end_turn()

    def _apply_draw(self, me: int, relative_pile: int) -> None:
        if relative_pile < 0:
            self.hands[me].append(self.deck.pop())
            self._log.append((_DRAWS, (me,)))
        else:
            seat = (me + relative_pile) % self.num_players
            card = self.piles[seat].pop()
            self.pile_counts[seat, card] -= 1
            self.hands[me].append(card)
            self.known[me].append(card)
            self._log.append((_TAKES, (me, self._card_names[card], seat)))
        if self.stage == _Decision.FIRST_DRAW:
            self.first_from_pile = relative_pile >= 0
            if self._can_draw_second():
                self.stage = _Decision.SECOND_DRAW
                return
            self._log.append((_NOTHING_TO_DRAW, ()))  # house: the turn goes on with one card drawn
        self.stage = _Decision.DISCARD

    def _choose_card(self, me: int, card: int) -> None:
        self._take_from_hand(me, card)
        self.pending_card = card
        self._log.append((_PLAYS, (me, self._card_names[card])))
        if card < self._first_wile:
            self.stage = _Decision.PLACE_BIRD
        else:
            self.stage = (
                _Decision.PLACE_BLOCKING,
                _Decision.DISCARD_TARGET,
                _Decision.SWAP_CELL,
                _Decision.MURDER_CELL,
            )[card - self._first_wile]

    def _wile_on(self, me: int, victim: int, cell: int) -> None:
        card = self.pending_card
        if self.stage == _Decision.PLACE_BLOCKING:
            self._place(victim, cell, card)
            self._log.append((_INTO_GRID, (victim, self._cell_names[cell])))
            return
        bird = self.grid_lists[victim][cell]
        self.grids[victim, cell] = self.grid_lists[victim][cell] = card
        self._bird_removed(victim, cell)
        if self.stage == _Decision.DISCARD_TARGET:
            self.wiles_in_grids[_Wile.DISCARD] += 1
            self.piles[victim].append(bird)
            self.pile_counts[victim, bird] += 1
            self._log.append((_TO_PILE, (victim, self._card_names[bird])))
        else:
            # The Swap wile already lies in my grid (it was counted then); it only changes grids.
            own = self.pending_cell
            self.grids[me, own] = self.grid_lists[me][own] = bird
            self._bird_added(me, own)  # where my Swap wile lay: no route of mine is broken
            self._log.append((_SWAPPED, (victim, self._card_names[bird])))

    def murder_succeeds(self, murderer: int, victim: int) -> bool:
        """The Murder check: the victim leads by at least `murder_margin`, or Escalation has happened."""
        return self.escalated or self.score(victim) >= self.score(murderer) + self.options.murder_margin

    def _murder(self, me: int, victim: int) -> None:
        # The Murder card already lies in my grid (placed at MURDER_CELL), where it stays.
        if self.murder_succeeds(me, victim):
            self.alive[victim] = False
            self.murdered[victim] = True
            # house: the victim's hand is shown so that its bird types can be recorded
            self.known[victim] = list(self.hands[victim])
            types = {c // self._value_base for c in self.hands[victim] if c < self._first_wile}
            self.recorded[me] |= types
            self._clear_scores[me] = None
            self._log.append((_MURDERS, (me, victim)))
        else:
            self.alive[me] = False
            self.caught[me] = True
            self._log.append((_CAUGHT, (me, victim)))

    def potential(self, player: int) -> float:
        """The player's lead over the best other player who can win, / max_score; -1 if out of the winning (public)."""
        if not self.can_win(player):
            return -1.0
        others = [self.score(q) for q in range(self.num_players) if q != player and self.can_win(q)]
        lead = self.score(player) - max(others, default=0)
        return max(-1.0, min(1.0, lead / self.options.max_score))

    def returns(self) -> list[float]:
        """Win rewards: the best score among players who can win takes it, ties share; nobody: all 0."""
        return win_rewards(self.winners(), self.num_players)

    def winners(self) -> list[int]:
        """Seats with the best score among players still playing and not arrested (may be none)."""
        eligible = [p for p in range(self.num_players) if self.can_win(p)]
        return best_players([self.score(p) for p in range(self.num_players)], eligible)

    def decision(self) -> str:
        """Name of the current decision kind."""
        return DECISION_NAMES[self.stage]

    def cell_name(self, cell: int) -> str:
        """'(row,col)' of a flat cell index."""
        r, c = divmod(cell, self._size)
        return f"({r},{c})"

    def action_name(self, action: int) -> str:
        """Human-readable name of an action in the current state."""
        block, i = self.layout.decode(action)
        me, n = self.to_act, self.num_players
        if block == "draw_deck":
            return "draw from the deck"
        if block == "draw_pile":
            seat = (me + i) % n
            top = self.card_name(self.piles[seat][-1]) if self.piles[seat] else "empty"
            return f"draw the top of player_{seat}'s pile ({top})"
        if block == "discard":
            return f"discard {self.card_name(i)}"
        if block == "play":
            return f"play {self.card_name(i)}"
        if block == "own_cell":
            return f"to my cell {self.cell_name(i)}"
        if block == "opponent_cell":
            j, cell = divmod(i, self.options.cells)
            return f"to player_{(me + j + 1) % n}'s cell {self.cell_name(cell)}"
        return f"murder player_{(me + i + 1) % n}"

    def resample_hidden(self, player: int | None, rng: np.random.Generator) -> None:
        """Re-deal the deck and every card in other hands nobody has seen, from the exact posterior.

        Kept: `player`'s hand; in every other hand the cards everyone saw go in (`known`) and the
        number of cards; piles, grids and everything else on the table. The unseen cards are dealt
        uniformly (a shuffle of the deck with the unseen hand cards): every card that left a hand
        was shown, so no other past event tells them apart. One public fact is about the present:
        an opponent deciding which card to play was seen not to have to show their hand, so they
        hold a playable card; deals breaking that are rejected and drawn again. With `player=None`
        (no viewer: every hand face up) only the deck's order is unseen, and it is uniform.
        """
        if player is None:
            self.deck = shuffled(sorted(self.deck), rng)  # sorted: see below
            return
        pool = list(self.deck)
        unseen_counts = []
        for q in range(self.num_players):
            if q == player:
                unseen_counts.append(0)
                continue
            rest = list(self.hands[q])
            for card in self.known[q]:
                rest.remove(card)
            pool += rest
            unseen_counts.append(len(rest))
        # Rejection keeps the weights of the chance process among the deals that pass.
        must_play = self.to_act if self.stage == _Decision.PLAY and self.to_act != player else None
        # Sorted first: the re-deal must not depend on the hidden order it replaces, so that for
        # one seed every state of the information set re-deals alike (search agents rely on it).
        pool.sort()
        while True:
            deal = shuffled(pool, rng)
            hands = [list(h) for h in self.hands]
            for q, k in enumerate(unseen_counts):
                if q != player:
                    hands[q] = list(self.known[q]) + deal[:k]
                    deal = deal[k:]
            if must_play is None or any(self._playable(must_play, c) for c in set(hands[must_play])):
                break
        self.hands = hands
        self.deck = deal

    def clone(self) -> FowlGame:
        """An independent copy (faster than a deep copy)."""
        other = object.__new__(FowlGame)
        other.__dict__.update(self.__dict__)
        other.rng = copy_rng(self.rng)
        other.deck = list(self.deck)
        other.piles = [list(p) for p in self.piles]
        other.hands = [list(h) for h in self.hands]
        other.known = [list(k) for k in self.known]
        other.grids = self.grids.copy()
        other.grid_lists = [list(row) for row in self.grid_lists]
        other.pile_counts = self.pile_counts.copy()
        other.frontier = [set(f) for f in self.frontier]
        other.bird_cells = [set(c) for c in self.bird_cells]
        other.wiles_in_grids = list(self.wiles_in_grids)
        other.placed = list(self.placed)
        other._scores = list(self._scores)
        other._clear_scores = list(self._clear_scores)
        other._score_added = [list(cells) for cells in self._score_added]
        other._clear_added = [list(cells) for cells in self._clear_added]
        other.alive = list(self.alive)
        other.murdered = list(self.murdered)
        other.caught = list(self.caught)
        other.recorded = [set(t) for t in self.recorded]
        other._log = list(self._log)
        return other

    def state_dict(self) -> dict[str, Any]:
        """Everything, as plain values (hands and deck order included)."""
        return {
            "deck": list(self.deck),
            # A hand is a set of cards: the order they came in is no part of the world.
            "hands": [sorted(h) for h in self.hands],
            "known": [sorted(k) for k in self.known],
            "piles": [list(p) for p in self.piles],
            "grids": self.grids.tolist(),
            "alive": list(self.alive),
            "murdered": list(self.murdered),
            "caught": list(self.caught),
            "recorded": [sorted(t) for t in self.recorded],
            "to_act": self.to_act,
            "stage": int(self.stage),
            "first_from_pile": self.first_from_pile,
            "pending_card": self.pending_card,
            "pending_cell": self.pending_cell,
            "turn": self.turn,
            "terminal": self._terminal,
        }

    # ----- pictures -----------------------------------------------------------------------------------
    def _cell_text(self, card: int) -> str:
        if card == EMPTY:
            return " . "
        if card >= self._first_wile:
            return "[" + "BDSM"[card - self._first_wile] + "]"
        t, v = divmod(card, self._value_base)
        return f"{TYPE_NAMES[t][0]}{v + 1:<2}"

    def grid_picture(self, player: int) -> list[str]:
        """Rows of a player's grid, cropped to the cards (bird = type initial + value, wile = [B]/[D]/[S]/[M])."""
        size = self._size
        taken = np.flatnonzero(self.grids[player] != EMPTY)
        if taken.size == 0:
            return ["(empty grid)"]
        rows, cols = np.divmod(taken, size)
        r0, r1 = max(rows.min() - 1, 0), min(rows.max() + 1, size - 1)
        c0, c1 = max(cols.min() - 1, 0), min(cols.max() + 1, size - 1)
        out = ["     " + " ".join(f"{c:^3}" for c in range(c0, c1 + 1))]
        for r in range(r0, r1 + 1):
            cells = " ".join(
                self._cell_text(int(self.grids[player, r * size + c])) for c in range(c0, c1 + 1)
            )
            out.append(f"  {r:>2} {cells}")
        return out

    def render(self) -> str:
        """The table as an umpire sees it: every grid, hand, pile top and score."""
        lines = [
            f"Murder Most Fowl - turn {self.turn}, deck {len(self.deck)} cards, "
            f"escalation {'yes' if self.escalated else 'no'}"
        ]
        for p in range(self.num_players):
            status = "playing" if self.alive[p] else ("murdered" if self.murdered[p] else "caught")
            marks = [status]
            if not self.over and p == self.to_act:
                marks.append(f"to act: {self.decision()}")
            if self.recorded[p]:
                marks.append("recorded " + "/".join(TYPE_NAMES[t] for t in sorted(self.recorded[p])))
                if self.arrested(p):
                    marks.append("arrested")
            hand = ", ".join(self.card_name(c) for c in sorted(self.hands[p])) or "-"
            top = self.card_name(self.piles[p][-1]) if self.piles[p] else "-"
            lines.append(
                f"player_{p}: score {self.score(p)} ({'; '.join(marks)})  hand [{hand}]  "
                f"pile {len(self.piles[p])} (top {top})"
            )
            lines.extend("  " + row for row in self.grid_picture(p))
        if self.pending_card != EMPTY and not self.over:
            lines.append(f"  being played: {self.card_name(self.pending_card)}")
        if self.over:
            winners = ", ".join(f"player_{p}" for p in self.winners()) or "nobody (every reward is 0)"
            lines.append("game over: winner(s) " + winners)
        log = self.log
        if log:
            lines.append("  last: " + "; ".join(log))
        return "\n".join(lines)
