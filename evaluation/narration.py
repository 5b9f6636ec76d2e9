"""What each seat is told at every step of a game, exactly as that seat saw it.

Every engine keeps a log of public lines for the last decision and what it set off (`game.log`:
"player_1 bids 4", "player_0 draws 3: 2 numbers, 1 foot"). A seat is told those, and besides:

- its own decision by name ("you: bid 4"), since a choice may name a card only the chooser holds;
- what it alone saw happen. A game whose engine says so itself (`Game.seat_log`, as Chicken does
  for a seat's own draws) is told that way; for the others the seat is told the cards that came
  into its private view with the step (what the game's picture `hidden_cards` shows that seat face
  up and a spectator not: a card drawn or passed into its hand, a hand it looks at with a Hornet).

A spectator is told the public lines only. So a seat's narration holds nothing its observation
does not: the public log and the cards of its own view, read through the one function per game
that decides what a seat may see (`envs/<game>/picture.py`'s `hidden_cards`).
"""

from __future__ import annotations

import importlib
from collections import Counter
from dataclasses import dataclass, field

from fowlplay.envs.core.game import Game
from fowlplay.envs.core.picture import picture_module


def tells_own_events(game: Game) -> bool:
    """True when `game`'s engine narrates each seat's private events itself (`Game.seat_log`)."""
    return type(game).seat_log is not Game.seat_log


def private_cards(game: Game, seat: int) -> list[Counter]:
    """Per seat of the table, the cards `seat` sees face up there that a spectator does not."""
    picture = picture_module(game)
    mine, public = picture.hidden_cards(game, seat), picture.hidden_cards(game, None)
    if not isinstance(mine, list):  # a game without hands (Murder, She Crows): nothing private
        return []
    return [Counter(own.shown) - Counter(seen.shown) for own, seen in zip(mine, public)]


def card_label(game: Game, card) -> str:
    """A card's name in words: the game's `card_name`, its rules' `CARD_NAMES`, or its value."""
    if hasattr(game, "card_name"):
        return game.card_name(card)
    names = getattr(importlib.import_module(type(game).__module__), "CARD_NAMES", None)
    if names is not None and isinstance(card, int) and 0 <= card < len(names):
        return names[card]
    return str(card)


def _cards_text(game: Game, cards: Counter) -> str:
    return ", ".join(card_label(game, card) for card in sorted(cards.elements()))


@dataclass
class Narrator:
    """Follows one game from its start and tells, after each step, what every seat (and a spectator,
    key None) was told; `history[viewer]` keeps every line told so far."""

    game: Game
    history: dict[int | None, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        seats = range(self.game.num_players)
        self._private = {seat: self._private_of(self.game, seat) for seat in seats}
        self.history = {viewer: [] for viewer in [None, *seats]}
        for seat in seats:  # the deal: the cards each seat was dealt face down
            held = self._private[seat][seat] if self._private[seat] else Counter()
            if held:
                self.history[seat].append(f"you are dealt: {_cards_text(self.game, held)}")

    def _private_of(self, game: Game, seat: int) -> list[Counter]:
        return [] if tells_own_events(game) else private_cards(game, seat)

    def step(self, game: Game, actor: int, decision: str, action_name: str) -> dict[int | None, list[str]]:
        """The lines each viewer is told about the step `actor` just took (`game` is the state after
        it, `decision` and `action_name` were read before it); appended to `history` as well."""
        self.game = game
        public = list(game.log) or [f"player_{actor} made a '{decision}' decision"]
        told: dict[int | None, list[str]] = {None: public}
        for seat in range(game.num_players):
            lines = [f"you (player_{seat}): {action_name}"] if seat == actor else []
            own = game.seat_log(seat) if tells_own_events(game) else list(game.log)
            lines += own or ([] if seat == actor else public)
            after = self._private_of(game, seat)
            before = self._private[seat]
            for other, cards in enumerate(after):
                gained = cards - (before[other] if other < len(before) else Counter())
                if not gained:
                    continue
                if other == seat:
                    lines.append(f"you get: {_cards_text(game, gained)}")
                else:
                    lines.append(f"you see in player_{other}'s hand: {_cards_text(game, gained)}")
            self._private[seat] = after
            told[seat] = lines
        for viewer, lines in told.items():
            self.history[viewer].extend(lines)
        return told


def narrated_step(env, narrator: Narrator, action: int) -> dict[int | None, list[str]]:
    """Step `env` (a fowlplay AEC env) with `action` and tell every viewer what it saw of it."""
    game = env.unwrapped.game
    actor, decision, name = game.current_player, env.decision(), env.action_name(action)
    env.step(action)
    return narrator.step(env.unwrapped.game, actor, decision, name)
