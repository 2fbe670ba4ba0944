"""The log search interface every backend shares: query, result, redaction, time parsing, message grouping and the text the model reads.

Backends only fetch matching lines and redact them as they arrive (`source_redaction`, with the query's redactor);
everything the model sees is shaped here from redacted records, so files, Loki and Elasticsearch answer alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol

from kernel import DEFAULT_REDACTOR, Redactor
from opsagent_tools.hints import tell_the_user
from opsagent_tools.names import capped, unknown_name

LOGS_DOWN_HINT = tell_the_user("metrics, deploys")
"""The model's hint when the logs cannot be read until a person fixes the backend or its settings."""

LEVELS = ("trace", "debug", "info", "warn", "error", "fatal")
"""Canonical severities, lowest first; a query's level is a minimum."""
LEVEL_ALIASES: Mapping[str, str] = {
    **{level: level for level in LEVELS},
    "trc": "trace",
    "dbg": "debug",
    "information": "info",
    "notice": "info",
    "inf": "info",
    "warning": "warn",
    "wrn": "warn",
    "err": "error",
    "critical": "fatal",
    "crit": "fatal",
    "panic": "fatal",
    "emerg": "fatal",
    "alert": "fatal",
}
"""Level words seen in the wild, lower-case, and the canonical level each means."""
SAMPLE_SIZE = 500
"""Lines a backend returns by default: more than any `limit`, so the grouping has material."""
LINE_CHARS = 300
"""Longest line shown to the model; longer ones end with …."""


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One log entry, whatever its source; `level` is canonical (see LEVELS) or "" when unknown."""

    timestamp: datetime
    """Aware, UTC."""
    service: str
    level: str
    message: str
    fields: Mapping[str, str] = field(default_factory=dict)
    """Everything else the entry carries (pod, trace id, labels), as text."""


@dataclass(frozen=True, slots=True)
class LogQuery:
    """What to search: one service's lines in [since, until], at or above `level`, matching `query`."""

    service: str
    since: datetime
    until: datetime
    level: str | None
    """Minimum canonical level, or None for every level."""
    query: str
    """Backend-specific text filter; "" matches everything."""
    limit: int
    """Newest lines shown to the model."""
    sample: int = SAMPLE_SIZE
    """Newest lines a backend returns (at least `limit`): the material for grouping."""
    redactor: Redactor = DEFAULT_REDACTOR
    """The run's redactor (dispatch's, from the tool's `CallContext`): backends redact each raw record with it
    before grouping, matching or formatting can cut or join a secret."""

    def accepts(self, level: str) -> bool:
        """Whether a record at canonical `level` passes the level filter (unknown levels pass only any/trace)."""
        if self.level is None or self.level == LEVELS[0]:
            return True
        return level in LEVELS and LEVELS.index(level) >= LEVELS.index(self.level)


@dataclass(frozen=True, slots=True)
class MessageGroup:
    """Lines whose messages differ only in variable parts, with their count and first/last times."""

    text: str
    count: int
    first: datetime | None = None
    last: datetime | None = None
    key: str = field(default="", compare=False)
    """The shape its lines share (`shape_of`): how a line is matched to its group to show it as an exemplar."""


@dataclass(slots=True)
class LogSearchResult:
    """A backend's answer: the true count in the window and the newest matching records."""

    total: int
    """All matching lines in the window, not only those returned."""
    records: list[LogRecord]
    """Newest first, up to the query's `sample`."""
    total_is_lower_bound: bool = False
    groups: list[MessageGroup] | None = None
    """Grouped counts over all matches when the backend computed them; None: group `records`."""
    services: list[str] = field(default_factory=list)
    """Services known to have logs in the window; filled when nothing matched, for the hint."""
    notes: list[str] = field(default_factory=list)
    """Caveats for the model (skipped files, partial failures), shown after the lines."""


class LogBackend(Protocol):
    """A log store: files, Loki or Elasticsearch. Failures are raised as `ToolFailure` with advice."""

    async def search(self, q: LogQuery) -> LogSearchResult:
        """The matching lines of `q`, newest first, and how many there are in all."""
        ...


# --- levels ---------------------------------------------------------------------


def canonical_level(text: str | None) -> str:
    """The canonical level a word means ("WARNING" → "warn"), or "" when it is not a level."""
    return LEVEL_ALIASES.get((text or "").strip().lower(), "")


def level_words(minimum: str) -> list[str]:
    """Every alias (lower-case) of the levels at or above `minimum`, for backends that match text."""
    allowed = LEVELS[LEVELS.index(minimum) :]
    return [word for level in allowed for word, meaning in LEVEL_ALIASES.items() if meaning == level]


# --- grouping -------------------------------------------------------------------------------

_VARIABLE = re.compile(
    r"""(?P<quoted>"[^"\n]{0,200}"|(?<![\w'])'[^'\n]{0,200}')
    |(?P<time>\d{4}-\d{2}-\d{2}[T\ ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)
    |(?P<uuid>\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b)
    |(?P<ip>\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b)
    |(?P<dur>(?<![\w.])\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h)(?:\d+(?:\.\d+)?(?:ms|s|m))*(?!\w))
    |(?P<hex>\b(?:0x[0-9a-fA-F]+|(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{6,})\b)
    |(?P<n>(?<![\w.])\d+(?:\.\d+)?(?!\w|\.\d))""",
    re.VERBOSE,
)
_PLACEHOLDER = {"quoted": '"…"', "time": "<time>", "uuid": "<uuid>", "ip": "<ip>", "dur": "<dur>", "hex": "<hex>"}
MAX_GROUPS = 5000
"""Distinct message shapes tracked; lines of further shapes are counted, not grouped."""


class _Group:
    __slots__ = ("count", "first", "last", "literals", "placeholders", "values")

    def __init__(self, literals: list[str], placeholders: list[str], values: list[str], when: datetime) -> None:
        self.literals, self.placeholders = literals, placeholders
        self.values: list[str | None] = list(values)
        """The value of each variable part while all lines agree on it; None once they differ."""
        self.count, self.first, self.last = 0, when, when

    def text(self) -> str:
        """The message with parts that vary shown as placeholders and constant parts as they are."""
        pieces = [self.literals[0]]
        for placeholder, value, literal in zip(self.placeholders, self.values, self.literals[1:], strict=True):
            pieces += [placeholder if value is None else value, literal]
        return "".join(pieces)


class MessageGrouper:
    """Counts messages by shape: numbers, hex ids, UUIDs, IPs, durations, times and quoted strings vary."""

    def __init__(self) -> None:
        self._groups: dict[str, _Group] = {}

    def add(self, message: str, when: datetime) -> None:
        """Count one line's message (its first line) seen at `when`."""
        literals, placeholders, values = _parts(message)
        key = _key(literals, placeholders)
        group = self._groups.get(key)
        if group is None:
            if len(self._groups) >= MAX_GROUPS:  # a new shape past the cap is not counted
                return
            group = self._groups[key] = _Group(literals, placeholders, values, when)
        else:
            group.values = [v if v == new else None for v, new in zip(group.values, values, strict=True)]
            group.first, group.last = min(group.first, when), max(group.last, when)
        group.count += 1

    def groups(self) -> list[MessageGroup]:
        """The groups, largest first (ties: most recent first)."""
        ordered = sorted(self._groups.items(), key=lambda item: (-item[1].count, -item[1].last.timestamp()))
        return [MessageGroup(g.text(), g.count, g.first, g.last, key) for key, g in ordered]


def _parts(message: str) -> tuple[list[str], list[str], list[str]]:
    """A message's first line split into its constant parts and its variable parts (placeholders and values)."""
    first_line = message.strip().split("\n", 1)[0].strip()[:500] or "(empty message)"
    literals, placeholders, values, start = [], [], [], 0
    for match in _VARIABLE.finditer(first_line):
        literals.append(first_line[start : match.start()])
        placeholders.append(_PLACEHOLDER.get(match.lastgroup or "", "<n>"))
        values.append(match.group())
        start = match.end()
    literals.append(first_line[start:])
    return literals, placeholders, values


def _key(literals: list[str], placeholders: list[str]) -> str:
    return "".join(lit + ph for lit, ph in zip(literals, [*placeholders, ""], strict=True))


def shape_of(message: str) -> str:
    """A message's shape: its first line with every variable part a placeholder (a `MessageGroup`'s key)."""
    literals, placeholders, _ = _parts(message)
    return _key(literals, placeholders)


def group_messages(records: Iterable[LogRecord]) -> list[MessageGroup]:
    """Records grouped by message shape, largest group first: "upstream connect error #123" and "#124" are one."""
    grouper = MessageGrouper()
    for record in records:
        grouper.add(record.message, record.timestamp)
    return grouper.groups()


# --- the text the model reads ---------------------------------------------------------------

_SHOWN_FIELDS = (
    "pod", "kubernetes.pod.name", "k8s.pod.name", "pod_name", "host", "host.name", "hostname", "instance",
    "container", "trace_id", "trace.id", "traceId", "request_id", "status", "status_code", "http.response.status_code",
)  # fmt: skip
"""Fields that identify where a line came from, in order of preference; three at most are shown before the message."""
_NOISE_FIELDS = frozenset(
    {"app", "cluster", "container", "detected_level", "filename", "job", "level", "namespace", "node_name",
     "service", "service_name", "severity", "stream", "ts", "time", "timestamp", "@timestamp", "caller", "logger"}
)  # fmt: skip
_NOISE_PREFIXES = ("agent.", "ecs.", "log.", "input.", "host.", "kubernetes.", "k8s.", "container.", "cloud.", "event.",
                   "fields.", "_", "data_stream.", "service.")  # fmt: skip
"""Labels and metadata every line of a store carries: left out of the fields shown after the message."""


EXEMPLARS = 3
"""Lines shown under a group's count at most: its newest, and its first occurrence when that is another line."""


@dataclass(frozen=True, slots=True)
class LogView:
    """What the model reads of a search, and the newest lines its exemplars stand for (`ToolOutput.more`: kept
    behind the step's handle for `read_output`, "" when every one of them is shown)."""

    text: str
    more: str = ""


def format_result(q: LogQuery, result: LogSearchResult, *, window: str, max_groups: int = 8) -> LogView:
    """The model-facing answer: a header with the count, messages grouped by count each with up to `EXEMPLARS`
    lines, the newest lines of no group shown, notes; the newest `q.limit` lines in full as `more`."""
    same_day = q.since.date() == q.until.date()
    level = q.level or "any"
    query = f", query={json.dumps(q.query, ensure_ascii=False)}" if q.query else ""
    span = f"{_clock(q.since, same_day)}..{_clock(q.until, same_day)}"
    bound = "≥" if result.total_is_lower_bound else ""
    lines = [f"{q.service}, level={level}{query}, {window} ({span}): {bound}{result.total:,} lines"]
    notes = [f"note: {_cap(note)}" for note in result.notes]
    if result.total == 0 and not result.records:
        return LogView("\n".join([*lines, *_nothing_found_hint(q, result), *notes]))
    every = result.groups or group_messages(result.records)
    groups = every[:max_groups]
    shapes = [shape_of(record.message) for record in result.records]
    shown = [_exemplars(shapes, group.key) for group in groups]
    exemplars = [[_line(result.records[n], same_day) for n in found] for found in shown]
    lines += _grouped(result, groups, len(every) - len(groups), same_day, exemplars)
    newest = result.records[: q.limit]
    grouped = {group.key for group in groups}
    others = [n for n in range(len(newest)) if shapes[n] not in grouped]
    if others:
        lines.append(f"other lines, newest {len(others)}:")
        lines += [f"  {_cap(_line(newest[n], same_day))}" for n in others]
    seen = {n for found in shown for n in found} | set(others)
    if not newest or all(n in seen for n in range(len(newest))):
        return LogView("\n".join([*lines, *notes]))
    of = f" of {bound}{result.total:,}" if result.total > len(newest) else ""
    listing = [f"newest {len(newest)}{of}:", *(f"  {_cap(_line(record, same_day))}" for record in newest)]
    return LogView("\n".join([*lines, *notes]), "\n".join(listing))


def _exemplars(shapes: list[str], key: str) -> list[int]:
    """The records (by position, newest first) shown under a group: its newest, and its first occurrence."""
    found = [n for n, shape in enumerate(shapes) if shape == key]
    return found[: EXEMPLARS - 1] + found[-1:] if len(found) > EXEMPLARS - 1 else found


def _grouped(
    result: LogSearchResult, groups: list[MessageGroup], kinds: int, same_day: bool, exemplars: list[list[str]]
) -> list[str]:
    """The counts of the `groups` shown (`kinds` others are not), each followed by its exemplar lines; a group's
    first..last times only when some of its lines are not shown (theirs say when)."""
    if not groups:
        return []
    covered = result.total if result.groups else len(result.records)
    if result.groups or covered >= result.total:
        title = "messages by count:"
    else:
        title = f"messages by count, in the newest {covered:,} of {result.total:,} lines:"
    width = len(f"{groups[0].count:,}")
    lines = [title]
    for group, lines_of_group in zip(groups, exemplars, strict=True):
        seen = ""
        if group.first is not None and group.last is not None and group.count > len(lines_of_group):
            first, last = _clock(group.first, same_day), _clock(group.last, same_day)
            seen = f"  ({first})" if group.count == 1 or first == last else f"  ({first}..{last})"
        lines.append(_cap(f"  {group.count:>{width},} × {group.text}") + seen)
        lines += [f"      {_cap(line)}" for line in lines_of_group]
    rest = covered - sum(group.count for group in groups)
    if rest > 0:
        lines.append(f"  … {rest:,} more lines" + (f" of {kinds:,} other kinds" if kinds > 0 else " of other kinds"))
    return lines


def _nothing_found_hint(q: LogQuery, result: LogSearchResult) -> list[str]:
    tries = [f'widen the window (since="{_wider(q.until - q.since)}")']
    if q.level is not None:
        tries.append('drop the level filter (level="any")')
    if q.query:
        tries.append("loosen or drop the query")
    tries.append("check the service name")
    lines = ["No lines matched. Next: " + ", ".join(tries) + "."]
    if result.services:
        names = sorted(result.services, key=str.lower)
        if q.service.lower() not in {name.lower() for name in names}:
            lines.append(unknown_name("service", q.service, names, where="has logs in this window"))
        else:
            lines.append(f"Services with logs in this window: {capped(names)}.")
    return lines


def _wider(window: timedelta) -> str:
    for limit, suggestion in ((timedelta(hours=1), "1h"), (timedelta(hours=6), "6h"), (timedelta(days=1), "1d")):
        if window < limit:
            return suggestion
    return "7d"


def _line(record: LogRecord, same_day: bool) -> str:
    """Time, level, up to 3 identifying fields, the message, then up to 4 other fields the entry carries."""
    named: list[str] = []
    for name in _SHOWN_FIELDS:
        value = record.fields.get(name)
        if value and len(named) < 3:
            parts = name.split(".")  # kubernetes.pod.name → pod, trace.id → trace_id
            label = parts[-2] if parts[-1] == "name" and len(parts) > 1 else "_".join(parts[-2:])
            named.append(f"{label}={value[:60]}")
    others = [
        f"{name}={value[:60]}"
        for name, value in record.fields.items()
        if name not in _SHOWN_FIELDS and name not in _NOISE_FIELDS and not name.startswith(_NOISE_PREFIXES) and value
    ][:4]
    message = " ⏎ ".join(part.strip() for part in record.message.strip().splitlines()) or "(empty message)"
    return " ".join([_clock(record.timestamp, same_day), (record.level or "-").upper(), *named, message, *others])


def _clock(when: datetime, same_day: bool) -> str:
    return when.astimezone(UTC).strftime("%H:%M:%SZ" if same_day else "%Y-%m-%dT%H:%M:%SZ")


def _cap(text: str, limit: int = LINE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
