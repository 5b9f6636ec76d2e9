"""A rule-based Murder Most Fowl agent that decides only from its own observation.

It values a grid as its best route score plus half the best "partial route" (same rule, but two
birds are enough), so it builds towards routes before they score. Every decision is greedy on
that value: birds go where they add most, a discard-pile top is taken only if it adds at least a
point, the least useful card is discarded, Discard and Swap wiles hit the opponent who loses most,
and a Murder is played only when the check will succeed (it is kept otherwise), on the cell of its
own grid beside the fewest birds.
"""

from __future__ import annotations

import numpy as np
from fowlplay.envs.core.agents import Agent
from fowlplay.envs.fowl.observation import FowlObserver
from fowlplay.envs.fowl.rules import (
    Decision,
    FowlOptions,
    Wile,
    action_layout,
    best_route,
    full_deck,
    grid_neighbours,
)

#: Weight of the partial-route value next to the real score.
PARTIAL_WEIGHT = 0.5
#: A discard-pile top is drawn instead of the deck only if it adds at least this much value.
PILE_GAIN = 1.0
#: Value of keeping wiles that have nothing better to do (a Blocking wile, a Murder for later:
#: a Murder in my hand is one nobody can use against me).
KEEP_BLOCKING, KEEP_MURDER = 0.3, 5.0
#: Penalty for the wile that completes Escalation while I hold no Murder (it arms everyone else).
ARMING_PENALTY = 3.0
#: Value of a Murder that would succeed now: above everything else.
WINNING_MURDER = 100.0
#: A murder that ends the game is not tried while the chance of being arrested at once is above this
#: (unless the victim is winning anyway); after Escalation the one Murder card can wait in my hand.
MAX_ARREST_RISK = 0.35
#: Grid values remembered between decisions (a pure cache: it never changes a decision).
CACHE_SIZE = 20_000


def partial_route(birds: dict[tuple[int, int], tuple[int, int]], barred=()) -> int:
    """Length of the longest increasing chain of adjacent birds whose two ends share a type (1 bird counts).

    A dynamic programme in value order: for every bird and start type, the longest chain that
    starts at a bird of that type and ends here.
    """
    longest: dict[tuple[int, int], dict[int, int]] = {}
    best = 0
    for cell in sorted(birds, key=lambda key: birds[key][1]):
        kind, value = birds[cell]
        r, c = cell
        here = {kind: 1}
        for nb in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if nb in longest and birds[nb][1] < value:
                for start, length in longest[nb].items():
                    if length + 1 > here.get(start, 0):
                        here[start] = length + 1
        longest[cell] = here
        if kind not in barred and here[kind] > best:
            best = here[kind]
    return best


class BaselineAgent(Agent):
    """Greedy route builder with safe murders for `murder_most_fowl_v0`."""

    name = "baseline"

    def __init__(self, options: FowlOptions | None = None, seed: int | None = None) -> None:
        self.options = options or FowlOptions()
        self.observer = FowlObserver(self.options)
        self.layout = action_layout(self.options)
        self.blocks = {b.name: b.start for b in self.layout.blocks}
        self.neighbours = grid_neighbours(self.options.grid_size)
        self._values: dict = {}
        self._full_counts = np.bincount(full_deck(self.options), minlength=self.options.num_kinds)

    # ----- reading the observation -----------------------------------------------------------
    def _read(self, observation: np.ndarray) -> dict:
        """The table as this agent sees it: grids as card ids, hand, pile tops, scores, flags."""
        opts = self.options
        n, k, c, t = opts.num_players, opts.num_kinds, opts.cells, opts.types
        parts = self.observer.decode(observation)
        feats = parts["grids"].reshape(n, c, -1)
        is_bird = feats[:, :, :t].sum(axis=2) > 0
        bird_ids = (
            feats[:, :, :t].argmax(axis=2) * opts.max_value + np.rint(feats[:, :, t] * opts.max_value) - 1
        )
        wile = feats[:, :, t + 1 :]
        grids = np.where(is_bird, bird_ids, -1)
        grids = np.where(wile.sum(axis=2) > 0, opts.num_birds + wile.argmax(axis=2), grids).astype(int)
        tops = parts["pile_tops"].reshape(n, k)
        known = np.rint(parts["known_hands"].reshape(n, k)).astype(int)
        hand_counts = np.rint(parts["my_hand"]).astype(int)
        # Cards nobody has seen: in the deck or hidden in other hands.
        unseen = self._full_counts - hand_counts - known.sum(axis=0)
        unseen -= np.rint(parts["pile_contents"].reshape(n, k)).astype(int).sum(axis=0)
        placed = grids[grids >= 0]
        unseen -= np.bincount(placed, minlength=k)[:k]
        return {
            "decision": int(np.argmax(parts["decision"])),
            "hand": np.repeat(np.arange(k), np.rint(parts["my_hand"]).astype(int)).tolist(),
            "pending_card": int(np.argmax(parts["pending_card"])) if parts["pending_card"].any() else -1,
            "pending_cell": int(np.argmax(parts["pending_cell"])) if parts["pending_cell"].any() else -1,
            "grids": grids,
            "tops": [int(np.argmax(tops[i])) if tops[i].any() else -1 for i in range(n)],
            "playing": parts["playing"] > 0.5,
            # Routes ending in a type recorded against a seat would get it arrested: not worth building.
            "barred": parts["recorded_types"].reshape(n, t) > 0.5,
            "scores": np.rint(parts["scores"] * opts.max_score).astype(int),
            "known": known,
            "hidden_in_hand": np.rint(parts["hand_sizes"] * 4).astype(int) - known.sum(axis=1),
            "unseen": unseen,
            "escalation": bool(parts["escalation"][0] > 0.5),
            "wiles_in_grids": (parts["wiles_in_grids"] > 0.5).tolist(),
        }

    def _birds(self, grid: np.ndarray) -> dict[tuple[int, int], tuple[int, int]]:
        size, top = self.options.grid_size, self.options.max_value
        birds = {}
        for cell in np.flatnonzero((grid >= 0) & (grid < self.options.num_birds)).tolist():
            kind, value = divmod(int(grid[cell]), top)
            birds[divmod(cell, size)] = (kind, value + 1)
        return birds

    def _value(self, birds: dict, barred) -> float:
        # The same grids come back decision after decision within a turn: remember their values.
        key = (frozenset(birds.items()), tuple(barred))
        value = self._values.get(key)
        if value is None:
            score = best_route(birds, self.options.min_route, barred)[0]
            value = score + PARTIAL_WEIGHT * partial_route(birds, barred)
            if len(self._values) > CACHE_SIZE:
                self._values.clear()
            self._values[key] = value
        return value

    def _frontier(self, grid: np.ndarray) -> list[int]:
        taken = np.flatnonzero(grid >= 0)
        if taken.size == 0:
            return [self.options.cells // 2]
        return sorted({nb for cell in taken for nb in self.neighbours[cell] if grid[nb] < 0})

    def _barred(self, view: dict, seat: int) -> list[int]:
        return np.flatnonzero(view["barred"][seat]).tolist()

    # ----- valuations ----------------------------------------------------------------------------
    def _best_cell(self, view: dict, card: int, cells: list[int] | None = None) -> tuple[float, int]:
        """(gain, cell): where a bird adds most value to my grid."""
        grid = view["grids"][0]
        birds = self._birds(grid)
        barred = self._barred(view, 0)
        base = self._value(birds, barred)
        size, top = self.options.grid_size, self.options.max_value
        bird = (card // top, card % top + 1)
        best = (-1.0, -1)
        for cell in self._frontier(grid) if cells is None else cells:
            if not any(0 <= grid[nb] < self.options.num_birds for nb in self.neighbours[cell]):
                if best[0] < 0.0:
                    best = (0.0, cell)  # a bird with no bird beside it joins no route yet
                continue
            birds[divmod(cell, size)] = bird
            gain = self._value(birds, barred) - base
            del birds[divmod(cell, size)]
            if gain > best[0]:
                best = (gain, cell)
        return best

    def _attacks(self, view: dict) -> list[tuple[float, int, int, int]]:
        """(opponent's loss, relative seat, cell, bird) for every bird of a living opponent."""
        size = self.options.grid_size
        out = []
        for seat in range(1, self.options.num_players):
            if not view["playing"][seat]:
                continue
            grid = view["grids"][seat]
            birds = self._birds(grid)
            barred = self._barred(view, seat)
            base = self._value(birds, barred)
            for key in list(birds):
                bird = birds.pop(key)
                loss = base - self._value(birds, barred)
                birds[key] = bird
                # Hurting the leader matters more than hurting the trailer.
                out.append((loss + 0.1 * view["scores"][seat], seat, key[0] * size + key[1], bird))
        return out

    def _murder_target(self, view: dict) -> int:
        """Relative seat a Murder would succeed against (the highest scorer), or -1.

        When the murder would end the game (two players left) and would likely get me arrested at
        once, there is no target, unless the victim is ahead of me anyway.
        """
        margin = self.options.murder_margin
        best, target = -1, -1
        for seat in range(1, self.options.num_players):
            ok = view["escalation"] or view["scores"][seat] >= view["scores"][0] + margin
            if view["playing"][seat] and ok and view["scores"][seat] > best:
                best, target = view["scores"][seat], seat
        ends_game = target > 0 and view["playing"].sum() == 2
        if (
            ends_game
            and view["scores"][target] <= view["scores"][0]
            and self._arrest_risk(view, target) > MAX_ARREST_RISK
        ):
            return -1
        return target

    def _arrest_risk(self, view: dict, seat: int) -> float:
        """Chance that the victim's hand holds the end type of every best route of mine."""
        opts = self.options
        birds = self._birds(view["grids"][0])
        score = best_route(birds, opts.min_route)[0]
        if score == 0:
            return 0.0  # no route, no arrest
        top, risk = opts.max_value, 1.0
        for kind in range(opts.types):
            others = [t for t in range(opts.types) if t != kind]
            if best_route(birds, opts.min_route, others)[0] < score:
                continue  # no best route ends in this type
            if view["known"][seat, kind * top : (kind + 1) * top].any():
                continue  # seen in their hand: certain
            # Their hidden cards are drawn from everything unseen: none of them of this type?
            unseen = int(view["unseen"].sum())
            of_kind = int(view["unseen"][kind * top : (kind + 1) * top].sum())
            hidden = int(view["hidden_in_hand"][seat])
            miss = 1.0
            for i in range(hidden):
                miss *= max(unseen - of_kind - i, 0) / max(unseen - i, 1)
            risk *= 1.0 - miss
        return risk

    def _card_value(self, view: dict, card: int, playing: bool) -> float:
        """How much this card is worth to me: to play now, or (not `playing`) to keep."""
        first_wile = self.options.num_birds
        if card < first_wile:
            return max(self._best_cell(view, card)[0], 0.0)
        kind = card - first_wile
        if kind == Wile.MURDER:
            if self._murder_target(view) >= 0:
                return WINNING_MURDER
            return -WINNING_MURDER if playing else KEEP_MURDER
        others = [k for k in range(len(view["wiles_in_grids"])) if k != kind]
        arming = (
            not view["wiles_in_grids"][kind]
            and all(view["wiles_in_grids"][k] for k in others)
            and first_wile + Wile.MURDER not in view["hand"]
        )
        penalty = ARMING_PENALTY if arming and playing else 0.0
        if kind == Wile.BLOCKING:
            return KEEP_BLOCKING - penalty
        attacks = self._attacks(view)
        if not attacks:
            return -penalty
        if kind == Wile.DISCARD:
            return max(a[0] for a in attacks) - penalty
        return max(self._swap_plan(view, attacks)[0], 0.0) - penalty

    def _swap_plan(self, view: dict, attacks=None) -> tuple[float, int, int, int]:
        """(value, my cell, relative seat, their cell) of the best Swap."""
        attacks = self._attacks(view) if attacks is None else attacks
        cells = [view["pending_cell"]] if view["pending_cell"] >= 0 else None
        best = (-1.0, -1, -1, -1)
        top = self.options.max_value
        for loss, seat, cell, bird in attacks:
            gain, mine = self._best_cell(view, (bird[0]) * top + bird[1] - 1, cells)
            if gain + loss > best[0]:
                best = (gain + loss, mine, seat, cell)
        return best

    def _playable(self, view: dict, card: int) -> bool:
        """Whether the rules let me play `card` now (the rules' own test, read from my observation)."""
        opts = self.options
        grids, birds = view["grids"], opts.num_birds
        room = bool(self._frontier(grids[0]))
        kind = card - birds
        if card < birds or kind == Wile.MURDER:
            return room
        living = [grids[seat] for seat in range(1, opts.num_players) if view["playing"][seat]]
        if kind == Wile.BLOCKING:
            return any((grid >= 0).any() and self._frontier(grid) for grid in living)
        has_bird = any(((grid >= 0) & (grid < birds)).any() for grid in living)
        return has_bird and (kind == Wile.DISCARD or room)

    def _murder_forced(self, view: dict, discard: int) -> bool:
        """True if discarding `discard` leaves a Murder that would fail as the only card I can play.

        The rules make a player play a card when one is playable, so keeping a doomed Murder beside
        nothing else playable (an empty table on turn 1, say) throws the game away.
        """
        murder = self.options.num_birds + Wile.MURDER
        hand = list(view["hand"])
        if discard == murder or murder not in hand or self._murder_target(view) >= 0:
            return False
        hand.remove(discard)
        hand.remove(murder)
        return not any(self._playable(view, card) for card in hand)

    def _quiet_cell(self, view: dict, cells: list[int]) -> int:
        """The cell of my grid beside the fewest birds (a wile there breaks the fewest routes)."""
        grid = view["grids"][0]
        birds = self.options.num_birds
        return min(cells, key=lambda cell: (sum(0 <= grid[nb] < birds for nb in self.neighbours[cell]), cell))

    def _blocking_cell(self, view: dict, legal: np.ndarray) -> int:
        """A legal Blocking action beside as many of the leading opponent's birds as possible."""
        cells, start = self.options.cells, self.blocks["opponent_cell"]
        best, choice = (-1.0, -1), int(legal[0])
        for action in legal:
            j, cell = divmod(int(action) - start, cells)
            grid = view["grids"][j + 1]
            beside = sum(1 for nb in self.neighbours[cell] if 0 <= grid[nb] < self.options.num_birds)
            key = (view["scores"][j + 1] + 0.5 * beside, -action)
            if key > best:
                best, choice = key, int(action)
        return choice

    # ----- deciding --------------------------------------------------------------------------------
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The greedy best legal action."""
        view = self._read(observation)
        b = self.blocks
        legal = np.flatnonzero(action_mask)
        decision = view["decision"]
        if decision in (Decision.FIRST_DRAW, Decision.SECOND_DRAW):
            return self._draw(view, action_mask)
        if decision in (Decision.DISCARD, Decision.EXTRA_DISCARD):
            cards = (legal - b["discard"]).tolist()
            card = min(cards, key=lambda card: (self._card_value(view, card, False), card))
            if decision == Decision.DISCARD and self._murder_forced(view, card):
                card = self.options.num_birds + Wile.MURDER  # discard it rather than play it to fail
            return b["discard"] + card
        if decision == Decision.PLAY:
            cards = (legal - b["play"]).tolist()
            return b["play"] + max(cards, key=lambda card: (self._card_value(view, card, True), -card))
        if decision == Decision.PLACE_BIRD:
            cells = (legal - b["own_cell"]).tolist()
            return b["own_cell"] + self._best_cell(view, view["pending_card"], cells)[1]
        if decision == Decision.MURDER_CELL:
            return b["own_cell"] + self._quiet_cell(view, (legal - b["own_cell"]).tolist())
        if decision == Decision.SWAP_CELL:
            cell = self._swap_plan(view)[1]
            return b["own_cell"] + cell if action_mask[b["own_cell"] + cell] else int(legal[0])
        if decision in (Decision.DISCARD_TARGET, Decision.SWAP_TARGET):
            if decision == Decision.SWAP_TARGET:
                _, _, seat, cell = self._swap_plan(view)
            else:
                _, seat, cell, _ = max(self._attacks(view))
            action = b["opponent_cell"] + (seat - 1) * self.options.cells + cell
            return action if action_mask[action] else int(legal[0])
        if decision == Decision.PLACE_BLOCKING:
            return self._blocking_cell(view, legal)
        target = self._murder_target(view)
        if target < 0:  # forced to murder without a chance: name the leader
            target = 1 + int(np.argmax(view["scores"][1:] + 100 * view["playing"][1:]))
        action = b["murder"] + target - 1
        return action if action_mask[action] else int(legal[0])

    def _draw(self, view: dict, mask: np.ndarray) -> int:
        """A pile top that adds a point (or a winning Murder), else the deck."""
        b = self.blocks
        best, choice = PILE_GAIN, b["draw_deck"] if mask[b["draw_deck"]] else -1
        for seat, card in enumerate(view["tops"]):
            if not mask[b["draw_pile"] + seat]:
                continue
            if card == self.options.num_birds + Wile.MURDER:
                # Take it even without a victim: in my hand it cannot be used against me.
                worth = WINNING_MURDER if self._murder_target(view) >= 0 else PILE_GAIN
            elif card >= self.options.num_birds:
                worth = 0.0
            else:
                worth = self._best_cell(view, card)[0]
            if worth >= best:
                best, choice = worth, b["draw_pile"] + seat
        if choice < 0:
            choice = int(np.flatnonzero(mask)[0])
        return choice
