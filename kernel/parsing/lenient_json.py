"""Locating JSON-ish values in free text and loading them tolerantly.

Models wrap, truncate, Python-ify, typeset and escape their JSON; brace matching plus a forgiving loader recovers
what a strict `json.loads` loses.
"""

from __future__ import annotations

import ast
import bisect
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

MAX_TRACKED_DEPTH = 256
"""Openers nested deeper than this are counted, not tracked, so pathological input costs no memory."""
RECORDED_DEPTH = 8
"""Balanced spans are recorded only this close to the top: calls never sit deeper in a reply."""
MAX_SPANS = 50_000
"""At most this many spans are kept: a reply with more balanced objects is a data dump."""
MAX_EVENTS = 100_000
"""A scan stops after this many steps (a flat object or string is one): real replies take far fewer."""
MAX_REPAIR_CHARS = 100_000
"""Text longer than this gets `json.loads` only: the repair pass is a Python-speed tokenizer."""

_DQ_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.S)
_SQ_STRING = re.compile(r"'(?:[^'\\\n]++|\\.)*+'")
_TOP_OPENER = re.compile(r"[{\[]")
_FLAT_OBJECT = re.compile(r"""\{(?:[^{}\[\]"'\\]++|"(?:[^"\\]++|\\.)*+")*+\}""", re.S)
"""An object with no nested brackets and no single quotes: the common case, matched in one step."""
_INNER_EVENT = re.compile(r"""[{}\[\]"']""")
_BRACE_AHEAD = re.compile(r"\s*\{")
_SPACE = re.compile(r"\s*")
_SINGLE_QUOTE_CONTEXT = frozenset("{[,:")

_TOKEN = re.compile(
    r"""(?P<dq>"(?:[^"\\]++|\\.)*+")
    |(?P<sq>'(?:[^'\\\n]++|\\.)*+')
    |(?P<curly>[“”„＂](?:[^“”＂\\\n]++|\\.)*+[“”＂]|‘(?:[^‘’\n]|’(?![ \t]*(?:[:,}\]：，｝］]|$)))*+’)
    |(?P<escaped><escape>.*?<escape>)
    |(?P<comment>//[^\n]*|\#[^\n]*|/\*.*?\*/)
    |(?P<num>-?\d[\d.eE+\-]*)
    |(?P<word>[^\W\d][\w$.\-]*)
    |(?P<close>[}\]｝］])
    |(?P<space>\s+)
    |(?P<other>.)""",
    re.S | re.X,
)
"""`curly`: typographic and full-width quotes; a `’` inside `‘...’` is an apostrophe unless structure follows it.
`escaped`: FunctionGemma's `<escape>` string delimiters."""
_OPENER_KIND = {'"': "dq", "'": "sq", "“": "curly", "”": "curly", "„": "curly", "＂": "curly", "/": "block"}
_UNCLOSED_UNTIL_NEWLINE = {
    "sq": re.compile(r"(?:[^'\\\n]++|\\.)*+", re.S),
    "curly": re.compile(r"(?:[^“”＂\\\n]++|\\.)*+", re.S),
}
"""The content of a single-quoted or curly-quoted string: where a scan of one that never closed stopped."""
_FULL_WIDTH = {"：": ":", "，": ",", "｛": "{", "｝": "}", "［": "[", "］": "]"}
_OPENERS = {"{": "}", "[": "]"}
_ESCAPED_START = re.compile(r'\s*[\[{]\s*\\+"')
"""JSON whose own quotes are escaped (`{\\"name\\": ...}`): a string literal's content, written out."""
MAX_UNESCAPES = 3
_LITERAL_WORDS = {
    "true": "true",
    "True": "true",
    "false": "false",
    "False": "false",
    "null": "null",
    "None": "null",
    "undefined": "null",
    "NaN": "NaN",
    "Infinity": "Infinity",
}


class LenientJSONError(ValueError):
    """The text is not JSON even after the tolerated repairs; the message says where it broke."""


Span = tuple[int, int]
"""A balanced `{...}` (or top-level `[{...}]`) region as `(start, end)`: `text[start:end]`."""


@dataclass(frozen=True, slots=True)
class SpanScan:
    """Every balanced region of a text near the top level, and the openers that never closed."""

    spans: tuple[Span, ...]
    """Sorted by start, so an enclosing span comes before the spans inside it."""
    unclosed: tuple[int, ...]
    """Positions of openers still open at the end of the text, outermost first."""

    def outermost(self, lo: int = 0, hi: int | None = None) -> list[Span]:
        """The spans inside `[lo, hi)` that no other span inside that range encloses, in text order."""
        limit = hi if hi is not None else 1 << 62
        out: list[Span] = []
        reach = lo
        for start, end in self.spans[bisect.bisect_left(self.spans, (lo, -1)) :]:
            if start >= limit:
                break
            if start >= reach and end <= limit:
                out.append((start, end))
                reach = end
        return out


def skip_space(text: str, pos: int) -> int:
    """Where the white space at `pos` ends (`pos` itself when there is none)."""
    space = _SPACE.match(text, pos)
    return pos if space is None else space.end()


def scan_spans(text: str) -> SpanScan:
    """Find balanced `{...}` spans (and `[` only where it opens `[{`) by bracket matching.

    Strings are respected inside a span, so braces in arguments (`{job="a"}`) do not count; quotes in
    prose outside any span are ignored. Linear in the length of the text.
    """
    spans, unclosed, _ = _scan(text, 0, single=False)
    spans.sort()
    return SpanScan(tuple(spans), tuple(unclosed))


def match_closing(text: str, start: int, stop: int | None = None) -> int | None:
    """The end (exclusive) of the JSON-ish value opening with `{` or `[` at `start`; None if it never closes
    (before `stop`, when given: the end of the region the value must lie in)."""
    if not 0 <= start < len(text) or text[start] not in "{[":
        return None
    return _scan(text, start, single=True, stop=stop)[2]


def _scan(text: str, start: int, *, single: bool, stop: int | None = None) -> tuple[list[Span], list[int], int | None]:
    """The bracket matcher: every span closed (near the top), the openers left open, and in `single` mode
    the end of the value opening at `start`. A flat object is matched whole by one regex, for speed."""
    stack: list[tuple[str, int]] = []
    untracked = 0
    spans: list[Span] = []
    double_quotes_live = True
    single_quotes_off_until = -1
    pos, size, events_left = start, len(text) if stop is None else min(stop, len(text)), MAX_EVENTS
    top_search, inner_search, flat_match = _TOP_OPENER.search, _INNER_EVENT.search, _FLAT_OBJECT.match
    if single:
        flat = flat_match(text, start, size)
        if flat:
            return [(start, flat.end())], [], flat.end()
        stack.append((text[start], start))
        pos = start + 1
    while pos < size and events_left:
        events_left -= 1
        if stack:
            event = inner_search(text, pos, size)
            if event is None:
                break
            i = event.start()
            char = text[i]
        else:
            event = top_search(text, pos, size)
            if event is None:
                break
            i = event.start()
            char = text[i]
            if char == "[" and not _BRACE_AHEAD.match(text, i + 1):
                pos = i + 1
                continue
        pos = i + 1
        if char == "{" or char == "[":
            flat = flat_match(text, i, size) if char == "{" and double_quotes_live else None
            if flat:
                pos = flat.end()
                if len(stack) < RECORDED_DEPTH and len(spans) < MAX_SPANS:
                    spans.append((i, pos))
            elif len(stack) < MAX_TRACKED_DEPTH:
                stack.append((char, i))
            else:
                untracked += 1
        elif char == '"':
            if double_quotes_live and text[i - 1] != "\\":  # `\"` opens no string: JSON written escaped
                string = _DQ_STRING.match(text, i, size)
                if string:
                    pos = string.end()
                else:  # unterminated to the end: a prose quote; stop honouring quotes so the scan stays linear
                    double_quotes_live = False
        elif char == "'":
            if i > single_quotes_off_until and _previous_significant(text, i) in _SINGLE_QUOTE_CONTEXT:
                string = _SQ_STRING.match(text, i, size)
                if string:
                    pos = string.end()
                else:
                    newline = text.find("\n", i)
                    single_quotes_off_until = size if newline < 0 else newline
        elif untracked:
            untracked -= 1
        elif stack[-1][0] == ("{" if char == "}" else "["):
            _, opened = stack.pop()
            if len(stack) < RECORDED_DEPTH and len(spans) < MAX_SPANS:
                spans.append((opened, i + 1))
            if single and not stack:
                return spans, [], i + 1
    return spans, [opened for _, opened in stack], None


def _previous_significant(text: str, i: int) -> str:
    j = i - 1
    while j >= 0 and text[j] in " \t\r\n":
        j -= 1
    return text[j] if j >= 0 else ""


def load_lenient(text: str, *, close_open: bool = False, unescapes: int = 0) -> Any:
    """`json.loads`, then the same text with the damage models do repaired; raises `LenientJSONError`.

    Tolerated: single, typographic and full-width quotes, full-width `：，｛｝`, True/False/None, trailing commas,
    unquoted keys and words, `//`, `#` and `/* */` comments, raw control characters in strings, unescaped quotes
    inside a string (`"{job="api"}"`), FunctionGemma's `<escape>` strings, and JSON written as a string literal's
    content (`{\\"name\\": ...}`). `close_open`: the text is known to be complete (its fence or tag closed after it),
    so brackets left open at its end are closed. Never evaluates code.
    """
    try:
        return json.loads(text, strict=False)
    except RecursionError:
        raise LenientJSONError("nested too deeply") from None
    except ValueError as exc:
        failure = exc
    if len(text) <= MAX_REPAIR_CHARS:
        for repaired in _repairs(text, close_open):
            try:
                return json.loads(repaired, strict=False)
            except (ValueError, RecursionError):
                continue
        if unescapes < MAX_UNESCAPES and _ESCAPED_START.match(text):
            return load_lenient(_unescape(text), close_open=close_open, unescapes=unescapes + 1)
    raise LenientJSONError(_describe(failure)) from None


def _repairs(text: str, close_open: bool) -> Iterator[str]:
    """Rewrites of the text to try in turn, each made only if the one before did not load."""
    for source in (text, _escape_inner_quotes(text)) if '"' in text else (text,):
        repaired = _as_strict_json(source, close_open)
        if repaired is not None:
            yield repaired


def _unescape(text: str) -> str:
    """The text as the content of a JSON string literal: one level of `\\"`, `\\\\`, `\\n` escapes undone."""
    try:
        return json.loads(f'"{text}"', strict=False)
    except ValueError:
        return text.replace('\\"', '"')


def _describe(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at line {error.lineno}, column {error.colno}"
    return str(error)


def _as_strict_json(text: str, close_open: bool = False) -> str | None:
    """Rewrite JSON-ish text token by token into strict JSON; None when a string cannot be re-quoted, or when
    `close_open` would have to close a string."""
    out: list[str] = []
    open_brackets: list[str] = []
    for kind, value in _tokens(text):
        if kind == "dq" and "\\" in value:
            converted = value if _is_json_string(value) else _requote(value)
        elif kind == "sq":
            converted = _requote(value)
        elif kind == "curly":
            converted = json.dumps(value[1:-1], ensure_ascii=False)
        elif kind == "escaped":
            converted = json.dumps(value[len("<escape>") : -len("<escape>")], ensure_ascii=False)
        elif kind == "word":
            converted = _LITERAL_WORDS.get(value) or json.dumps(value)
        elif kind == "comment":
            continue
        elif kind == "other" or kind == "close":
            converted = _FULL_WIDTH.get(value, value)
            if converted in _OPENERS:
                open_brackets.append(_OPENERS[converted])
            elif kind == "close" and open_brackets:
                open_brackets.pop()
            elif close_open and converted in "\"'“‘＂":
                return None  # a quote that opens no string: the text ends inside one
        else:
            converted = value
        if converted is None:
            return None
        if kind == "close":
            _drop_trailing_comma(out)
        out.append(converted)
    if close_open and open_brackets:
        _drop_trailing_comma(out)
        out.extend(reversed(open_brackets))
    return "".join(out)


def _tokens(text: str) -> Iterator[tuple[str, str]]:
    """`_TOKEN`'s tokens of `text`, as (kind, text), in linear time. A string or block comment that never closes
    leaves its opener an `other` token; every later opener of its kind, up to where that scan stopped, cannot close
    either (its escapes pair the same way), so it is not scanned again: a text of unclosed quotes was quadratic."""
    unclosed: dict[str, int] = {}
    pos, size = 0, len(text)
    while pos < size:
        kind = _OPENER_KIND.get(text[pos])
        if kind == "block" and not text.startswith("/*", pos):
            kind = None
        if kind is not None and pos < unclosed.get(kind, 0):
            yield "other", text[pos]
            pos += 1
            continue
        token = _TOKEN.match(text, pos)
        assert token is not None  # `other` takes any character
        group = str(token.lastgroup)
        if kind is not None and group == "other":
            content = _UNCLOSED_UNTIL_NEWLINE.get(kind)
            stop = content.match(text, pos + 1) if content is not None else None
            unclosed[kind] = size if stop is None else stop.end()
        yield group, token.group()
        pos = token.end()


def _is_json_string(literal: str) -> bool:
    try:
        json.loads(literal, strict=False)
    except ValueError:
        return False
    return True


def _requote(literal: str) -> str | None:
    """A Python string literal as a JSON string literal."""
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else None


def _drop_trailing_comma(out: list[str]) -> None:
    j = len(out) - 1
    while j >= 0 and out[j].isspace():
        j -= 1
    if j >= 0 and out[j] == ",":
        del out[j]


def _escape_inner_quotes(text: str) -> str:
    """Escape the double quotes inside string values that a model forgot to escape.

    A quote ends its string only if what follows fits JSON: `:`, a `,` then the next key or value, or a
    closing bracket followed by `,`, a bracket, or the end. Any other quote is taken as content.
    """
    out: list[str] = []
    containers: list[str] = []
    in_string = False
    i, size = 0, len(text)
    while i < size:
        char = text[i]
        if in_string and char == "\\":
            out.append(text[i : i + 2])
            i += 2
            continue
        if in_string and char == '"':
            in_string = not _ends_string(text, i + 1, containers[-1] if containers else "")
            out.append('\\"' if in_string else char)
        else:
            if char == '"':
                in_string = True
            elif not in_string and char in "{[":
                containers.append(char)
            elif not in_string and char in "}]" and containers:
                containers.pop()
            out.append(char)
        i += 1
    return "".join(out)


def _ends_string(text: str, j: int, container: str) -> bool:
    j = skip_space(text, j)
    if j >= len(text) or text[j] == ":":
        return True
    if text[j] not in ",}]":
        return False
    k = skip_space(text, j + 1)
    if k >= len(text):
        return True
    if text[j] != ",":
        return text[k] in ",}]"
    return text[k] == '"' if container == "{" else text[k] in '"{[-0123456789tfn]'
