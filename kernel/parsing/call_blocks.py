"""Where calls sit in a reply: JSON blocks, fenced or bare, and the tool-call markup of chat templates.

Each found call is a `Site` (its position and calls); what went wrong on the way is noted in a `Diagnosis`.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import islice
from typing import Any

from kernel.calls import ToolCall
from kernel.parsing.call_markers import NAMED_MARKERS, PAYLOAD_MARKER, PAYLOAD_NEEDLES, PAYLOAD_STOP, XML_PARAM
from kernel.parsing.call_shapes import (
    calls_from_python,
    calls_from_value,
    carried_thought,
    decode_args,
    make_call,
    normalize_tool_name,
    strip_fence,
)
from kernel.parsing.lenient_json import (
    LenientJSONError,
    Span,
    SpanScan,
    load_lenient,
    match_closing,
    scan_spans,
    skip_space,
)

TRUNCATED_PROBLEM = "the JSON block is cut off (unbalanced braces)"
INVALID_PROBLEM = "the JSON block is not valid JSON: {detail}"
THINK_ONLY_PROBLEM = "the action is inside the <think> reasoning, which is never executed"
MARKUP_PROBLEM = "a tool-call tag was found but no call could be read from it"
NO_TOOL_PROBLEM = 'a JSON block was found but it names no tool (expected an "action" key)'
BAD_ACTION_PROBLEM = 'an "Action:" line was found but it names no tool'
EMPTY_ANSWER_PROBLEM = 'a "Final Answer:" label was found but no answer follows it'

_FENCE_OPEN = re.compile(r"```[ \t]*(?P<lang>[\w+.\-]*)[ \t]*\n?")
_CALL_FENCE_LANGS = frozenset({"tool_code", "tool_call", "tool_calls", "function_call", "toolcall", "tool"})
_JSONISH_START = re.compile(r"\{\s*(?:[\"']|$)|\[\s*\{")
_SHORTEST_CALL = len("{tool:x}")
_CALL_KEY_HINT = re.compile(
    r"(?:action|tool|name|function|command|call|answer)[\w -]{0,16}\\*[\"'“”‘’＂]?\s*[:：]", re.I
)
"""Every call shape has one of these keys; spans without one are data and are not worth loading."""
_PYTHONIC_LIST = re.compile(r"\[\s*[^\W\d][\w.]*\s*\(.*\)\s*\]", re.S)


@dataclass(frozen=True)
class Site:
    """One action found in the text: `lead` is where it begins (the thought ends there), `raw` identifies echoes."""

    lead: int
    end: int
    calls: tuple[ToolCall, ...]
    raw: str
    thought: str = ""
    """A thought the model wrote inside the call object itself."""
    as_code: bool = False
    """Written as a line of code (`name({...})`), which after a `Final Answer:` label is part of the answer."""


@dataclass
class Diagnosis:
    """What went wrong while reading a reply, for the model-facing problem when no call was read."""

    truncated: bool = False
    invalid: str = ""
    think_only: bool = False
    markup: bool = False
    no_tool: bool = False
    bad_action: bool = False
    empty_answer: bool = False
    loads_left: int = 400
    """A budget of candidate loads, so a reply full of braces stays cheap."""

    def problem(self) -> str:
        """The most useful of the noted problems, or "" when nothing resembling an action was seen."""
        if self.truncated:
            return TRUNCATED_PROBLEM
        if self.invalid:
            return INVALID_PROBLEM.format(detail=self.invalid)
        for flag, problem in (
            (self.think_only, THINK_ONLY_PROBLEM),
            (self.markup, MARKUP_PROBLEM),
            (self.no_tool, NO_TOOL_PROBLEM),
            (self.bad_action, BAD_ACTION_PROBLEM),
            (self.empty_answer, EMPTY_ANSWER_PROBLEM),
        ):
            if flag:
                return problem
        return ""


@dataclass(frozen=True)
class Fence:
    """A Markdown code fence: `body[start:end]` whole, `body[content_start:content_end]` inside."""

    start: int
    content_start: int
    content_end: int
    end: int
    lang: str


def overlaps(start: int, end: int, ranges: Sequence[tuple[int, int]]) -> bool:
    """Whether `[start, end)` overlaps any of `ranges`."""
    return any(start < hi and lo < end for lo, hi in ranges)


def block_start(body: str, pos: int) -> tuple[int, bool]:
    """Where a block's content begins at or after `pos`, skipping space and a fence opener; and if it was fenced."""
    start = skip_space(body, pos)
    if not body.startswith("```", start):
        return start, False
    opener = _FENCE_OPEN.match(body, start)
    assert opener is not None  # the pattern matches at any ```
    return skip_space(body, opener.end()), True


def json_sites(
    text: str,
    offset: int,
    diagnosis: Diagnosis,
    *,
    explicit: bool = False,
    every_span: bool = False,
    blocked: Sequence[tuple[int, int]] = (),
    scan: SpanScan | None = None,
    closed: bool = False,
) -> list[Site]:
    """Calls in the outermost balanced JSON spans of `text` (positions shifted by `offset`), outside `blocked`.

    `explicit`: the text is tool-call markup, so an object naming a tool is a call even without arguments.
    Spans without a call-like key are data and are skipped unread, unless `every_span` (a fence: its problem
    is worth reporting) or `explicit`. `scan`: the text's scan, when the caller has it already. `closed`: a fence
    or tag closed after the text, so a block left open in it was finished without its last brackets, not cut off.
    """
    if blocked:
        text, scan = _blank_out(text, [(lo - offset, hi - offset) for lo, hi in blocked]), None
    scan = scan or scan_spans(text)

    def read(span: Span, depth: int) -> list[Site]:
        """One span's calls if it loads as a call; if it does not load at all, its children's."""
        start, end = span
        raw = text[start:end]
        if diagnosis.loads_left <= 0 or not (explicit or every_span or _CALL_KEY_HINT.search(raw)):
            return []
        diagnosis.loads_left -= 1
        try:
            value = load_lenient(raw)
        except LenientJSONError as error:
            if _JSONISH_START.match(raw) and not diagnosis.invalid:
                diagnosis.invalid = str(error)
            children = scan.outermost(start + 1, end - 1) if depth < 2 else []
            return [site for child in children for site in read(child, depth + 1)]
        return sites_of(value, start, end)

    def sites_of(value: Any, start: int, end: int) -> list[Site]:
        calls = calls_from_value(value, explicit)
        if not calls:
            diagnosis.no_tool = diagnosis.no_tool or isinstance(value, dict | list)
            return []
        quoted = start > 0 and text[start - 1] == '"' and text.startswith("\\", start + 1)  # `"{\"name\": ...}"`
        lead = offset + start - quoted
        return [Site(lead, offset + end, tuple(calls), text[start:end].strip(), carried_thought(value))]

    cut = next((pos for pos in scan.unclosed if _JSONISH_START.match(text, pos)), None)  # a block cut off here
    spans = scan.outermost(0, cut)  # nothing inside a cut-off block is a call of its own
    sites = [site for span in spans if span[1] - span[0] >= _SHORTEST_CALL for site in read(span, 0)]
    unfinished = cut if cut is not None else next(iter(scan.unclosed), None)
    if closed and unfinished is not None and not sites:
        with contextlib.suppress(LenientJSONError):
            sites = sites_of(load_lenient(text[unfinished:], close_open=True), unfinished, len(text))
    if not sites and cut is not None:
        diagnosis.truncated = True
    return sites


def _blank_out(text: str, regions: list[tuple[int, int]]) -> str:
    """The text with the regions replaced by spaces, so positions stay the same."""
    pieces: list[str] = []
    pos = 0
    for lo, hi in sorted(regions):
        lo, hi = max(lo, pos), min(max(hi, pos), len(text))
        pieces += [text[pos:lo], " " * (hi - lo)]
        pos = hi
    return "".join([*pieces, text[pos:]])


def find_fences(body: str, scan: SpanScan) -> list[Fence]:
    """Markdown code fences. ``` inside a JSON string neither opens a fence (it lies inside a bare JSON span of
    `scan`) nor closes one (a fence holding JSON closes after the JSON). A second block that never closes runs
    to the end of the reply: it was cut off, and scanning on from each such block would cost quadratic time."""
    tops = scan.outermost()
    fences: list[Fence] = []
    pos = 0
    unclosed_seen = False
    while len(fences) < 64:
        start = body.find("```", pos)
        if start < 0:
            break
        enclosing = bisect.bisect_right(tops, (start, len(body))) - 1
        if enclosing >= 0 and tops[enclosing][1] > start:
            pos = tops[enclosing][1]
            continue
        opener = _FENCE_OPEN.match(body, start)
        assert opener is not None  # the pattern matches at any ```
        lang = opener.group("lang").lower()
        first = skip_space(body, opener.end())
        search_from = opener.end()
        if first < len(body) and body[first] in "{[":
            closing = match_closing(body, first)
            if closing is None:  # the first block that never closes may only lack its last braces: its fence ends it
                search_from, unclosed_seen = (len(body) if unclosed_seen else opener.end()), True
            else:
                search_from = closing
        close = body.find("```", search_from)
        if close < 0:
            fences.append(Fence(start, opener.end(), len(body), len(body), lang))
            break
        fences.append(Fence(start, opener.end(), close, close + 3, lang))
        pos = close + 3
    return fences


def fence_sites(body: str, fence: Fence, diagnosis: Diagnosis) -> list[Site]:
    """Calls in one fence; the first one's thought ends at the fence. A `tool_code` fence may hold Python calls."""
    content = body[fence.content_start : fence.content_end]
    explicit = fence.lang in _CALL_FENCE_LANGS
    closed = fence.end > fence.content_end
    sites = json_sites(content, fence.content_start, diagnosis, explicit=explicit, every_span=True, closed=closed)
    if not sites and explicit:
        calls = calls_from_python(content)
        if calls:
            sites = [Site(fence.start, fence.end, tuple(calls), content.strip())]
    return [replace(sites[0], lead=fence.start), *sites[1:]] if sites else []


def markup_sites(body: str, diagnosis: Diagnosis) -> list[Site]:
    """Calls in chat-template markup: tags and tokens around a JSON (or Python) payload, markers that name the
    tool themselves, and a reply that is nothing but a Python list of calls. Where sites overlap, the first wins."""
    sites: list[Site] = []
    lowered = body.lower()
    openers = PAYLOAD_MARKER.finditer(body) if any(needle in lowered for needle in PAYLOAD_NEEDLES) else ()
    for opener in islice(openers, 32):
        diagnosis.markup = True
        content_end, end = _payload_bounds(body, opener)
        content = body[opener.end() : content_end]
        closed = content_end < len(body)
        calls = [
            call for site in json_sites(content, 0, diagnosis, explicit=True, closed=closed) for call in site.calls
        ]
        calls = calls or calls_from_python(content) or []
        if calls:
            sites.append(Site(opener.start(), end, tuple(calls), body[opener.start() : end].strip()))
    for needles, pattern, closer in NAMED_MARKERS:
        if not any(needle in lowered for needle in needles):
            continue
        for marker in islice(pattern.finditer(body), 32):
            diagnosis.markup = True
            name = normalize_tool_name(marker.group("name") or marker.groupdict().get("alt") or "")
            close = closer.search(body, marker.end())
            args, end = _args_in_region(body, marker.end(), close.start() if close else None, diagnosis)
            if name and args is not None:
                sites.append(Site(marker.start(), end, (make_call(name, args),), body[marker.start() : end].strip()))
    stripped = body.strip()
    if _PYTHONIC_LIST.fullmatch(stripped):
        calls = calls_from_python(stripped, keywords_only=True)
        if calls:
            sites.append(Site(body.find("["), len(body), tuple(calls), stripped))
    kept: list[Site] = []
    for site in sorted(sites, key=lambda site: site.lead):
        if not kept or site.lead >= kept[-1].end:
            kept.append(site)
    return kept


def _payload_bounds(body: str, opener: re.Match[str]) -> tuple[int, int]:
    """Where a marker's payload ends, and where its site ends (after the closing tag, if there is one)."""
    tag = opener.group("tag")
    if tag:
        close = re.compile(rf"</{re.escape(tag)}>", re.I).search(body, opener.end())
        if close:
            return close.start(), close.end()
    stop = PAYLOAD_STOP.search(body, opener.end())
    end = stop.start() if stop else len(body)
    return end, end


def _args_in_region(body: str, lo: int, hi: int | None, diagnosis: Diagnosis) -> tuple[dict[str, Any] | None, int]:
    """Arguments after a marker that names the tool: a JSON object (maybe fenced), XML parameters, or text.
    `hi`: where the call's closing marker is, None when the reply ends first. Returns the arguments (None when
    unreadable) and where they end."""
    closed, hi = hi is not None, len(body) if hi is None else hi
    start, _ = block_start(body, lo)
    if start < hi and body[start] in "{[":
        closing = match_closing(body, start, hi)
        readings = [(body[start:closing], closing, False)] if closing is not None else []
        if closed:  # the call was closed after it: a brace may be missing, or braces sit inside `<escape>` strings
            readings.append((strip_fence(body[start:hi]).strip(), hi, True))
        if not readings:
            diagnosis.truncated = True
            return None, hi
        for text, end, close_open in readings:
            try:
                return decode_args(load_lenient(text, close_open=close_open)), end
            except LenientJSONError as error:
                diagnosis.invalid = diagnosis.invalid or str(error)
        return None, readings[0][1]
    params = {
        (found.group("k1") or found.group("k2") or found.group("k3")).strip(): _param_value(found.group("value"))
        for found in islice(XML_PARAM.finditer(body, lo, hi), 200)
    }
    if params:
        return params, hi
    text = strip_fence(body[start:hi]).strip()
    return ({"_raw": text} if text else {}), hi


def _param_value(raw: str) -> Any:
    """An XML parameter's value: JSON when it reads as JSON (numbers, objects), else the text itself."""
    text = raw.strip()
    try:
        return json.loads(text) if text[:1] in '{["-0123456789tfn' else text
    except ValueError:
        return text
