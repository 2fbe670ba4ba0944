"""A log search's outcome in one line for people: how many lines, the commonest message, and when they were written.

"217 lines · 180 × upstream timeout after <dur> · 20:14–20:25 UTC" is what a responder scans; the model reads the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from opsagent_tools.logs.search import LogQuery, LogSearchResult, MessageGroup, group_messages

MESSAGE_CHARS = 60
"""The commonest message, cut to this in a headline."""


def log_headline(q: LogQuery, result: LogSearchResult) -> str:
    """The count (≥ when it is a lower bound), the largest message group with its count, and the span of the lines
    (of the searched window when nothing matched)."""
    if result.total == 0 and not result.records:
        return f"no matching lines · {clock_span(q.since, q.until)}"
    bound = "≥" if result.total_is_lower_bound else ""
    parts = [f"{bound}{result.total:,} line{'' if result.total == 1 else 's'}"]
    groups = result.groups or group_messages(result.records)
    if groups:
        top = groups[0]
        text = top.text if len(top.text) <= MESSAGE_CHARS else top.text[: MESSAGE_CHARS - 1] + "…"
        parts.append(f"{top.count:,} × {' '.join(text.split())}")
    span = _written(groups, result)
    if span is not None:
        parts.append(clock_span(*span))
    return " · ".join(parts)


def clock_span(first: datetime, last: datetime) -> str:
    """ "20:14–20:25 UTC", "at 20:14 UTC", or with dates when the span crosses midnight."""
    first, last = first.astimezone(UTC), last.astimezone(UTC)
    shape = "%H:%M" if first.date() == last.date() else "%m-%d %H:%M"
    start, end = first.strftime(shape), last.strftime(shape)
    return f"at {start} UTC" if start == end else f"{start}–{end} UTC"


def _written(groups: Sequence[MessageGroup], result: LogSearchResult) -> tuple[datetime, datetime] | None:
    """When the matching lines were written: from the groups' first and last times, else the records'."""
    times = [t for g in groups for t in (g.first, g.last) if t is not None] or [r.timestamp for r in result.records]
    return (min(times), max(times)) if times else None
