"""Which Slack thread investigates which alert group: the memory that makes Alertmanager's re-sends harmless.

`AlertThreads` is the seam for a durable store (the bot's database); `MemoryAlertThreads` keeps the newest
groups in memory, bounded, which is enough for one replica that does not restart mid-incident.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Protocol

MAX_GROUPS = 10_000
"""Alert groups remembered in memory; the least recently seen are forgotten first."""


@dataclass(frozen=True)
class AlertThread:
    """The thread of one alert group: where it is, which alerts it has announced, the run it started."""

    channel: str
    thread_ts: str
    fingerprints: frozenset[str]
    run_id: str | None
    """None when the bot could not start a run (at capacity, shutting down): the thread says why."""


class AlertThreads(Protocol):
    """Alert group key → its thread. Async so that a database-backed store fits the same calls."""

    async def recall(self, group_key: str) -> AlertThread | None:
        """The group's thread, if one is open."""
        ...

    async def remember(self, group_key: str, thread: AlertThread) -> None:
        """Record (or replace) the group's thread."""
        ...

    async def forget(self, group_key: str) -> None:
        """The group resolved: its next firing opens a new thread."""
        ...


class MemoryAlertThreads:
    """`AlertThreads` in a bounded in-process map (lost on restart: a re-sent group then opens a new thread)."""

    def __init__(self, max_groups: int = MAX_GROUPS) -> None:
        self._max_groups = max_groups
        self._threads: OrderedDict[str, AlertThread] = OrderedDict()

    async def recall(self, group_key: str) -> AlertThread | None:
        """The group's thread, if one is open; marks the group as recently seen."""
        thread = self._threads.get(group_key)
        if thread is not None:
            self._threads.move_to_end(group_key)
        return thread

    async def remember(self, group_key: str, thread: AlertThread) -> None:
        """Record the group's thread, forgetting the least recently seen group beyond the bound."""
        self._threads[group_key] = thread
        self._threads.move_to_end(group_key)
        while len(self._threads) > self._max_groups:
            self._threads.popitem(last=False)

    async def forget(self, group_key: str) -> None:
        """Drop the group, if remembered."""
        self._threads.pop(group_key, None)
