"""Tiny variants of each game for exact tests: decks small enough to enumerate what a player may know.

`TINY[name]` are constructor options and `TINY_PLAYERS[name]` the player count. They shrink the
decks (and hands) so that a random game lasts tens of decisions and the worlds consistent with a
player's history number at most a few hundred, while every hidden-information mechanic of the
game still happens.
"""

from __future__ import annotations

TINY: dict[str, dict] = {}
TINY_PLAYERS: dict[str, int] = {}
