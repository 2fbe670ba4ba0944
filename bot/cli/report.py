"""What a report shows, as data the terminal lays out: lines of words, status lines led by a mark, headings and
tables.

The renderers of `stats`, `eval`, `memory`, `replay`, `check` and `tools list` return these parts, and
`Terminal.report` shows them alike for every command: styled and wrapped to the width on a terminal, plain with
each line whole in a pipe. The plain layout lives here, so a pipe reads the same whoever renders.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum


class Mark(StrEnum):
    """What leads a status line, and what it says about the part it names."""

    OK = "✓"
    FAILED = "✗"
    WARNING = "⚠"
    """It works, but needs a look."""
    NOTE = "·"
    """Nothing wrong: not configured, a note, progress."""


@dataclass(frozen=True)
class StatusLine:
    """`✓ text`: one part's state, the mark coloured by what it says."""

    mark: Mark
    text: str
    indent: int = 0
    """Spaces before the mark, to sit under the line it belongs to."""

    def plain(self) -> str:
        """The line as a pipe gets it."""
        return f"{' ' * self.indent}{self.mark} {self.text}"


@dataclass(frozen=True)
class Heading:
    """The name a block of lines is about (a tool), with what to know about it in brackets."""

    text: str
    note: str = ""

    def plain(self) -> str:
        """The line as a pipe gets it."""
        return f"{self.text} [{self.note}]" if self.note else self.text


@dataclass(frozen=True)
class Table:
    """Rows of cells under a header; the columns in `right` (numbers) right-aligned."""

    header: Sequence[str]
    rows: Sequence[Sequence[str]]
    right: Sequence[int] = ()

    def lines(self) -> list[str]:
        """The plain layout, header first: columns padded two spaces apart, no trailing spaces."""
        table = [list(self.header), *(list(row) for row in self.rows)]
        widths = [max(len(row[i]) for row in table) for i in range(len(self.header))]
        return [
            "  ".join(
                cell.rjust(width) if i in self.right else cell.ljust(width)
                for i, (cell, width) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
            for row in table
        ]


Part = str | StatusLine | Heading | Table
"""One piece of a report; a `str` is a line of words (it may hold several lines)."""
Report = Sequence[Part]
