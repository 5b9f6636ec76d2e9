"""The history of card moves a Murray game keeps (`MurrayGame.events`): recorded by the rules,
replayed only by `envs.murray.posterior` to re-deal what a player has not seen."""

from __future__ import annotations

from enum import IntEnum


class Event(IntEnum):
    """Kinds of entry in `MurrayGame.events`, the history of card moves `resample_hidden` replays.

    Every entry is a tuple starting with its kind; cards are `Card` ints, seats absolute.
    """

    TURN = 0  # (TURN, p): p's turn begins
    DRAW = 1  # (DRAW, p, card): p draws a card face down
    REVEAL = 2  # (REVEAL, card): a card is drawn face up (to the pond, or a Murray)
    RESHUFFLE = 3  # (RESHUFFLE, pile): the discard pile (counts by type) becomes the deck
    OUT = 4  # (OUT, p, card): a card leaves p's hand face up (swarm, discard pile, pond)
    IN = 5  # (IN, p, card): a face-up card enters p's hand (from the pond or a swarm)
    TAKE = 6  # (TAKE, p, victim, card, hornet): a card moves from victim's hand to p's, shown
    PASS = 7  # (PASS, p, card): p passes a card face down to the left
    LOOK = 8  # (LOOK, p, target, hand): p looks at target's whole hand (counts by type)
    SWAP = 9  # (SWAP, p, given, taken): p swaps a card of its hand with a pond card
