"""A log search's outcome in one line for people: how many lines, the commonest message, and when they were written.

"217 lines · 180 × upstream timeout after <dur> · 20:14–20:25 UTC" is what a responder scans; the model reads the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from opsagent_tools.logs.search import LogQuery, LogSearchResult, MessageGroup, group_messages
from opsagent_tools.time_words import clock_span

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


def _written(groups: Sequence[MessageGroup], result: LogSearchResult) -> tuple[datetime, datetime] | None:
    """When the matching lines were written: from the groups' first and last times, else the records'."""
    times = [t for g in groups for t in (g.first, g.last) if t is not None] or [r.timestamp for r in result.records]
    return (min(times), max(times)) if times else None
