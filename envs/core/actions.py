"""Named action ranges: the flat Discrete action space as consecutive documented blocks."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ActionBlock:
    """A consecutive range of action ids that share a meaning."""

    name: str
    start: int
    size: int
    description: str

    @property
    def stop(self) -> int:
        """One past the last id of the block."""
        return self.start + self.size

    def __contains__(self, action: int) -> bool:
        return self.start <= action < self.stop


class ActionLayout:
    """An ordered list of action blocks; ids are assigned in order from 0."""

    def __init__(self, blocks: list[tuple[str, int, str]]) -> None:
        self.blocks: list[ActionBlock] = []
        self._by_name: dict[str, ActionBlock] = {}
        start = 0
        for name, size, description in blocks:
            block = ActionBlock(name, start, size, description)
            self.blocks.append(block)
            self._by_name[name] = block
            start += size
        self.size = start
        self._owner = [block for block in self.blocks for _ in range(block.size)]

    def __getitem__(self, name: str) -> ActionBlock:
        return self._by_name[name]

    def decode(self, action: int) -> tuple[str, int]:
        """(block name, index inside the block) of an action id."""
        block = self._owner[action]
        return block.name, action - block.start

    def table(self) -> str:
        """The action layout as a Markdown table (the docs must contain it verbatim)."""
        rows = ["| ids | name | meaning |", "|---|---|---|"]
        for b in self.blocks:
            ids = str(b.start) if b.size == 1 else f"{b.start}-{b.stop - 1}"
            rows.append(f"| {ids} | `{b.name}` | {b.description} |")
        return "\n".join(rows)
