"""Chicken: the pure rules engine (no RL library is imported here).

Cards are ints: 0 is a chicken foot, 1..max_value are number cards. The deck's top is the end of
`deck`. The environment only asks for bids and passes; draws, tallies and reshuffles happen
inside `apply`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from fowlplay.envs.core import (
    ActionLayout,
    Game,
    check_cap_ending,
    check_int,
    check_player_count,
    check_reward_mode,
    final_rewards,
)
from fowlplay.envs.core.cards import shuffled
from fowlplay.envs.core.game import copy_rng

FOOT = 0
PLAYER_COUNTS = range(2, 5)


@dataclass
class ChickenOptions:
    """Rule options of `chicken_v1`; every default is the documented game."""

    num_players: int = 2
    #: Number cards run 1..max_value (house: 5).
    max_value: int = 5
    #: Copies of each number card (house: 10).
    copies_per_value: int = 10
    #: Chicken-foot cards in the deck (house: 10).
    feet: int = 10
    #: Highest bid allowed, besides the cards left in the deck (house: 15).
    bid_cap: int = 15
    #: A round that ends with someone at or above this score ends the game (seed: 50).
    target: int = 50
    #: Bonus for holding exactly one foot when a round ends (seed: 10).
    foot_bonus: int = 10
    #: Rounds played before the cap ends the game (house: 100).
    max_rounds: int = 100
    #: How the cap ends a game: "standings" (house: the highest score wins, ties share; terminated)
    #: or "draw" (`chicken_v1`'s rule: every reward 0; truncated).
    cap_ending: str = "standings"
    #: "win": +1 / -1/(n-1) terminal rewards; "score": zero-sum score differences / target.
    reward_mode: str = "win"

    def validate(self) -> None:
        """Raise ValueError on an impossible option."""
        check_player_count(self.num_players, PLAYER_COUNTS, "chicken_v1")
        check_int("max_value", self.max_value, 1, 20)
        check_int("copies_per_value", self.copies_per_value, 1)
        check_int("feet", self.feet, 0)
        check_int("bid_cap", self.bid_cap, 1)
        check_int("target", self.target, 1)
        check_int("foot_bonus", self.foot_bonus, 0)
        check_int("max_rounds", self.max_rounds, 1)
        check_cap_ending(self.cap_ending)
        check_reward_mode(self.reward_mode)

    @property
    def deck_size(self) -> int:
        """Cards in a full deck."""
        return self.max_value * self.copies_per_value + self.feet


def action_layout(options: ChickenOptions) -> ActionLayout:
    """Action 0 passes; action k (1..bid_cap) bids k cards."""
    return ActionLayout(
        [
            ("pass", 1, "pass: out of bidding until the next bid phase"),
            ("bid", options.bid_cap, "bid k = id cards (1..bid_cap), more than the current bid"),
        ]
    )


def full_deck(options: ChickenOptions) -> list[int]:
    """Every card of the game, unshuffled."""
    numbers = [v for v in range(1, options.max_value + 1) for _ in range(options.copies_per_value)]
    return numbers + [FOOT] * options.feet


def round_points(numbers: list[int], feet: int, foot_bonus: int) -> int:
    """Change to a player's score at the end of a round (the seed's tally)."""
    total = sum(numbers)
    if feet == 0:
        return total
    if feet == 1:
        return total + foot_bonus
    return -total


# ----- log lines: what `ChickenGame.log` writes from each recorded event's values --------------------
_PASSES = "player_{} passes".format
_BIDS = "player_{} bids {}".format
_EVERYONE_PASSED = "everyone passed: the starting player draws 1".format
_DECK_EMPTY = "deck empty: round ends".format
_ROUND_ENDS = "round {} ends: tally {}, scores {}".format


def _draw_line(player: int, count: int, numbers: int, feet: int, values: tuple[int, ...] = ()) -> str:
    # `values` (the numbers drawn, face down) are the drawer's alone: `seat_log` tells them to it.
    return (
        f"player_{player} draws {count}: {numbers} number{'' if numbers == 1 else 's'}, "
        f"{feet} {'foot' if feet == 1 else 'feet'}"
    )


def _own_draw_line(player: int, count: int, numbers: int, feet: int, values: tuple[int, ...] = ()) -> str:
    drawn = ", ".join(str(v) for v in values) or "no number"
    return f"{_draw_line(player, count, numbers, feet)} (you drew {drawn})"


@functools.lru_cache(maxsize=1024)
def _mask(bid_cap: int, bid: int, max_bid: int) -> np.ndarray:
    """The legal mask (pass, then bids bid+1..max_bid) that `legal_mask` hands out copies of."""
    mask = np.zeros(1 + bid_cap, dtype=np.int8)
    mask[0] = 1
    mask[bid + 1 : max_bid + 1] = 1
    mask.flags.writeable = False  # shared by every game: only its copies leave
    return mask


class ChickenGame(Game):
    """A game of Chicken in progress."""

    def __init__(self, options: ChickenOptions, rng: np.random.Generator) -> None:
        self.options = options
        self.rng = rng
        self.num_players = n = options.num_players
        self.layout = action_layout(options)
        self._full_deck = tuple(full_deck(options))  # reshuffled every round
        self.scores = [0] * n
        self.round = 0
        self.round_starter = 0
        #: Each seat's score change at the last tally (public: the scores show it); zeros before.
        self.last_tally = [0] * n
        #: What happened since the last decision, as (line maker, its values): `log` writes the lines
        #: only when someone reads them (the game records every step, but few steps are ever read).
        self._log: list[tuple[Callable[..., str], tuple]] = []
        self._terminal = False
        self._truncated = False
        self._capped = False
        self._start_round(starter=0)

    @classmethod
    def action_layout(cls, options: ChickenOptions) -> ActionLayout:
        """1 pass + bid_cap bids."""
        return action_layout(options)

    @property
    def log(self) -> list[str]:
        """What happened since the last decision (the decision itself first), one line per event."""
        return [line(*values) for line, values in self._log]

    def seat_log(self, player: int) -> list[str]:
        """The log as `player` saw it: its own draws name the numbers drawn (before a round's end
        reshuffles them away unseen by anyone else)."""
        return [
            _own_draw_line(*values) if line is _draw_line and values[0] == player else line(*values)
            for line, values in self._log
        ]

    # ----- round and phase flow ---------------------------------------------------------------
    def _start_round(self, starter: int) -> None:
        self.round += 1
        self.round_starter = starter
        self._gather_and_shuffle()
        self._start_bid_phase(starter)

    def _gather_and_shuffle(self) -> None:
        # Every card goes back into the deck. This also happens after the game's last tally, so a
        # finished game holds no face-down card whose sum the tally revealed.
        n = self.num_players
        self.deck = shuffled(self._full_deck, self.rng)
        self.numbers: list[list[int]] = [[] for _ in range(n)]
        self.feet = [0] * n

    def _start_bid_phase(self, starter: int) -> None:
        if not self.deck:  # house: an empty deck ends the round
            self._log.append((_DECK_EMPTY, ()))
            self._end_round()
            return
        self.starter = starter
        self.bid = 0
        self.high_bidder = -1
        self.active = [True] * self.num_players
        self.to_act = starter

    def _next_active(self, seat: int) -> int:
        n = self.num_players
        for step in range(1, n + 1):
            nxt = (seat + step) % n
            if self.active[nxt]:
                return nxt
        return -1

    def _draw(self, player: int, count: int) -> None:
        drawn = self.deck[-count:][::-1]  # the top of the deck is its end
        del self.deck[-count:]
        feet = drawn.count(FOOT)
        values = tuple([card for card in drawn if card != FOOT])
        self.numbers[player].extend(values)
        self.feet[player] += feet
        numbers = count - feet
        self._log.append((_draw_line, (player, count, numbers, feet, values)))
        if self.feet[player] >= 2:
            self._end_round()
        else:
            self._start_bid_phase((player + 1) % self.num_players)

    def _end_round(self) -> None:
        opts = self.options
        self.last_tally = [
            round_points(self.numbers[p], self.feet[p], opts.foot_bonus) for p in range(self.num_players)
        ]
        self.scores = [s + t for s, t in zip(self.scores, self.last_tally)]
        # Both lists are replaced, never changed in place, at the next tally: kept as they are.
        self._log.append((_ROUND_ENDS, (self.round, self.last_tally, self.scores)))
        # Our reading of the seed's "if any players are tied": tied for the lead.
        top = max(self.scores)
        if top >= opts.target and self.scores.count(top) == 1:  # one leader (`best_players`, inlined)
            self._terminal = True
        elif self.round >= opts.max_rounds:  # house: the cap ends the game by the standings (or a draw)
            self._capped = True
            if opts.cap_ending == "standings":
                self._terminal = True
            else:
                self._truncated = True
        if self.over:
            self._gather_and_shuffle()
            return
        self._start_round((self.round_starter + 1) % self.num_players)

    # ----- the Game interface -------------------------------------------------------------------
    def max_bid(self) -> int:
        """Highest bid allowed now: the cards left, capped by `bid_cap`."""
        return min(len(self.deck), self.options.bid_cap)

    def legal_mask(self) -> np.ndarray:
        """Pass is always legal; bids from current bid + 1 to `max_bid()`."""
        cap = self.options.bid_cap
        return _mask(cap, self.bid, min(len(self.deck), cap)).copy()  # bids up to max_bid()

    def apply(self, action: int) -> None:
        """Bid (action k) or pass (action 0), then resolve the phase if it ended."""
        player = self.to_act
        if action == 0:
            self.active[player] = False
            self._log = [(_PASSES, (player,))]
        else:
            self.bid = action
            self.high_bidder = player
            self._log = [(_BIDS, (player, action))]
        nxt = self._next_active(player)
        if self.high_bidder >= 0 and nxt == self.high_bidder:
            self._draw(self.high_bidder, self.bid)  # everyone else passed after the high bid
        elif nxt == -1:
            self._log.append((_EVERYONE_PASSED, ()))  # house rule
            self._draw(self.starter, 1)
        else:
            self.to_act = nxt

    def returns(self) -> list[float]:
        """Zero-sum rewards: the win reward, or score differences in 'score' mode; 0 on truncation."""
        opts = self.options
        return final_rewards(
            self.scores, truncated=self._truncated, reward_mode=opts.reward_mode, scale=opts.target
        )

    def decision(self) -> str:
        """Chicken only ever asks for a bid or a pass."""
        return "bid"

    def action_name(self, action: int) -> str:
        """'pass' or 'bid k'."""
        return "pass" if action == 0 else f"bid {action}"

    def resample_hidden(self, player: int | None, rng: np.random.Generator) -> None:
        """Re-deal the number cards `player` has not seen among the other hands and the deck.

        Exact: the deck was a uniform shuffle and `player` saw only which seat drew how many
        numbers and feet, and the values of their own numbers. So, given that, the unseen numbers
        lie uniformly over the other players' face-down slots and the deck's number slots, and the
        deck's order is uniform. Feet never move: every face-down card is a number, and the feet
        left in the deck are the feet nobody has drawn. With `player=None` (no viewer: every hand
        face up) only the deck's order is unseen, and it is uniform over what is left.
        """
        if player is None:
            self.deck = shuffled(sorted(self.deck), rng)  # sorted: see below
            return
        others = [p for p in range(self.num_players) if p != player]
        feet_in_deck = self.deck.count(FOOT)
        pool = [card for card in self.deck if card != FOOT]
        for p in others:
            pool.extend(self.numbers[p])
        # Sorted first: the re-deal must not depend on the hidden order it replaces, so that for
        # one seed every state of the information set re-deals alike (search agents rely on it).
        pool = shuffled(sorted(pool), rng)
        start = 0
        for p in others:
            end = start + len(self.numbers[p])
            self.numbers[p] = pool[start:end]
            start = end
        self.deck = shuffled(pool[start:] + [FOOT] * feet_in_deck, rng)

    def clone(self) -> ChickenGame:
        """An independent copy (faster than a deep copy)."""
        other = object.__new__(ChickenGame)
        other.__dict__.update(self.__dict__)
        other.rng = copy_rng(self.rng)
        other.scores = list(self.scores)
        other._log = list(self._log)
        other.deck = list(self.deck)
        other.numbers = [list(ns) for ns in self.numbers]
        other.feet = list(self.feet)
        other.last_tally = list(self.last_tally)
        other.active = list(self.active)
        return other

    def state_dict(self) -> dict[str, Any]:
        """Everything, as plain values (hands sorted: the order of face-down cards never matters)."""
        return {
            "round": self.round,
            "round_starter": self.round_starter,
            "starter": self.starter,
            "scores": list(self.scores),
            "last_tally": list(self.last_tally),
            "deck": list(self.deck),
            "numbers": [sorted(ns) for ns in self.numbers],
            "feet": list(self.feet),
            "bid": self.bid,
            "high_bidder": self.high_bidder,
            "active": list(self.active),
            "to_act": self.to_act,
            "terminal": self._terminal,
            "truncated": self._truncated,
        }

    def render(self) -> str:
        """The table as an umpire sees it."""
        lines = [f"Chicken - round {self.round}, deck {len(self.deck)} cards"]
        for p in range(self.num_players):
            marks = []
            if not self.over:
                if p == self.to_act:
                    marks.append("to act")
                if p == self.high_bidder:
                    marks.append(f"high bid {self.bid}")
                if not self.active[p]:
                    marks.append("passed")
            numbers = " ".join(str(v) for v in sorted(self.numbers[p])) or "-"
            lines.append(
                f"  player_{p}: score {self.scores[p]:>4}  feet {self.feet[p]}  "
                f"numbers [{numbers}]" + (f"  ({', '.join(marks)})" if marks else "")
            )
        if self.round > 1 or self.over:
            lines.append(f"  last tally: {self.last_tally}")
        if self.over:
            lines.append("  game over" + (f" (round cap: {self.options.cap_ending})" if self._capped else ""))
        if self.log:
            lines.append("  last: " + "; ".join(self.log))
        return "\n".join(lines)
