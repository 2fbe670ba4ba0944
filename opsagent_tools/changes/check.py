"""`opsagent check` for the change timeline: each source `recent_changes` will read is read once, over the last
hour, and named as it names itself.

A source whose setting is a guess (the version metric's name) looks it up and says what it found. A source that
cannot be read is a warning under the line; when none can be, the family fails: the timeline would be empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from kernel import ToolFailure
from opsagent_tools.changes.settings import NO_SOURCES
from opsagent_tools.changes.timeline import ChangeQuery, ChangeSource, SourceFailure, read_sources
from opsagent_tools.check_result import CheckResult

CHECK_WINDOW = timedelta(hours=1)
NAME = "changes"


async def check_changes(sources: Sequence[ChangeSource], end: datetime, *, budget_s: float) -> CheckResult:
    """What `recent_changes` reads, as one line: the sources that answered, each unreadable one as a warning; a
    failure when nothing is configured to read or no source answered."""
    if not sources:
        return CheckResult(NAME, False, NO_SOURCES)
    outcomes = await read_sources(sources, ChangeQuery(None, end - CHECK_WINDOW, end), budget_s)
    names: list[str] = []
    unread: list[str] = []
    for source, outcome in zip(sources, outcomes, strict=True):
        if isinstance(outcome, SourceFailure):
            unread.append(f"{outcome.name}: not read: {outcome.reason}")
            continue
        try:
            names.append(await source.check(end))
        except ToolFailure as exc:
            unread.append(f"{source.name}: not read: {exc}")
    if not names:
        return CheckResult(NAME, False, "no source could be read, so the timeline would be empty: " + "; ".join(unread))
    return CheckResult(NAME, True, "sources: " + "; ".join(names), warnings=tuple(unread))
