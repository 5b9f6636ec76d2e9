"""What one Murray player sees. Seats are relative: index 0 is the observer, 1 the player to their
left, and so on clockwise. Other players' hands are read here only as sizes, except the hand the
observer is looking at with a Hornet right now; what a Hornet look showed is remembered afterwards
from the observer's own memory (`MurrayGame.seen`), never from the live hand."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from envs.core import Observer, Piece
from envs.murray.rules import (
    HAND_KINDS,
    NUM_INSECTS,
    PILE_KINDS,
    Card,
    Decision,
    MurrayGame,
    MurrayOptions,
)


class HawkStatus:
    """Positions of the `hawk` one-hot piece: where the observer knows the Hawk to be."""

    DISCARD_PILE = 0  # not shuffled in yet: the game cannot end
    UNSEEN = 1  # shuffled in; I have not held it since (it may still be in the deck)
    IN_MY_HAND = 2
    LEFT_THE_DECK = 3  # I held it since it was shuffled in, and passed it or lost it


def _copies(options: MurrayOptions) -> np.ndarray:
    """Copies of each card type in the game (at least 1, to divide by)."""
    counts = [*options.counts, 1, options.murray_count]
    return np.maximum(np.array(counts, dtype=np.float32), 1.0)


class MurrayObserver(Observer):
    """Builds a Murray observation from named pieces."""

    def __init__(self, options: MurrayOptions) -> None:
        super().__init__(options)
        copies = _copies(options)
        self._inv_hand = (1.0 / copies[:HAND_KINDS]).astype(np.float32)
        self._inv_insect = self._inv_hand[:NUM_INSECTS].copy()
        self._inv_pile = (1.0 / copies).astype(np.float32)
        self._inv_total = 1.0 / options.total_cards
        self._inv_murrays = 1.0 / max(options.murray_count, 1)
        # Every Murray can be played at most twice (once more after the reshuffle).
        self._inv_tadpoles = 1.0 / max(2 * options.murray_count, 1)

    def layout(self, options: MurrayOptions) -> list[Piece]:
        """The named pieces, in order."""
        n, s, p = options.num_players, options.max_swarms, options.pond_size
        return [
            Piece("decision", len(Decision), "one-hot kind of decision being made (`Decision` order)"),
            Piece("actor", n, "one-hot relative seat whose decision it is"),
            Piece("my_hand", HAND_KINDS, "cards of each type in my hand (`Card` order, 12 = Hawk) / copies of that type"),
            Piece("hand_sizes", n, "cards in each relative seat's hand / cards in the game"),
            Piece("swarms", n * s * NUM_INSECTS, "swarm of relative seat i // max_swarms, slot i % max_swarms: count of each insect type / copies"),
            Piece("tadpoles", n, "tadpoles of each relative seat / (2 x Murrays)"),
            Piece("pond", p * NUM_INSECTS, "one-hot insect type in each pond slot (slots sorted by type)"),
            Piece("discard_pile", PILE_KINDS, "cards of each type in the discard pile (13 = Murray) / copies"),
            Piece("deck_size", 1, "cards left in the deck / cards in the game"),
            Piece("murrays_in_deck", 1, "Murrays left in the deck / Murrays in the game"),
            Piece("hawk", 4, "one-hot: Hawk in the discard pile, shuffled in and unseen by me, in my hand, left the deck"),
            Piece("turn_flags", 3, "this turn: pond swap used, common-fly draw used, may go out now"),
            Piece("last_passed", HAND_KINDS, "one-hot type of the card I last passed left"),
            Piece("last_received", HAND_KINDS, "one-hot type of the card I last received from my right"),
            Piece("seen_hands", (n - 1) * HAND_KINDS, "relative seat 1 + i // 13: the hand my Hornet is looking at, else as left after my last look / copies"),
            Piece("target_player", n, "one-hot relative seat targeted by the Hornet being resolved"),
            Piece("chosen_swarm", n * s, "one-hot swarm picked by the Firefly or Robber Fly being resolved"),
            Piece("robber_left", 1, "flies the Robber Fly being resolved still takes / 2"),
            Piece("turn_progress", 1, "turns begun / max_turns"),
        ]  # fmt: skip

    def fill(self, game: MurrayGame, player: int, parts: SimpleNamespace) -> None:
        """Write what `player` may know."""
        opts = game.options
        n, s = game.num_players, opts.max_swarms
        parts.decision[game.decision_kind] = 1.0
        parts.actor[(game.player - player) % n] = 1.0
        hand = game.hands[player]
        parts.my_hand[:] = hand
        parts.my_hand *= self._inv_hand
        seats = [(player + rel) % n for rel in range(n)]
        parts.hand_sizes[:] = [game.hand_sizes[q] * self._inv_total for q in seats]
        parts.tadpoles[:] = [game.tadpoles[q] * self._inv_tadpoles for q in seats]
        if any(game.swarms):
            swarms = parts.swarms.reshape(n * s, NUM_INSECTS)
            for rel, seat in enumerate(seats):
                for slot, swarm in enumerate(game.swarms[seat]):
                    swarms[rel * s + slot] = swarm
            swarms *= self._inv_insect
        for slot, card in enumerate(game.pond):
            parts.pond[slot * NUM_INSECTS + card] = 1.0
        parts.discard_pile[:] = game.discard
        parts.discard_pile *= self._inv_pile
        parts.deck_size[0] = len(game.deck) * self._inv_total
        # Murrays live only in the deck or on the pile, so the deck's count is public.
        in_play = game.decision_kind == Decision.MURRAY  # the Murray awaiting its target
        left = opts.murray_count - game.discard[Card.MURRAY] - in_play
        parts.murrays_in_deck[0] = left * self._inv_murrays
        if not game.hawk_in:
            parts.hawk[HawkStatus.DISCARD_PILE] = 1.0
        elif hand[Card.HAWK]:
            parts.hawk[HawkStatus.IN_MY_HAND] = 1.0
        elif game.hawk_seen[player]:
            parts.hawk[HawkStatus.LEFT_THE_DECK] = 1.0
        else:
            parts.hawk[HawkStatus.UNSEEN] = 1.0
        if game.player == player:
            parts.turn_flags[0] = game.swapped
            parts.turn_flags[1] = game.fly_drawn
            parts.turn_flags[2] = game.may_go_out and hand[Card.HAWK] > 0
        if game.last_passed[player] >= 0:
            parts.last_passed[game.last_passed[player]] = 1.0
        if game.last_received[player] >= 0:
            parts.last_received[game.last_received[player]] = 1.0
        looking = game.target if game.decision_kind == Decision.HORNET_TAKE and game.player == player else -1
        seen = game.seen[player]
        for rel in range(1, n):
            seat = (player + rel) % n
            view = game.hands[seat] if seat == looking else seen[seat]
            if view is not None:
                start = (rel - 1) * HAND_KINDS
                block = parts.seen_hands[start : start + HAND_KINDS]
                block[:] = view
                block *= self._inv_hand
        if game.target >= 0:
            parts.target_player[(game.target - player) % n] = 1.0
        owner, slot = game.chosen
        if owner >= 0:
            parts.chosen_swarm[((owner - player) % n) * s + slot] = 1.0
        parts.robber_left[0] = game.robber_left / 2.0
        parts.turn_progress[0] = min(game.turn / opts.max_turns, 1.0)
