"""Alert groups' threads in SQL: the `AlertThreads` port over one `Database`."""

from __future__ import annotations

import json

from bot.store.records import AlertThread
from bot.store.sql.database import Database


class SqlAlertThreads:
    """`AlertThreads` on the `alert_groups` table, one row per open group."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def alert_thread(self, group_key: str) -> AlertThread | None:
        """The thread an Alertmanager group opened, while the group is open."""
        rows = await self._db.fetch(
            "SELECT channel, thread_ts, fingerprints_json, run_id FROM alert_groups WHERE group_key = $1", group_key
        )
        if not rows:
            return None
        row = rows[0]
        fingerprints = frozenset(json.loads(row["fingerprints_json"]))
        return AlertThread(row["channel"], row["thread_ts"], fingerprints, row["run_id"] or None)

    async def save_alert_thread(self, group_key: str, thread: AlertThread) -> None:
        """Record (or replace) the group's thread."""
        await self._db.execute(
            "INSERT INTO alert_groups (group_key, channel, thread_ts, fingerprints_json, run_id, updated_at) "
            "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (group_key) DO UPDATE SET channel = excluded.channel, "
            "thread_ts = excluded.thread_ts, fingerprints_json = excluded.fingerprints_json, "
            "run_id = excluded.run_id, updated_at = excluded.updated_at",
            group_key,
            thread.channel,
            thread.thread_ts,
            json.dumps(sorted(thread.fingerprints)),
            thread.run_id or "",
            self._db.now(),
        )

    async def forget_alert_thread(self, group_key: str) -> None:
        """The group resolved: its next firing opens a new thread."""
        await self._db.execute("DELETE FROM alert_groups WHERE group_key = $1", group_key)
