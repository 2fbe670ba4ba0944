"""The memory family: `similar_incidents` over the incidents a deployment remembers (the bot's run store).

It reaches no backend of its own: the memory is the bot's store, and `opsagent check` reads it there (the bot knows
whether the store exists, is migrated, and how long it keeps incidents).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from kernel import Tool
from opsagent_tools.check_result import CheckResult
from opsagent_tools.family import ToolFamily
from opsagent_tools.memory.records import IncidentMemory
from opsagent_tools.memory.tools import similar_incidents_tool


class MemoryFamily(ToolFamily):
    """The past incidents in `memory`; their ages are counted from `now()`."""

    keywords = ("past incidents", "history", "similar", "before", "again", "recurring")

    def __init__(self, memory: IncidentMemory, *, now: Callable[[], datetime]) -> None:
        self.memory, self.now = memory, now

    def tools(self) -> Sequence[Tool]:
        return [similar_incidents_tool(self.memory, now=self.now)]

    async def check(self) -> list[CheckResult]:
        """Nothing of its own to reach: the bot checks its run store, where the memory lives."""
        return []
