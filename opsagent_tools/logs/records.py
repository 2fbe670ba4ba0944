"""Reading log entries: JSON and logfmt documents, timestamps in any common form, and level words in raw lines.

Every backend meets the same shapes (Filebeat JSON, logfmt, epoch times, ECS field names), so they read them here alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from opsagent_tools.bounded_json import load_json
from opsagent_tools.logs.search import LogRecord, canonical_level
from opsagent_tools.time_words import parse_iso

_LEVEL_IN_TEXT = re.compile(
    r"\blevel[=:]\s*\"?(?P<kv>[A-Za-z]+)|\b(?P<word>TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|PANIC)\b"
)


def guess_level(text: str) -> str:
    """The level a raw line states (`level=error`, or an upper-case level word near its start), or ""."""
    match = _LEVEL_IN_TEXT.search(text[:200])
    return canonical_level(match.group("kv") or match.group("word")) if match else ""


def parse_timestamp(value: Any) -> datetime | None:
    """An ISO-8601 string (see `parse_iso`) or an epoch number in s, ms, µs or ns (told apart by size), in UTC."""
    if isinstance(value, str):
        return parse_iso(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    seconds = float(value)
    for scale in (1e9, 1e6, 1e3):
        if abs(seconds) > scale * 1e8:
            seconds /= scale
            break
    try:
        return datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def lookup(document: Mapping[str, Any], dotted: str) -> Any:
    """A field by dotted name, flat (`{"log.level": …}`) or nested (`{"log": {"level": …}}`); None if absent."""
    if dotted in document:
        return document[dotted]
    head, _, rest = dotted.partition(".")
    inner = document.get(head) if rest else None
    return lookup(inner, rest) if isinstance(inner, Mapping) else None


def flatten_fields(document: Mapping[str, Any], skip: Iterable[str] = (), prefix: str = "") -> dict[str, str]:
    """Scalar fields as dotted names and text (values capped at 200 chars), leaving out `skip`."""
    skipped = set(skip)
    out: dict[str, str] = {}
    for key, value in document.items():
        name = f"{prefix}{key}"
        if name in skipped or value is None:
            continue
        if isinstance(value, Mapping):
            out.update(flatten_fields(value, skipped, f"{name}."))
        else:
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
            out[name] = text[:200]
    return out


@dataclass(frozen=True)
class FieldNames:
    """Where a JSON document keeps each part of a log entry; the first name present wins."""

    timestamp: tuple[str, ...] = ("@timestamp", "timestamp", "ts", "time")
    level: tuple[str, ...] = ("level", "severity", "log.level", "lvl")
    service: tuple[str, ...] = ("service", "app", "service.name", "application")
    message: tuple[str, ...] = ("msg", "message", "log", "event")


def record_from_document(
    document: Mapping[str, Any],
    *,
    names: FieldNames = FieldNames(),
    service: str = "",
    timestamp: datetime | None = None,
) -> LogRecord | None:
    """A record from a JSON or logfmt document, or None without a readable timestamp; `service` is the fallback."""

    def first(keys: tuple[str, ...]) -> tuple[str | None, Any]:
        for key in keys:
            value = lookup(document, key)
            if value is not None and not isinstance(value, Mapping):
                return key, value
        return None, None

    ts_key, ts_value = first(names.timestamp)
    when = parse_timestamp(ts_value) if ts_key else timestamp
    if when is None:
        return None
    level_key, level = first(names.level)
    service_key, own_service = first(names.service)
    message_key, message = first(names.message)
    used = [k for k in (ts_key, level_key, service_key, message_key) if k]
    return LogRecord(
        timestamp=when,
        service=str(own_service) if own_service not in (None, "") else service,
        level=canonical_level(str(level)) if level is not None else "",
        message="" if message is None else str(message),
        fields=flatten_fields(document, used),
    )


_LOGFMT_PAIR = re.compile(r'([A-Za-z_][\w.\-]*+)=("(?:[^"\\]++|\\.)*+"|[^\s"]*+)')
"""One `key=value` pair, matched where the previous one ended (after blanks): searched for instead, a long word
with no `=` was rescanned from each of its letters."""
_BLANKS = re.compile(r"\s*+")


def structured_fields(line: str) -> dict[str, Any] | None:
    """The fields of a JSON object line, or of a logfmt line with a message (`level=error msg="…"`); else None."""
    text = line.strip()
    if text.startswith("{"):
        try:
            document = load_json(text)
        except ValueError:
            return None
        return document if isinstance(document, dict) else None
    pairs, position = [], 0
    while (start := _BLANKS.match(text, position).end()) < len(text):  # type: ignore[union-attr]
        match = _LOGFMT_PAIR.match(text, start)
        if match is None:
            return None  # free text between pairs: not logfmt, keep the line whole
        pairs.append((match[1], _unquote(match[2])))
        position = match.end()
    if len(pairs) < 2 or not {key for key, _ in pairs} & set(FieldNames.message):
        return None
    return dict(pairs)


def _unquote(value: str) -> str:
    if not value.startswith('"'):
        return value
    try:
        return str(json.loads(value))
    except ValueError:
        return value[1:-1]


def record_from_line(when: datetime, line: str, service: str, label_level: str, labels: Mapping[str, str]) -> LogRecord:
    """A record from one line whose time the store knows (Loki, the kubelet): JSON and logfmt lines give their
    message, level and fields; the store's labels and level fill in the rest."""
    document = structured_fields(line)
    parsed = record_from_document(document, service=service, timestamp=when) if document else None
    if parsed is not None:
        return LogRecord(
            timestamp=when,
            service=service,
            level=parsed.level or label_level,
            message=parsed.message or line,
            fields={**labels, **parsed.fields},
        )
    return LogRecord(when, service, label_level or guess_level(line), line, dict(labels))
