"""Calls written as code on a line of their own: JS-style `name({...})` and Pythonic `[name(k=v)]` lists.

Small models (and LFM2 once its tokens are stripped) write calls as code; only a whole line makes it a call, so
prose that mentions `query_metrics(service)` mid-sentence never becomes one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from itertools import islice
from typing import Any

from kernel.calls import ToolCall
from kernel.parsing.call_blocks import Fence, Site, overlaps
from kernel.parsing.call_shapes import calls_from_python, make_call, normalize_tool_name
from kernel.parsing.lenient_json import LenientJSONError, load_lenient, match_closing, skip_space

_JS_CALL = re.compile(
    r"^[ \t]*(?:await[ \t]+)?(?P<name>(?:functions\.|default_api\.)?[A-Za-z_]\w*)[ \t]*\([ \t]*(?=\{)", re.M
)
"""`name({` at the start of a line: a JS-style call whose one argument is an object literal."""
_JS_CALL_END = re.compile(r"[ \t]*\)[ \t]*;?[ \t]*(?:\n|\Z)")
_PYTHONIC_LINE = re.compile(r"^[ \t]*\[[ \t]*[A-Za-z_][\w.]*[ \t]*\([^\n]*\)[ \t]*\][ \t]*(?:\n|\Z)", re.M)
_NOT_TOOLS = frozenset(
    {"if", "for", "while", "switch", "return", "catch", "function", "print", "require", "import", "export", "new"}
)
"""Words that open a line of code like a call does, but are syntax or well-known functions, never tools."""
MAX_CODE_LINES = 32
"""Lines that open like a call examined per reply: real replies hold a few; a code dump must stay cheap."""


def js_arguments(text: str) -> dict[str, Any] | None:
    """The arguments of `({...})`, the tail of a JS-style call; None when it is not exactly that."""
    brace = skip_space(text, 1) if text.startswith("(") else -1
    closing = match_closing(text, brace) if brace >= 0 else None
    if closing is None or not _JS_CALL_END.fullmatch(text, closing):
        return None
    return _object(text[brace:closing])


def code_line_sites(body: str, blocked: Sequence[tuple[int, int]] = ()) -> list[Site]:
    """Calls written as code on lines of their own, outside `blocked` (fences and claimed actions)."""
    return [site for site in _code_calls(body, 0, len(body)) if not overlaps(site.lead, site.end, blocked)]


def script_sites(body: str, fence: Fence) -> list[Site]:
    """The calls of a fence that holds nothing but calls written as code; [] when anything else is in it."""
    lo, hi = fence.content_start, fence.content_end
    sites = _code_calls(body, lo, hi)
    covered = lo
    for site in sites:
        if body[covered : site.lead].strip():
            return []
        covered = site.end
    if not sites or body[covered:hi].strip():
        return []
    return [replace(sites[0], lead=fence.start), *sites[1:]]


def _code_calls(body: str, lo: int, hi: int) -> list[Site]:
    """The code calls in `body[lo:hi]`, at most `MAX_CODE_LINES` of each kind looked at."""
    if body.find("(", lo, hi) < 0:
        return []
    found: list[Site] = []
    if "({" in body or "( {" in body:
        for line in islice(_JS_CALL.finditer(body, lo, hi), MAX_CODE_LINES):
            closing = match_closing(body, line.end())
            if closing is None:
                break  # its object runs to the end of the reply: cut off, and every later line lies inside it
            site = _js_site(body, line, closing, hi)
            if site:
                found.append(site)
    if "[" in body:
        lines = islice(_PYTHONIC_LINE.finditer(body, lo, hi), MAX_CODE_LINES)
        found += filter(None, (_pythonic_site(body, line) for line in lines))
    return sorted(found, key=lambda site: site.lead)


def _js_site(body: str, line: re.Match[str], closing: int, hi: int) -> Site | None:
    name = normalize_tool_name(line.group("name"))
    end = _JS_CALL_END.match(body, closing) if closing < hi and name and name not in _NOT_TOOLS else None
    args = _object(body[line.end() : closing]) if end else None
    if end is None or args is None:
        return None
    return _site(body, line.start(), min(end.end(), hi), (make_call(name, args),))


def _pythonic_site(body: str, line: re.Match[str]) -> Site | None:
    calls = calls_from_python(line.group(), keywords_only=True)
    return _site(body, line.start(), line.end(), tuple(calls)) if calls else None


def _site(body: str, start: int, end: int, calls: tuple[ToolCall, ...]) -> Site:
    return Site(start, end, calls, body[start:end].strip(), as_code=True)


def _object(text: str) -> dict[str, Any] | None:
    try:
        value = load_lenient(text)
    except LenientJSONError:
        return None
    return value if isinstance(value, dict) else None
