"""Murder, She Crows: the pure rules engine (no RL library is imported here).

Cards are ints 1..max_value (a card's prestige is its value). The deck's top is the end of `deck`;
the discard pile is face up, so it is kept as a count per value. Each player has a RUN and a SET
pile. During a turn, every card that joins a pile after the kept card is provisional: the turn
player's provisional cards are listed in `prov_run` and counted in `prov_set`. Reveals, busts,
reshuffles and passing over players who cannot claim happen inside `apply`; the environment only
asks for real choices.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from types import SimpleNamespace
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

PLAYER_COUNTS = range(2, 6)


class Pile(IntEnum):
    """The two piles in front of every player."""

    RUN = 0
    SET = 1


#: `Pile`'s members as plain attributes (the same objects): on Python 3.11 reading a member
#: through its enum class costs several times an attribute read, and the hot paths read them at
#: every decision.
_Pile = SimpleNamespace(**Pile.__members__)


class Decision(IntEnum):
    """The kinds of decision the game asks for (the observation one-hot uses this order)."""

    KEEP = 0  # keep one of the two cards revealed at the start of the turn, or discard both
    PRESS = 1  # reveal one more card or stop
    PLACE = 2  # put a revealed card that fits both piles into one of them
    COIN = 3  # take a discard-pile card for a coin reached, or skip it
    CLAIM = 4  # out of turn: claim one card of a player who busted, or pass


#: `Decision`'s members as plain attributes (the same objects): on Python 3.11 reading a member
#: through its enum class costs several times an attribute read, and the hot paths read them at
#: every decision.
_Decision = SimpleNamespace(**Decision.__members__)


@dataclass
class CrowsOptions:
    """Rule options of `murder_she_crows_v1`; every default is the documented game."""

    num_players: int = 2
    #: Card values run 1..max_value; a card's prestige is its value (house: 6).
    max_value: int = 6
    #: Copies of each value in the deck (house: 10, so 60 cards).
    copies_per_value: int = 10
    #: Cards a pile needs before it can be scored as a murder (seed: 3).
    min_murder: int = 3
    #: A murder's prestige is rounded up to a multiple of this, and the track moves that / this (seed: 5).
    points_step: int = 5
    #: Spaces on the score track; reaching the last one starts the final round (house: 30).
    track_length: int = 30
    #: Track spaces holding a coin (house: 5, 10, 15, 20, 25).
    coin_spaces: tuple[int, ...] = (5, 10, 15, 20, 25)
    #: Piles a player may discard in one turn (house: 1). Without a limit a player could empty a pile
    #: before every reveal, so that every card fits, and never end their turn.
    pile_discards_per_turn: int = 1
    #: Turns played before the cap ends the game (house: 200).
    max_turns: int = 200
    #: Decisions before the cap ends the game; a safety net against endless turns (house: 20000).
    max_decisions: int = 20_000
    #: How a cap ends a game: "standings" (house: the furthest track wins, ties share; terminated)
    #: or "draw" (`murder_she_crows_v1`'s rule: every reward 0; truncated).
    cap_ending: str = "standings"
    #: "win": +1 / -1/(n-1) terminal rewards; "score": zero-sum track differences / track_length.
    reward_mode: str = "win"

    def validate(self) -> None:
        """Raise ValueError on an impossible option."""
        check_player_count(self.num_players, PLAYER_COUNTS, "murder_she_crows_v1")
        check_int("max_value", self.max_value, 2, 20)
        check_int("copies_per_value", self.copies_per_value, 1)
        check_int("min_murder", self.min_murder, 1)
        check_int("points_step", self.points_step, 1)
        check_int("track_length", self.track_length, 1)
        check_int("pile_discards_per_turn", self.pile_discards_per_turn, 0)
        check_int("max_turns", self.max_turns, 1)
        check_int("max_decisions", self.max_decisions, 1)
        check_cap_ending(self.cap_ending)
        spaces = tuple(self.coin_spaces)
        if any(not isinstance(c, int) or not 0 < c <= self.track_length for c in spaces) or len(
            set(spaces)
        ) != len(spaces):
            raise ValueError(
                f"coin_spaces must be distinct ints in 1..track_length={self.track_length}; "
                f"got {self.coin_spaces!r}"
            )
        check_reward_mode(self.reward_mode)

    @property
    def deck_size(self) -> int:
        """Cards in the game."""
        return self.max_value * self.copies_per_value


_PILE_NAMES = ("RUN", "SET")


def action_layout(options: CrowsOptions) -> ActionLayout:
    """Card-choosing blocks hold one id per value (id - block start + 1 is the value)."""
    return _layout(options.max_value)


@functools.lru_cache(maxsize=32)
def _layout(v: int) -> ActionLayout:
    """The layout for cards 1..v, built once: every new game (each reset) asks for it."""
    return ActionLayout(
        [
            ("keep_run", v, "keep a revealed card of value id-start+1 in RUN (safe), discard the other"),
            ("keep_set", v, "keep a revealed card of value id-start+1 in SET (safe), discard the other"),
            ("discard_both", 1, "discard both revealed cards (legal only when neither fits a pile)"),
            ("reveal", 1, "reveal the next card (reshuffling the discard pile if the deck is empty)"),
            ("stop", 1, "stop: this turn's provisional cards become permanent, the turn ends"),
            ("place_run", 1, "put the revealed card that fits both piles in RUN (provisional)"),
            ("place_set", 1, "put the revealed card that fits both piles in SET (provisional)"),
            ("score_run", 1, "score my RUN (min_murder or more cards): the track advances, cards to discard"),
            ("score_set", 1, "score my SET (min_murder or more cards): the track advances, cards to discard"),
            ("discard_run", 1, "discard my RUN (one card or more) to the discard pile"),
            ("discard_set", 1, "discard my SET (one card or more) to the discard pile"),
            ("coin_run", v, "for a coin: take a discarded card of value id-start+1 into RUN"),
            ("coin_set", v, "for a coin: take a discarded card of value id-start+1 into SET"),
            ("coin_skip", 1, "for a coin: take nothing"),
            ("claim_run", v, "after another player's bust: claim their card of value id-start+1 into RUN"),
            ("claim_set", v, "after another player's bust: claim their card of value id-start+1 into SET"),
            ("claim_pass", 1, "after another player's bust: claim nothing"),
        ]
    )


def full_deck(options: CrowsOptions) -> list[int]:
    """Every card of the game, unshuffled."""
    return [v for v in range(1, options.max_value + 1) for _ in range(options.copies_per_value)]


def fits_run(run: list[int], card: int) -> bool:
    """A RUN (sorted, consecutive) takes a card if it is empty or the card extends either end."""
    return not run or card == run[0] - 1 or card == run[-1] + 1


def fits_set(set_: list[int], card: int) -> bool:
    """A SET takes a card if it is empty or the card has the set's value."""
    return not set_ or card == set_[0]


def murder_steps(cards: list[int], points_step: int) -> int:
    """Track spaces a scored pile is worth: its prestige rounded up to a multiple of the step, / step."""
    return -(-sum(cards) // points_step)


def coins_passed(old: int, new: int, coin_spaces: tuple[int, ...]) -> int:
    """Coins a track move from `old` to `new` reaches or passes."""
    return sum(1 for c in coin_spaces if old < c <= new)


# ----- log lines: what `CrowsGame.log` writes from each recorded event's values ----------------------
_SHUFFLED = "discard pile shuffled into a new deck of {}".format
_GAME_OVER = "game over: track {}".format
_TRUNCATED_TURNS = "turn cap reached after {} turns".format
_TRUNCATED_DECISIONS = "decision cap reached after {} decisions".format
_KEEPS = "player_{} keeps {} in {}".format
_REVEALS = "player_{} reveals {}".format
_STOPS = "player_{} stops".format
_SCORES = "player_{} scores {} for {}: track {}".format
_DISCARDS = "player_{} discards {}".format
_TAKES = "player_{} takes {} from the discard pile".format
_CLAIMS = "player_{} claims {}".format


def _turn_reveal_line(player: int, cards: tuple[int, ...]) -> str:
    return f"player_{player} reveals {sorted(cards) or 'nothing'}"


def _bust_line(player: int, card: int, available: tuple[int, ...]) -> str:
    return f"player_{player} busts on {card}; available {sorted(available)}"


class CrowsGame(Game):
    """A game of Murder, She Crows in progress."""

    def __init__(
        self, options: CrowsOptions, rng: np.random.Generator, deck: list[int] | None = None
    ) -> None:
        """Deal a new game; `deck` (revealed in list order) stacks the deck for rule tests."""
        self._setup(options, rng, deck)
        self._start_turn(0)

    @classmethod
    def stacked(
        cls,
        options: CrowsOptions,
        deck: list[int],
        *,
        runs: list[list[int]] | None = None,
        sets: list[list[int]] | None = None,
        discard: list[int] | None = None,
        track: list[int] | None = None,
        rng: np.random.Generator | None = None,
    ) -> CrowsGame:
        """A game whose table is laid out by hand and whose deck reveals `deck` in order (for tests)."""
        game = object.__new__(cls)
        game._setup(options, rng if rng is not None else np.random.default_rng(0), deck)
        n = options.num_players
        game.runs = [sorted(r) for r in runs] if runs else [[] for _ in range(n)]
        game.sets = [list(s) for s in sets] if sets else [[] for _ in range(n)]
        for card in discard or []:
            game.discard[card] += 1
        game.track = list(track) if track else [0] * n
        game._start_turn(0)
        return game

    def _setup(self, options: CrowsOptions, rng: np.random.Generator, deck: list[int] | None) -> None:
        self.options = options
        self.rng = rng
        self.num_players = n = options.num_players
        self.layout = action_layout(options)
        self._size = self.layout.size
        self._dispatch = _dispatch(options.max_value)
        # Card blocks start one below their first id so that `base + card` is the action id.
        self._keep = (self.layout["keep_run"].start - 1, self.layout["keep_set"].start - 1)
        self._coin = (self.layout["coin_run"].start - 1, self.layout["coin_set"].start - 1)
        self._claim = (self.layout["claim_run"].start - 1, self.layout["claim_set"].start - 1)
        self._place = (self.layout["place_run"].start, self.layout["place_set"].start)
        self._score = (self.layout["score_run"].start, self.layout["score_set"].start)
        self._toss = (self.layout["discard_run"].start, self.layout["discard_set"].start)
        self._stop_id = self.layout["stop"].start
        self._reveal_id = self.layout["reveal"].start
        self._discard_both_id = self.layout["discard_both"].start
        self._coin_skip_id = self.layout["coin_skip"].start
        self._claim_pass_id = self.layout["claim_pass"].start
        self.deck = shuffled(full_deck(options), rng) if deck is None else list(reversed(deck))
        self.discard = [0] * (options.max_value + 1)  # index 0 unused, so a card indexes its count
        # The deck's composition (public: it follows from the face-up cards), kept for cheap observations.
        self.deck_counts = [0] * (options.max_value + 1)
        for card in self.deck:
            self.deck_counts[card] += 1
        self.runs: list[list[int]] = [[] for _ in range(n)]
        self.sets: list[list[int]] = [[] for _ in range(n)]
        self.track = [0] * n
        self.turn_player = 0
        self.to_act = 0
        self.phase = _Decision.PRESS
        self.prov_run: list[int] = []
        self.prov_set = 0
        self.coins = 0
        self.pile_discards = 0  # piles the turn player has discarded this turn
        self.revealed: list[int] = []
        self.pending = 0  # the revealed card waiting for a pile in PLACE (0 = none)
        self.available: list[int] = []
        self.claimers: list[int] = []
        self.turns = 0
        self.decisions = 0
        self.reshuffles = 0
        #: What happened since the last decision, as (line maker, its values): `log` writes the lines
        #: only when someone reads them (the game records every step, but few steps are ever read).
        self._log: list[tuple[Callable[..., str], tuple]] = []
        self._terminal = False
        self._truncated = False
        self._capped = False

    @classmethod
    def action_layout(cls, options: CrowsOptions) -> ActionLayout:
        """6 card blocks of max_value ids each, plus 11 single actions."""
        return action_layout(options)

    @property
    def log(self) -> list[str]:
        """What happened since the last decision (the decision itself first), one line per event."""
        return [line(*values) for line, values in self._log]

    # ----- cards and piles ----------------------------------------------------------------
    def _draw(self) -> int:
        """The top card; an empty deck is first replaced by the shuffled discard pile (0 if none)."""
        if not self.deck:
            pile = [v for v, k in enumerate(self.discard) for _ in range(k)]
            if not pile:
                return 0
            self.deck = shuffled(pile, self.rng)
            self.deck_counts = self.discard
            self.discard = [0] * len(self.discard)
            self.reshuffles += 1
            self._log.append((_SHUFFLED, (len(self.deck),)))
        card = self.deck.pop()
        self.deck_counts[card] -= 1
        return card

    def can_draw(self) -> bool:
        """True if a card can be revealed (from the deck, or the discard pile reshuffled)."""
        return bool(self.deck) or any(self.discard)

    def pile(self, player: int, pile: int) -> list[int]:
        """The cards of one of `player`'s piles (a RUN is kept sorted)."""
        return self.runs[player] if pile == _Pile.RUN else self.sets[player]

    def fits(self, player: int, pile: int, card: int) -> bool:
        """Whether `card` can go on `player`'s `pile` now."""
        if pile == _Pile.RUN:
            return fits_run(self.runs[player], card)
        return fits_set(self.sets[player], card)

    def _add(self, player: int, pile: int, card: int, provisional: bool) -> None:
        if pile == _Pile.RUN:
            run = self.runs[player]
            if not run or card > run[-1]:
                run.append(card)
            else:
                run.insert(0, card)
            if provisional:
                self.prov_run.append(card)
        else:
            self.sets[player].append(card)
            if provisional:
                self.prov_set += 1

    def _empty_pile(self, player: int, pile: int) -> list[int]:
        """Take every card off a pile onto the discard pile; provisional ones are banked with it."""
        cards = self.pile(player, pile)
        for card in cards:
            self.discard[card] += 1
        if pile == _Pile.RUN:
            self.runs[player] = []
            self.prov_run = []
        else:
            self.sets[player] = []
            self.prov_set = 0
        return cards

    # ----- turn flow --------------------------------------------------------------------------
    def _start_turn(self, player: int) -> None:
        self.turn_player = self.to_act = player
        self.prov_run, self.prov_set, self.coins = [], 0, 0
        self.pile_discards = 0
        self.revealed = []
        for _ in range(2):
            card = self._draw()
            if card:
                self.revealed.append(card)
        self._log.append((_turn_reveal_line, (player, tuple(self.revealed))))
        self.phase = _Decision.KEEP if self.revealed else _Decision.PRESS

    def _end_turn(self) -> None:
        self.turns += 1
        nxt = (self.turn_player + 1) % self.num_players
        if nxt == 0 and max(self.track) >= self.options.track_length:
            self._terminal = True  # the round that reached the end of the track is complete
            self._log.append((_GAME_OVER, (list(self.track),)))
        elif self.turns >= self.options.max_turns:
            self._cap()
            self._log.append((_TRUNCATED_TURNS, (self.turns,)))
        else:
            self._start_turn(nxt)

    def _bust(self, card: int) -> None:
        p = self.turn_player
        run = self.runs[p]
        for c in self.prov_run:
            run.remove(c)
        lost_set = self.sets[p][len(self.sets[p]) - self.prov_set :]
        del self.sets[p][len(self.sets[p]) - self.prov_set :]
        self.available = [*self.prov_run, *lost_set, card]
        self.prov_run, self.prov_set = [], 0
        n = self.num_players
        self.claimers = [(p - k) % n for k in range(1, n)]  # reverse turn order: the right first
        self._log.append((_bust_line, (p, card, tuple(self.available))))
        self._next_claimer()

    def _next_claimer(self) -> None:
        """Hand the claim to the next player who can place an available card, or end the turn."""
        while self.claimers and self.available:
            seat = self.claimers.pop(0)
            run, set_ = self.runs[seat], self.sets[seat]  # can it place one card in either pile?
            if any(fits_run(run, c) or fits_set(set_, c) for c in self.available):
                self.to_act = seat
                self.phase = _Decision.CLAIM
                return
        for card in self.available:
            self.discard[card] += 1
        # Seats left unasked once nothing is available are forgotten: they mean nothing any more.
        self.available, self.claimers = [], []
        self._end_turn()

    # ----- action handlers --------------------------------------------------------------------
    def _keep_card(self, block: str, index: int) -> None:
        pile, card = (_Pile.RUN if block == "keep_run" else _Pile.SET), index + 1
        self.revealed.remove(card)
        self._add(self.turn_player, pile, card, provisional=False)
        self._log.append((_KEEPS, (self.turn_player, card, _PILE_NAMES[pile])))
        self._discard_both(block, index)

    def _discard_both(self, block: str, index: int) -> None:
        for card in self.revealed:
            self.discard[card] += 1
        self.revealed = []
        self.phase = _Decision.PRESS

    def _reveal(self, block: str, index: int) -> None:
        p = self.turn_player
        card = self._draw()
        in_run, in_set = fits_run(self.runs[p], card), fits_set(self.sets[p], card)
        self._log.append((_REVEALS, (p, card)))
        if in_run and in_set:
            self.pending = card
            self.phase = _Decision.PLACE
        elif in_run or in_set:
            self._add(p, _Pile.RUN if in_run else _Pile.SET, card, provisional=True)
        else:
            self._bust(card)

    def _stop(self, block: str, index: int) -> None:
        self._log.append((_STOPS, (self.turn_player,)))
        self._end_turn()

    def _place_card(self, block: str, index: int) -> None:
        pile = _Pile.RUN if block == "place_run" else _Pile.SET
        self._add(self.turn_player, pile, self.pending, provisional=True)
        self.pending = 0
        self.phase = _Decision.PRESS

    def _score_pile(self, block: str, index: int) -> None:
        p, opts = self.turn_player, self.options
        cards = self._empty_pile(p, _Pile.RUN if block == "score_run" else _Pile.SET)
        steps = murder_steps(cards, opts.points_step)
        old = self.track[p]
        self.track[p] = min(old + steps, opts.track_length)
        self.coins += coins_passed(old, old + steps, opts.coin_spaces)
        self._log.append((_SCORES, (p, cards, steps, self.track[p])))  # `cards` left the table: kept as is

    def _discard_pile(self, block: str, index: int) -> None:
        cards = self._empty_pile(self.turn_player, _Pile.RUN if block == "discard_run" else _Pile.SET)
        self.pile_discards += 1
        self._log.append((_DISCARDS, (self.turn_player, cards)))

    def _coin_card(self, block: str, index: int) -> None:
        self.coins -= 1
        if block == "coin_skip":
            return
        pile, card = (_Pile.RUN if block == "coin_run" else _Pile.SET), index + 1
        self.discard[card] -= 1
        # Provisional like a revealed card, so a bust never leaves a gap in the RUN.
        self._add(self.turn_player, pile, card, provisional=True)
        self._log.append((_TAKES, (self.turn_player, card)))

    def _claim_card(self, block: str, index: int) -> None:
        if block != "claim_pass":
            pile, card = (_Pile.RUN if block == "claim_run" else _Pile.SET), index + 1
            self.available.remove(card)
            self._add(self.to_act, pile, card, provisional=False)
            self._log.append((_CLAIMS, (self.to_act, card)))
        self._next_claimer()

    # ----- the Game interface -------------------------------------------------------------------
    @property
    def kind(self) -> Decision:
        """The decision being asked for (a pending coin comes before the next reveal or stop)."""
        if self.phase == _Decision.PRESS and self.coins:
            return _Decision.COIN
        return self.phase

    def legal_mask(self) -> np.ndarray:
        """Exact mask of the current decision."""
        mask = np.zeros(self._size, dtype=np.int8)
        kind = self.phase
        if kind == _Decision.PRESS and self.coins:  # `kind`, inlined: this runs every decision
            kind = _Decision.COIN
        if kind == _Decision.CLAIM:
            p = self.to_act
            run, set_ = self.runs[p], self.sets[p]
            claim_run, claim_set = self._claim  # (Pile.RUN, Pile.SET): plain ints in the hot path
            for card in self.available:
                if fits_run(run, card):
                    mask[claim_run + card] = 1
                if fits_set(set_, card):
                    mask[claim_set + card] = 1
            mask[self._claim_pass_id] = 1
            return mask
        p = self.turn_player
        run, set_ = self.runs[p], self.sets[p]
        # Scoring or discarding a pile is open at every decision of one's own turn.
        murder = self.options.min_murder
        may_discard = self.pile_discards < self.options.pile_discards_per_turn
        toss, score = self._toss, self._score  # indexed by Pile.RUN = 0, Pile.SET = 1
        if run:
            mask[toss[0]] = may_discard
            if len(run) >= murder:
                mask[score[0]] = 1
        if set_:
            mask[toss[1]] = may_discard
            if len(set_) >= murder:
                mask[score[1]] = 1
        if kind == _Decision.PRESS:
            mask[self._stop_id] = 1
            if self.deck or any(self.discard):  # can_draw(), inlined: this runs every decision
                mask[self._reveal_id] = 1
        elif kind == _Decision.KEEP:
            kept = False
            keep_run, keep_set = self._keep
            for card in self.revealed:  # fits_run and fits_set, inlined: this runs every decision
                if not run or card == run[0] - 1 or card == run[-1] + 1:
                    mask[keep_run + card] = 1
                    kept = True
                if not set_ or card == set_[0]:
                    mask[keep_set + card] = 1
                    kept = True
            if not kept:
                mask[self._discard_both_id] = 1
        elif kind == _Decision.PLACE:
            mask[self._place[_Pile.RUN]] = fits_run(run, self.pending)
            mask[self._place[_Pile.SET]] = fits_set(set_, self.pending)
        else:  # Decision.COIN
            for card in range(1, len(self.discard)):
                if self.discard[card]:
                    if fits_run(run, card):
                        mask[self._coin[_Pile.RUN] + card] = 1
                    if fits_set(set_, card):
                        mask[self._coin[_Pile.SET] + card] = 1
            mask[self._coin_skip_id] = 1
        return mask

    def apply(self, action: int) -> None:
        """Apply a legal action, then run the chance events and forced steps it sets off."""
        self._log = []
        handler, block, index = self._dispatch[action]
        handler(self, block, index)
        self.decisions += 1
        if not (self._terminal or self._truncated) and self.decisions >= self.options.max_decisions:
            self._cap()
            self._log.append((_TRUNCATED_DECISIONS, (self.decisions,)))

    def _cap(self) -> None:
        """House: a cap ends the game by the track as it stands, or (`cap_ending="draw"`) truncates it."""
        self._capped = True
        if self.options.cap_ending == "standings":
            self._terminal = True
        else:
            self._truncated = True

    def returns(self) -> list[float]:
        """Zero-sum rewards: the win reward, or track differences in 'score' mode; 0 on truncation."""
        opts = self.options
        cut_off = self._truncated and not self._terminal
        return final_rewards(
            self.track, truncated=cut_off, reward_mode=opts.reward_mode, scale=opts.track_length
        )

    def decision(self) -> str:
        """'keep', 'press', 'place', 'coin' or 'claim'."""
        return self.kind.name.lower()

    def action_name(self, action: int) -> str:
        """A short description such as 'keep 4 in SET' or 'claim 3 into RUN'."""
        block, index = self.layout.decode(action)
        card = index + 1
        verb, _, pile = block.partition("_")
        if block in ("discard_both", "reveal", "stop", "coin_skip", "claim_pass"):
            return block.replace("_", " ")
        if verb == "keep":
            return f"keep {card} in {pile.upper()}"
        if verb in ("coin", "claim"):
            return f"{verb}: take {card} into {pile.upper()}"
        if verb == "place":
            return f"place {self.pending or 'the card'} in {pile.upper()}"
        return f"{verb} {pile.upper()}"

    def resample_hidden(self, player: int | None, rng: np.random.Generator) -> None:
        """Re-deal the deck's order, the game's only hidden information, uniformly (for every
        `player`, and for None, no viewer: nobody holds a hidden card).

        Every card that leaves the deck is turned face up, so what the table has seen fixes the
        deck's composition: before the first reshuffle, the whole deck less every card in sight;
        after one, the discard pile that was shuffled less the cards revealed since. Given the
        cards revealed so far, a uniformly shuffled deck's remaining order is uniform over the
        arrangements of what is left, which is what a fresh shuffle of the same cards draws.
        Everything else (piles, provisional cards, the revealed, waiting and available cards, the
        discard pile, tracks, coins, pile discards, whose turn and decision, the counters) is
        public and stays as it is.
        """
        # Sorted first: the re-deal must not depend on the hidden order it replaces, so that for
        # one seed every state of the information set re-deals alike (search agents rely on it).
        self.deck = shuffled(sorted(self.deck), rng)

    def clone(self) -> CrowsGame:
        """An independent copy (faster than a deep copy)."""
        other = object.__new__(CrowsGame)
        other.__dict__.update(self.__dict__)
        other.rng = copy_rng(self.rng)
        other.deck = list(self.deck)
        other.discard = list(self.discard)
        other.deck_counts = list(self.deck_counts)
        other.runs = [list(r) for r in self.runs]
        other.sets = [list(s) for s in self.sets]
        other.track = list(self.track)
        other.prov_run = list(self.prov_run)
        other.revealed = list(self.revealed)
        other.available = list(self.available)
        other.claimers = list(self.claimers)
        other._log = list(self._log)
        return other

    def state_dict(self) -> dict[str, Any]:
        """Everything, as plain values (the deck listed bottom to top); equal dicts, same game.

        The revealed, available and provisional RUN cards are listed in value order: the order in
        which they came carries no meaning for the rest of the game, and which of the two opening
        cards was on top is seen by nobody's observation, so it must not tell worlds apart.
        """
        return {
            "deck": list(self.deck),
            "discard": list(self.discard),
            "runs": [list(r) for r in self.runs],
            "sets": [list(s) for s in self.sets],
            "track": list(self.track),
            "turn_player": self.turn_player,
            "to_act": self.to_act,
            "phase": int(self.phase),
            "prov_run": sorted(self.prov_run),
            "prov_set": self.prov_set,
            "coins": self.coins,
            "pile_discards": self.pile_discards,
            "revealed": sorted(self.revealed),
            "pending": self.pending,
            "available": sorted(self.available),
            "claimers": list(self.claimers),
            "turns": self.turns,
            "decisions": self.decisions,
            "reshuffles": self.reshuffles,
            "terminal": self._terminal,
            "truncated": self._truncated,
        }

    def render(self) -> str:
        """The table as an umpire sees it."""
        discard = " ".join(str(v) for v, k in enumerate(self.discard) for _ in range(k)) or "-"
        lines = [
            f"Murder, She Crows - turn {self.turns + 1}, deck {len(self.deck)} cards, discard [{discard}]"
        ]
        for p in range(self.num_players):
            marks = []
            if not self.over:
                if p == self.turn_player:
                    marks.append("turn")
                if p == self.to_act:
                    marks.append(f"deciding: {self.decision()}")
            run = " ".join(
                f"{c}*" if p == self.turn_player and c in self.prov_run else str(c) for c in self.runs[p]
            )
            set_ = self.sets[p]
            firm = len(set_) - (self.prov_set if p == self.turn_player else 0)
            set_text = " ".join(str(c) if i < firm else f"{c}*" for i, c in enumerate(set_))
            lines.append(
                f"  player_{p}: track {self.track[p]:>2}  RUN [{run or '-'}]  SET [{set_text or '-'}]"
                + (f"  ({', '.join(marks)})" if marks else "")
            )
        if not self.over:
            if self.revealed:
                lines.append(f"  revealed: {self.revealed}")
            if self.pending:
                lines.append(f"  card to place: {self.pending}")
            if self.available:
                lines.append(f"  available to claim: {self.available}")
            if self.coins:
                lines.append(f"  coins to use: {self.coins}")
        else:
            lines.append("  game over" + (f" (cap: {self.options.cap_ending})" if self._capped else ""))
        lines.append("  (* = provisional)")
        if self.log:
            lines.append("  last: " + "; ".join(self.log))
        return "\n".join(lines)


#: Which handler applies each action block.
_HANDLERS = {
    "keep_run": CrowsGame._keep_card,
    "keep_set": CrowsGame._keep_card,
    "discard_both": CrowsGame._discard_both,
    "reveal": CrowsGame._reveal,
    "stop": CrowsGame._stop,
    "place_run": CrowsGame._place_card,
    "place_set": CrowsGame._place_card,
    "score_run": CrowsGame._score_pile,
    "score_set": CrowsGame._score_pile,
    "discard_run": CrowsGame._discard_pile,
    "discard_set": CrowsGame._discard_pile,
    "coin_run": CrowsGame._coin_card,
    "coin_set": CrowsGame._coin_card,
    "coin_skip": CrowsGame._coin_card,
    "claim_run": CrowsGame._claim_card,
    "claim_set": CrowsGame._claim_card,
    "claim_pass": CrowsGame._claim_card,
}


@functools.lru_cache(maxsize=32)
def _dispatch(v: int) -> list[tuple[Callable[..., None], str, int]]:
    """(handler, block name, index in the block) of every action id, from the handler table."""
    layout = _layout(v)
    return [(_HANDLERS[block], block, index) for block, index in map(layout.decode, range(layout.size))]
