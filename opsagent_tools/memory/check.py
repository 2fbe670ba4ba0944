"""The memory's line in `opsagent check`: how many incidents it holds and how recent the newest is.

The memory has no backend of its own (it is the bot's run store), so whoever holds the store hands its reading
here: the wording of the line is the family's, the store's own problems (not created, not migrated) the bot's.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from opsagent_tools.check_result import CheckResult
from opsagent_tools.memory.records import PastIncident
from opsagent_tools.time_words import time_ago


class RememberedIncidents(Protocol):
    """What the check reads of the memory."""

    async def count_incidents(self) -> int:
        """How many incidents are remembered."""
        ...

    async def incidents(self, *, limit: int = 100) -> list[PastIncident]:
        """The remembered incidents, newest first."""
        ...


async def check_memory(memory: RememberedIncidents, *, now: datetime, kept: str) -> CheckResult:
    """The memory's line: "N incidents remembered (`kept`); the newest finished 3 days ago"."""
    count = await memory.count_incidents()
    newest = await memory.incidents(limit=1)
    ago = f"; the newest finished {time_ago(newest[0].finished_at, now)}" if newest else ""
    return CheckResult("memory", True, f"{count} incidents remembered ({kept}){ago}")
