"""`opsagent check` for the change timeline: the sources `recent_changes` will read, each as it names itself.

A source whose setting is a guess (the version metric's name) looks it up and says what it found.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from opsagent_tools.changes.settings import NO_SOURCES
from opsagent_tools.changes.timeline import ChangeSource


async def check_changes(sources: Sequence[ChangeSource], end: datetime) -> str:
    """What `recent_changes` reads, as one line; a ValueError when nothing is left to read."""
    if not sources:
        raise ValueError(NO_SOURCES)
    return "sources: " + "; ".join([await source.check(end) for source in sources])
