"""Which Slack thread investigates which alert group: the memory that makes Alertmanager's re-sends harmless.

The run store implements `AlertThreads`, so every replica, and the bot after a restart, knows the groups.
"""

from __future__ import annotations

from typing import Protocol

from bot.store.records import AlertThread


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
