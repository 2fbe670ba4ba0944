"""Which Slack thread investigates which alert group: the memory that makes Alertmanager's re-sends harmless.

The run store implements `AlertThreads`, so every replica, and the bot after a restart, knows the groups.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class AlertThread:
    """The thread of one alert group: where it is, which alerts it has announced, the run it started."""

    channel: str
    thread_ts: str
    fingerprints: frozenset[str]
    run_id: str | None
    """None when the bot could not start a run (at capacity, shutting down): the thread says why."""


class AlertThreads(Protocol):
    """Alert group key → its thread (the run store is the one implementation)."""

    async def alert_thread(self, group_key: str) -> AlertThread | None:
        """The group's thread, if one is open."""
        ...

    async def save_alert_thread(self, group_key: str, thread: AlertThread) -> None:
        """Record (or replace) the group's thread."""
        ...

    async def forget_alert_thread(self, group_key: str) -> None:
        """The group resolved: its next firing opens a new thread."""
        ...
