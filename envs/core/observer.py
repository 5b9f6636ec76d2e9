"""Observations built from named pieces, with a layout table generated from the same list."""

from __future__ import annotations

import abc
from dataclasses import dataclass
from types import SimpleNamespace
from typing import ClassVar

import numpy as np


@dataclass(frozen=True)
class Piece:
    """One named slice of the flat observation vector."""

    name: str
    size: int
    description: str
    low: float = 0.0
    high: float = 1.0


class Observer(abc.ABC):
    """Decides what one player sees. Hidden state is read here and nowhere else."""

    #: Pieces that `fill` always writes whole (from a cache, say), so `encode` need not zero them
    #: first. A piece named here and written only in part would show stale values: leave it out.
    dense_pieces: ClassVar[tuple[str, ...]] = ()
    #: True if `fill` only writes single elements (`part[i] = x`) and whole slices from float32
    #: arrays: its parts are then memoryviews, whose element writes cost about half a numpy element
    #: write. Left False, they are numpy views. (`part[i] += x` adds in float64 on a memoryview but
    #: in float32 on a numpy view: the same only where both sums are exact, e.g. small integers.)
    memoryview_parts: ClassVar[bool] = False

    def __init__(self, options) -> None:
        self.options = options
        self.pieces: list[Piece] = list(self.layout(options))
        self.offsets: dict[str, slice] = {}
        start = 0
        for piece in self.pieces:
            if piece.name in self.offsets:
                raise ValueError(f"duplicate observation piece {piece.name!r}")
            self.offsets[piece.name] = slice(start, start + piece.size)
            start += piece.size
        self.size = start
        self.low = np.concatenate([np.full(p.size, p.low, np.float32) for p in self.pieces])
        self.high = np.concatenate([np.full(p.size, p.high, np.float32) for p in self.pieces])
        self._buffer = np.zeros(self.size, dtype=np.float32)
        #: What `encode` zeroes before each `fill`: everything but the dense pieces.
        self._to_zero: list[slice] = []
        start = 0
        for piece in self.pieces:
            if piece.name in self.dense_pieces:
                if start < self.offsets[piece.name].start:
                    self._to_zero.append(slice(start, self.offsets[piece.name].start))
                start = self.offsets[piece.name].stop
        if start < self.size:
            self._to_zero.append(slice(start, self.size))
        self._raw_bytes = memoryview(self._buffer).cast("B")
        size = self._buffer.itemsize
        self._zeroing = [
            (slice(span.start * size, span.stop * size), bytes((span.stop - span.start) * size))
            for span in self._to_zero
        ]
        whole = memoryview(self._buffer) if self.memoryview_parts else self._buffer
        self._parts = SimpleNamespace(**{name: whole[s] for name, s in self.offsets.items()})

    def __reduce__(self):
        """Pickled and deep-copied as a fresh observer for the same options.

        Everything an observer holds besides its options is scratch space and caches (some of it
        memoryviews, which cannot be pickled); a fresh one encodes exactly the same.
        """
        return type(self), (self.options,)

    @abc.abstractmethod
    def layout(self, options) -> list[Piece]:
        """The named pieces, in order."""

    @abc.abstractmethod
    def fill(self, game, player: int, parts: SimpleNamespace) -> None:
        """Write what `player` may know into the zeroed views `parts.<piece name>`."""

    def view(self, game, player: int) -> str:
        """The table as `player` sees it, as text: own cards, public cards, counts; nothing hidden.

        Like `fill`, it reads only what `player` may know, so a re-deal of what `player` cannot
        see (`resample_hidden`) leaves it unchanged. Games override it.
        """
        raise NotImplementedError(f"{type(self).__name__} has no per-player text view")

    def encode_full(self, game, player: int) -> np.ndarray:
        """`encode` from scratch with `fill`: the reference a game's incremental `encode` must equal."""
        # One zeroed scratch buffer and its named views are reused; only the result is copied.
        # Zeroing copies zero bytes over the spans (cheaper than numpy's fill for short spans).
        raw = self._raw_bytes
        for span, zeros in self._zeroing:
            raw[span] = zeros
        self.fill(game, player, self._parts)
        return self._buffer.copy()

    #: The flat float32 observation of `player` (a new array the caller may keep). A game may
    #: override it with an incremental version; `encode_full` stays the reference.
    encode = encode_full

    def seat_buffers(self) -> tuple[list[np.ndarray], list[SimpleNamespace]]:
        """One zeroed vector per seat and its named views, for an `encode` that updates in place."""
        vectors = [np.zeros(self.size, dtype=np.float32) for _ in range(self.options.num_players)]
        views = [SimpleNamespace(**{name: v[s] for name, s in self.offsets.items()}) for v in vectors]
        return vectors, views

    def decode(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """Split a flat observation back into its named pieces (for debugging and agents)."""
        return {name: vector[s] for name, s in self.offsets.items()}

    def layout_table(self) -> str:
        """The observation layout as a Markdown table (the docs must contain it verbatim)."""
        rows = ["| offset | size | name | range | meaning |", "|---|---|---|---|---|"]
        for piece in self.pieces:
            s = self.offsets[piece.name]
            rows.append(
                f"| {s.start} | {piece.size} | `{piece.name}` | "
                f"{_fmt(piece.low)}..{_fmt(piece.high)} | {piece.description} |"
            )
        return "\n".join(rows)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"
