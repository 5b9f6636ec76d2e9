"""Murray the A**hole Frog's card table: the card types, their names, values and counts, and the
swarms they can make; helpers on collections held as counts per card type."""

from __future__ import annotations

from enum import IntEnum
from functools import lru_cache
from itertools import combinations_with_replacement


class Card(IntEnum):
    """Every card type; the first twelve are the insects."""

    FRUIT_FLY = 0
    MIDGE = 1
    HOUSE_FLY = 2
    MAYFLY = 3
    CRANE_FLY = 4
    SOLDIER_FLY = 5
    DEER_FLY = 6
    DRAGONFLY = 7
    FIREFLY = 8
    ROBBER_FLY = 9
    PAPER_WASP = 10
    HORNET = 11
    HAWK = 12
    MURRAY = 13


NUM_INSECTS = 12
#: Card types a hand can hold: the insects and the Hawk (Murray is played the moment it is drawn).
HAND_KINDS = 13
#: Card types the discard pile can hold.
PILE_KINDS = 14
CARD_NAMES = (
    "Fruit Fly", "Midge", "House Fly", "Mayfly", "Crane Fly", "Soldier Fly", "Deer Fly",
    "Dragonfly", "Firefly", "Robber Fly", "Paper Wasp", "Hornet", "Hawk", "Murray",
)  # fmt: skip
#: Printed value of each card type; the Hawk and Murray count 0 in the hand penalty.
VALUE = (1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 3, 4, 0, 0)
COMMON_FLIES = (
    Card.FRUIT_FLY,
    Card.MIDGE,
    Card.HOUSE_FLY,
    Card.MAYFLY,
    Card.CRANE_FLY,
    Card.SOLDIER_FLY,
)
#: The Robber Fly's card says "flies": common and royal flies, not wasps.
FLIES = frozenset(range(Card.ROBBER_FLY + 1))
#: Cards whose ability is used by discarding them, in the order of the `ability` action block.
ABILITY_CARDS = (
    Card.DEER_FLY,
    Card.DRAGONFLY,
    Card.FIREFLY,
    Card.ROBBER_FLY,
    Card.PAPER_WASP,
    Card.HORNET,
)
TYPES_OF_VALUE = {v: tuple(t for t in range(NUM_INSECTS) if VALUE[t] == v) for v in range(1, 6)}
#: Every way to create a swarm: a multiset of three insect types of one value (32 in all).
SWARM_COMBOS = tuple(c for v in range(1, 6) for c in combinations_with_replacement(TYPES_OF_VALUE[v], 3))
#: Default insect counts (by `Card` index) for 3-4 and 5-6 players, from the card table.
COUNTS_3_4 = (9, 9, 9, 9, 6, 6, 3, 3, 3, 3, 3, 3)
COUNTS_5_6 = (12, 12, 12, 12, 9, 9, 4, 4, 4, 4, 4, 4)


def card_value_sum(counts: list[int]) -> int:
    """Total printed value of a collection of card counts."""
    return sum(c * VALUE[t] for t, c in enumerate(counts) if c)


def swarm_value(swarm: list[int]) -> int:
    """The value shared by every card of a (non-empty) swarm."""
    for t, c in enumerate(swarm):
        if c:
            return VALUE[t]
    return 0


def nth_card(counts: list[int], index: int) -> int:
    """The card type at position `index` when the cards of `counts` are laid out in type order."""
    left = index
    for card, count in enumerate(counts):
        if left < count:
            return card
        left -= count
    raise IndexError(f"card {index} is past the end of a collection of {sum(counts)} cards")


@lru_cache(maxsize=16)
def insect_cards(counts: tuple[int, ...]) -> tuple[int, ...]:
    """Every insect card of a deck holding `counts[t]` copies of type t, in type order (made once per deck)."""
    return tuple(t for t, c in enumerate(counts) for _ in range(c))
