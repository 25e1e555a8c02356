"""An observation declared once, as named pieces (as OpenSpiel's observers declare theirs).

The env docstring's table, the compiled observation code, the planner, the features extractor and
the pictures all read a game's observation through its ``Layout``, never through numbers of
their own.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Piece:
    """A named run of observation entries: ``size`` entries from ``start``."""

    name: str
    start: int
    size: int
    meaning: str

    @property
    def slice(self) -> slice:
        return slice(self.start, self.start + self.size)

    @property
    def indices(self) -> str:
        """``[a, b)`` for a run, ``a`` for one entry (as the docstring tables write them)."""
        return f"`{self.start}`" if self.size == 1 else f"`[{self.start}, {self.start + self.size})`"


class Layout:
    """The pieces of a flat observation, in order, without gaps."""

    def __init__(self, *pieces: tuple[str, int, str]) -> None:
        out, start = [], 0
        for name, size, meaning in pieces:
            if size < 1:
                raise ValueError(f"observation piece {name!r} needs a size >= 1, got {size}")
            out.append(Piece(name, start, size, meaning))
            start += size
        self.pieces: tuple[Piece, ...] = tuple(out)
        self.size = start
        self._by_name = {p.name: p for p in self.pieces}
        if len(self._by_name) != len(self.pieces):
            raise ValueError("observation piece names must be unique")

    def __getitem__(self, name: str) -> Piece:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no observation piece {name!r}; pieces: {list(self._by_name)}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[Piece]:
        return iter(self.pieces)

    def table(self) -> str:
        """The Markdown table of the pieces, for the env docstring and the README."""
        lines = ["| indices | piece | meaning |", "|---|---|---|"]
        lines += [f"| {p.indices} | `{p.name}` | {p.meaning} |" for p in self.pieces]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Layout({', '.join(f'{p.name}[{p.start}:{p.start + p.size}]' for p in self.pieces)})"


def indent(table: str) -> str:
    """A table indented to sit in an env docstring (whose body is indented four spaces)."""
    return textwrap.indent(table, "    ")
