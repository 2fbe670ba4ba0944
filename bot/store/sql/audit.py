"""The audit log in SQL: the `AuditLog` port over one `Database` (the schema's triggers keep it append-only)."""

from __future__ import annotations

import json
from typing import Any

from bot.audit.trail import AuditEvent
from bot.store.sql.database import Database
from kernel import DEFAULT_REDACTOR


def _redacted(value: Any) -> Any:
    """Audit details with every string passed through the default redactor: the audit log is a log."""
    if isinstance(value, str):
        return DEFAULT_REDACTOR.redact(value)
    if isinstance(value, dict):
        return {key: _redacted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    return value


class SqlAudit:
    """`AuditLog` on the `audit_events` table, whose `seq` orders the events."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def audit(self, event: AuditEvent) -> None:
        """Append one event (its details redacted); the database refuses to change or delete it later."""
        detail = json.dumps(_redacted(event.model_dump(mode="json")["detail"]), sort_keys=True)
        await self._db.execute(
            "INSERT INTO audit_events (at, kind, run_id, actor, detail_json) VALUES ($1, $2, $3, $4, $5)",
            event.at,
            event.kind,
            event.run_id,
            event.actor,
            detail,
            idempotent=False,
        )

    async def audit_log(self, *, run_id: str | None = None, limit: int = 1000) -> list[AuditEvent]:
        """The latest `limit` events (of one run, or all), oldest first."""
        where, args = ("WHERE run_id = $2", [run_id]) if run_id is not None else ("", [])
        rows = await self._db.fetch(
            "SELECT * FROM (SELECT seq, at, kind, run_id, actor, detail_json FROM audit_events "
            f"{where} ORDER BY seq DESC LIMIT $1) AS recent ORDER BY seq",
            limit,
            *args,
        )
        return [AuditEvent.model_validate(row | {"detail": json.loads(row["detail_json"])}) for row in rows]
