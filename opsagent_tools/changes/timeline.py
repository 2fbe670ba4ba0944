"""The change timeline's types, how its sources are read side by side, and how the merged timeline reads.

Entries are newest first in the metrics tools' relative time ("t-12m"); a source that fails is one line, never an error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Protocol, assert_never

from kernel import SourceLink, ToolFailure, ToolOutput
from opsagent_tools.links import safe_link
from opsagent_tools.time_words import format_span, parse_duration, relative_time

MAX_LINE_CHARS = 300
"""An entry's text (a commit subject, an alert's labels) is cut to this; untrusted text never spans lines."""
WIDER_WINDOWS = ("6h", "24h", "3d", "7d")
HEADLINE_CHARS = 120
MAX_LINKS = 3
"""Links of the newest changes that have one, given with the timeline."""


class SourceKind(StrEnum):
    """Where a change was seen; the order here breaks ties between changes at the same instant."""

    ALERT = "alert"
    PROMETHEUS = "prometheus"
    KUBERNETES = "kubernetes"
    GITHUB = "github"
    GIT = "git"


KIND_ORDER = {kind: rank for rank, kind in enumerate(SourceKind)}
LINK_LABELS = {
    SourceKind.ALERT: "alert",
    SourceKind.PROMETHEUS: "versions",
    SourceKind.KUBERNETES: "rollout",
    SourceKind.GITHUB: "github",
    SourceKind.GIT: "git",
}
"""What a change's link shows, in a word."""


@dataclass(frozen=True)
class ChangeQuery:
    """What the model asked: one service (or every one) and the window [since, until], until being now."""

    service: str | None
    since: datetime
    until: datetime


@dataclass(frozen=True)
class Change:
    """One thing that changed, when, and where a person can see it."""

    at: datetime
    kind: SourceKind
    text: str
    link: str | None = None


@dataclass(frozen=True)
class SourceResult:
    """What a source read: its changes, what it covered, and the parts it could not read (one line each)."""

    name: str
    covered: str
    changes: list[Change]
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SourceFailure:
    """A source that could not be read at all, and why, worded with what to do."""

    name: str
    reason: str


SourceOutcome = SourceResult | SourceFailure


class ChangeSource(Protocol):
    """One configured place changes are read from: a cluster, a repository, a Prometheus."""

    name: str
    """How the timeline names it: "kubernetes", "git order-service", "github acme/orders", "prometheus versions"."""
    what: str
    """What it reads, for the tool's description: "Kubernetes rollouts", "tags and merges of order-service"."""
    kind: SourceKind
    """The kind of change it reads (its family's sources are read and described in the order of their kinds)."""

    def about(self, service: str | None) -> bool:
        """Whether it can hold changes of `service` (None: every service)."""
        ...

    async def read(self, query: ChangeQuery) -> SourceResult:
        """The changes in the query's window, or a ToolFailure saying what to fix."""
        ...

    async def check(self, end: datetime) -> str:
        """How `opsagent check` names it at `end`: its name, and what it found when a setting may be a guess."""
        ...


def one_line(text: str, limit: int = MAX_LINE_CHARS) -> str:
    """`text` with its whitespace (newlines included) collapsed, cut to `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


async def read_sources(sources: Sequence[ChangeSource], query: ChangeQuery, budget_s: float) -> list[SourceOutcome]:
    """Every source at once, each within `budget_s`; a failing or slow source becomes a `SourceFailure`."""
    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(_read_one(source, query, budget_s)) for source in sources]
    return [task.result() for task in tasks]


async def _read_one(source: ChangeSource, query: ChangeQuery, budget_s: float) -> SourceOutcome:
    try:
        async with asyncio.timeout(budget_s):
            return await source.read(query)
    except TimeoutError:
        return SourceFailure(
            source.name, f"no answer within {budget_s:g} s; the other sources are shown, ask again to retry this one"
        )
    except ToolFailure as exc:
        return SourceFailure(source.name, one_line(str(exc)))
    except Exception as exc:  # a garbled answer or a bug in one source must not hide what the others found
        detail = f"{type(exc).__name__}: {one_line(str(exc), 200)}"
        return SourceFailure(source.name, f"failed unexpectedly ({detail}); the other sources are shown")


def timeline_output(
    query: ChangeQuery, outcomes: Sequence[SourceOutcome], skipped: Sequence[str], *, max_entries: int
) -> ToolOutput:
    """The timeline (`render_timeline`) with, for people, the count and the latest change in one line, and the links
    of the newest changes that have one."""
    read, failed = _split(outcomes)
    changes = _newest_first(read)
    window = format_span(query.until.timestamp() - query.since.timestamp())
    not_read = f" · {len(failed)} of {len(outcomes)} sources not read" if failed else ""
    if changes:
        latest = changes[0]
        head = f"{len(changes)} change{'' if len(changes) == 1 else 's'} · latest "
        head += (
            f"{relative_time(latest.at.timestamp(), query.until.timestamp())} {latest.kind}: {one_line(latest.text)}"
        )
        headline = one_line(head, HEADLINE_CHARS - len(not_read)) + not_read
    else:
        headline = f"no changes in {window}{not_read}"
    links: dict[str, SourceLink] = {}
    for change in changes:
        if len(links) < MAX_LINKS and (link := safe_link(LINK_LABELS[change.kind], change.link)) is not None:
            links.setdefault(link.url, link)
    text = render_timeline(query, outcomes, skipped, max_entries=max_entries)
    return ToolOutput(text, headline=headline, links=tuple(links.values()))


def render_timeline(
    query: ChangeQuery, outcomes: Sequence[SourceOutcome], skipped: Sequence[str], *, max_entries: int
) -> str:
    """The timeline the model reads: a head line, unreadable sources, the changes newest first, what was checked."""
    now = query.until.timestamp()
    window = format_span(query.until.timestamp() - query.since.timestamp())
    read, failed = _split(outcomes)
    changes = _newest_first(read)
    subject = f"for {query.service}" if query.service else "across all services"
    lines = [
        f"changes {subject} in the last {window}, newest first (t-12m is 12 minutes ago): "
        f"{len(changes)} from {len(read)} of {len(outcomes)} sources"
    ]
    lines += [f"{failure.name}: not read: {failure.reason}" for failure in failed]
    lines += [f"{result.name}: {problem}" for result in read for problem in result.problems]
    for change in changes[:max_entries]:
        link = f" · {one_line(change.link, MAX_LINE_CHARS)}" if change.link else ""
        lines.append(f"{relative_time(change.at.timestamp(), now)} {change.kind}: {one_line(change.text)}{link}")
    if len(changes) > max_entries:
        lines.append(
            f"… {len(changes) - max_entries} older changes not shown: name a service or narrow the window to see them"
        )
    if not changes:
        lines.append(_nothing_found(query, window, bool(failed or not read)))
    if read:
        lines.append("checked: " + "; ".join(f"{result.name} ({result.covered})" for result in read))
    if skipped:
        lines.append(f"not about {query.service}: {', '.join(skipped)}")
    return "\n".join(lines)


def _newest_first(read: Sequence[SourceResult]) -> list[Change]:
    return sorted(
        (change for result in read for change in result.changes),
        key=lambda c: (-c.at.timestamp(), KIND_ORDER[c.kind], c.text),
    )


def _split(outcomes: Sequence[SourceOutcome]) -> tuple[list[SourceResult], list[SourceFailure]]:
    read: list[SourceResult] = []
    failed: list[SourceFailure] = []
    for outcome in outcomes:
        match outcome:
            case SourceResult():
                read.append(outcome)
            case SourceFailure():
                failed.append(outcome)
            case _:
                assert_never(outcome)
    return read, failed


def _nothing_found(query: ChangeQuery, window: str, partial: bool) -> str:
    """What an empty timeline means, and where to look next."""
    span = query.until.timestamp() - query.since.timestamp()
    wider = next((w for w in WIDER_WINDOWS if parse_duration(w) > span), None)
    where = "in the sources that could be read (the others are unknown, not empty)" if partial else "in any source"
    earlier = f'If the symptom began earlier, widen the window (window="{wider}"); otherwise the' if wider else "The"
    if query.service:
        return (
            f"No changes for {query.service} in the last {window} {where}. {earlier} cause is probably not a change "
            f"of {query.service}: call recent_changes without a service for its dependencies' changes, and look at load."
        )
    return (
        f"No changes in the last {window} {where}. {earlier} cause is probably not a change: "
        "look at load, dependencies and the infrastructure."
    )
