"""What both generated pages write the same way: the line that says how they are made, table cells, anchors."""

from __future__ import annotations

GENERATED_BY = "python -m bot.cli.reference"
"""The command that writes the reference pages (and, with `--check`, says whether they are current)."""


def generated_note(source: str) -> str:
    """The comment at the top of a page: where it comes from, and that it is not edited by hand."""
    return f"<!-- Generated from {source} by `{GENERATED_BY}`: do not edit by hand. -->"


ESCAPED = {"|": "\\|", "*": "\\*", "_": "\\_", "<": "&lt;", ">": "&gt;"}
"""Outside code spans, what would end a table cell (`|`), start emphasis (`OPENAI_*`) or read as an HTML tag
(`<run id>`) in a docstring or a help text, written so that it shows as itself."""


def inline(text: str) -> str:
    """Markdown text (code spans kept as they are) made safe in a paragraph or a table cell as MkDocs renders it:
    Python-Markdown ends a cell at a `|` outside a code span only."""
    out: list[str] = []
    start = 0
    while (tick := text.find("`", start)) >= 0:
        out.append(_escaped(text[start:tick]))
        fence = tick
        while fence < len(text) and text[fence] == "`":
            fence += 1
        ticks = text[tick:fence]
        close = _closing(text, ticks, fence)
        if close < 0:  # an unclosed run of backticks is literal text
            out.append(ticks)
            start = fence
            continue
        out.append(text[tick : close + len(ticks)])
        start = close + len(ticks)
    out.append(_escaped(text[start:]))
    return "".join(out) or " "


def _closing(text: str, ticks: str, start: int) -> int:
    """Where the run of exactly as many backticks that closes a code span begins, or -1."""
    at = text.find(ticks, start)
    while at >= 0:
        end = at + len(ticks)
        if (at == 0 or text[at - 1] != "`") and (end == len(text) or text[end] != "`"):
            return at
        while end < len(text) and text[end] == "`":
            end += 1
        at = text.find(ticks, end)
    return -1


def _escaped(plain: str) -> str:
    return "".join(ESCAPED.get(c, c) for c in plain)


def anchor(heading: str) -> str:
    """The id MkDocs gives a heading (Python-Markdown's toc: lower case, spaces to '-', punctuation dropped)."""
    return "".join(c for c in heading.lower().replace(" ", "-") if c.isalnum() or c in "_-")
