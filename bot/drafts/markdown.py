"""Outside text in a Markdown draft: shown as it was written, never markup that acts when the draft is pasted into
a wiki, a tracker or a Markdown viewer.

Two forms, one escaping. `escaped` is a recorded fact (a message, a tool's output, a label): one line, every markup
character escaped. `escaped_prose` is a model's narrative, prose for people: its paragraphs, bullets, numbered
lists, emphasis and code spans are kept; it cannot hold raw HTML (or comments), images, headings, quotes, tables,
rules or code fences, and its links become autolinks, `<https://…>`, whose text is where they go.

Control characters (an ANSI colour, a NUL, DEL) are shown as `\\x1b`, as the terminal shows them, so a draft
printed by `opsagent postmortem` cannot drive the terminal.
"""

from __future__ import annotations

import re

from bot.slack.mrkdwn import looks_like_address

_CONTROLS = {code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if code not in (0x09, 0x0A)}
_ENTITIES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
"""Entities, not backslashes: a renderer that is not CommonMark (Python-Markdown, so MkDocs) keeps `\\<` as a
backslash before live HTML."""
_ESCAPED_IN_FACTS = "\\`*_{}[]()#+!|~"
_ESCAPED_IN_PROSE = "\\`[]#|~"
"""Emphasis (`*`, `_`) is kept in prose: it wraps text and cannot link, load or hide anything."""


def _escaping(characters: str) -> dict[int, str]:
    """A `str.translate` table: `&<>` as entities, each of `characters` backslash-escaped, control characters
    shown escaped."""
    shown = {code: "\\" + text for code, text in _CONTROLS.items()}  # its backslash escaped too
    return {**shown, **_ENTITIES, **{ord(char): "\\" + char for char in characters}}


_FACT = _escaping(_ESCAPED_IN_FACTS)
_PROSE = _escaping(_ESCAPED_IN_PROSE)
_CODE = _CONTROLS  # inside a code span a backslash is literal: nothing else to escape
_RULE_MARKS = "-*_=:"
"""What a line of a rule, a setext heading's underline or a table's delimiter row (`---`, `***`, `===`, `-:`) is
made of, with blanks."""
_RULE = _escaping(_RULE_MARKS)
_LEADING_MARKER = re.compile(r"\d{1,9}\.|-")
"""What would begin a list or a rule at a fact's start (`+`, `*` and `)` are escaped everywhere)."""
_LIST_ITEM = re.compile(r" {0,8}(?:[-*+]|\d{1,9}[.)])(?=[ \t]|$)")
_BLANKS = " \t"
_URL = r"(?i:https?)://[A-Za-z0-9\-._~:/?#@!$&'*+,;=%]{1,2000}+"
"""An http(s) URL of ASCII characters that cannot end an autolink or a link early (no spaces, `<>`, `[]`, `()`);
other URLs (`javascript:`, `data:`, an address with spaces) stay text."""
_BARE = rf"(?P<bare>{_URL})"
_URLS = re.compile(_BARE)
_LINKS = re.compile(rf"(?P<image>!?)\[(?P<label>[^\[\]\n]{{1,500}}+)\]\((?P<url>{_URL})\)|<(?P<auto>{_URL})>|{_BARE}")
"""An inline link or image, `[label](url)`, an autolink, `<url>`, or a bare URL; possessive, so each attempt at a
match is linear."""
_AFTER_URL = ".,:;!?'*"
"""What ends a sentence rather than the URL it follows (as GitHub reads a bare URL)."""


def escaped(text: str) -> str:
    """A recorded fact made inert: one line, its markup characters escaped (a message cannot add a heading, a link,
    an image, a list or a table cell); an http(s) URL in it becomes an autolink, `<url>`, whose text is where it
    goes (escaped, a bare URL would be broken where GitHub links it: with its backslashes)."""
    flat = _linked(" ".join(text.split()), _URLS, _FACT)
    if (marker := _LEADING_MARKER.match(flat)) is not None:
        return f"{flat[: marker.end() - 1]}\\{flat[marker.end() - 1 :]}"
    return flat


def escaped_prose(text: str) -> str:
    """A model's Markdown kept as prose: paragraphs, bullets, numbered lists, emphasis and code spans as written;
    links as `label (<url>)` (only `<url>` when the label reads as an address, so no text names another place than
    its link), bare URLs as `<url>`, http(s) only; everything else (HTML, images, headings, quotes, tables,
    fences) shown as text."""
    return "\n".join(_prose_line(line) for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))


def _prose_line(line: str) -> str:
    """One line of prose: its list markers (a list item can hold another) kept, each followed by one space (more
    would make its text code), then a line of `_RULE_MARKS` shown as text, or the line's inline text."""
    markers = ""
    while (item := _LIST_ITEM.match(line)) is not None and line.strip(_BLANKS + _RULE_MARKS):
        markers += f"{item.group()} "
        line = line[item.end() :].lstrip(_BLANKS)
    stripped = line.strip(_BLANKS)
    if stripped and not stripped.strip(_BLANKS + _RULE_MARKS):
        return markers + stripped.translate(_RULE)
    return (markers + _inline(line.lstrip(_BLANKS))).rstrip(" ")  # indented, a line would be a code block


def _inline(line: str) -> str:
    """One line of prose: its code spans kept, its links made autolinks, the rest escaped."""
    out, at = [], 0
    for start, end in _code_spans(line):
        out += [_linked(line[at:start], _LINKS, _PROSE), line[start:end].translate(_CODE)]
        at = end
    out.append(_linked(line[at:], _LINKS, _PROSE))
    return "".join(out)


def _code_spans(line: str) -> list[tuple[int, int]]:
    """Where the line's code spans are, as CommonMark finds them: a run of backticks up to the next run of the
    same length. A run with no such partner on the line is left out, and so escaped: it can open no span (or
    fence) that reaches into the next line, outside what was found here."""
    runs = [(m.start(), m.end()) for m in re.finditer("`+", line)]
    partner: list[int | None] = [None] * len(runs)
    latest: dict[int, int] = {}
    for index in reversed(range(len(runs))):
        length = runs[index][1] - runs[index][0]
        partner[index], latest[length] = latest.get(length), index
    spans, index = [], 0
    while index < len(runs):
        closing = partner[index]
        if closing is None:
            index += 1
        else:
            spans.append((runs[index][0], runs[closing][1]))
            index = closing + 1
    return spans


def _linked(text: str, links: re.Pattern[str], escaping: dict[int, str]) -> str:
    """`text` escaped with `escaping`, but what `links` finds in it written as autolinks."""
    out, at = [], 0
    for match in links.finditer(text):
        out += [text[at : match.start()].translate(escaping), _autolink(match, escaping)]
        at = match.end()
    out.append(text[at:].translate(escaping))
    return "".join(out)


def _autolink(match: re.Match[str], escaping: dict[int, str]) -> str:
    found = match.groupdict()
    if bare := found["bare"]:
        url = bare.rstrip(_AFTER_URL)
        if not url.partition("://")[2]:  # a scheme and punctuation: no place to link to
            return bare.translate(escaping)
        return f"<{url}>{bare[len(url) :].translate(escaping)}"
    if found["auto"]:
        return match.group()
    if found["image"]:  # never loaded: shown as written
        return match.group().translate(escaping)
    label, url = found["label"], found["url"]
    return f"<{url}>" if looks_like_address(label) else f"{label.translate(escaping)} (<{url}>)"
