"""Guidance in SQL: the `GuidanceLog` port over one `Database`."""

from __future__ import annotations

from bot.store.records import GuidanceRecord
from bot.store.sql.database import Database
from kernel import DEFAULT_REDACTOR

ATTEMPTS = 5
"""How often a message is numbered again when another replica took its number at the same moment."""


class SqlGuidance:
    """`GuidanceLog` on the `guidance` table, one row per message, numbered per run."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def add_guidance(self, guidance: GuidanceRecord, *, limit: int) -> GuidanceRecord | None:
        """Keep a message numbered after the run's others, unless the run holds `limit` (see `GuidanceLog`): one
        INSERT … SELECT counts and numbers it; a number taken at the same moment elsewhere is tried again."""
        text = DEFAULT_REDACTOR.redact(guidance.text)
        sql = (
            "INSERT INTO guidance (run_id, seq, user_id, name, text, message_ts, at) "
            "SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5, $6 FROM guidance WHERE run_id = $1 "
            "HAVING COUNT(*) < $7 ON CONFLICT DO NOTHING RETURNING seq"
        )
        for _ in range(ATTEMPTS):
            rows = await self._db.fetch(
                sql,
                guidance.run_id,
                guidance.user,
                guidance.name,
                text,
                guidance.message_ts,
                guidance.at,
                limit,
                idempotent=False,
            )
            if rows:
                return guidance.model_copy(update={"seq": int(rows[0]["seq"]), "text": text})
            if len(await self.guidance_for(guidance.run_id)) >= limit:
                return None
        return None

    async def guidance_for(self, run_id: str) -> list[GuidanceRecord]:
        """The run's messages in the order they came."""
        rows = await self._db.fetch(
            "SELECT run_id, seq, user_id, name, text, message_ts, at FROM guidance WHERE run_id = $1 ORDER BY seq",
            run_id,
        )
        return [
            GuidanceRecord(
                run_id=row["run_id"],
                seq=row["seq"],
                user=row["user_id"],
                name=row["name"],
                text=row["text"],
                message_ts=row["message_ts"],
                at=row["at"],
            )
            for row in rows
        ]
