"""Plain-text tables for the terminal: columns padded two spaces apart, numbers right-aligned.

Shared by the commands that print tables (`stats`, `eval`), so they all look alike.
"""

from __future__ import annotations

from collections.abc import Sequence


def render_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, right: Sequence[int] = ()) -> list[str]:
    """Text rows padded into columns two spaces apart (the columns in `right` right-aligned), header first;
    shared by the commands that print tables so they all look alike."""
    table = [list(header), *(list(row) for row in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    return [
        "  ".join(
            cell.rjust(w) if i in right else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in table
    ]
