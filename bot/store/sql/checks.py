"""The checks of approved actions in SQL: the `CheckSchedule` port over one `Database`."""

from __future__ import annotations

from datetime import timedelta

from pydantic import TypeAdapter

from bot.store.records import RunStatus, ScheduledCheck
from bot.store.sql.database import Database, Row
from kernel import Verification

_COLUMNS = "run_id, step, check_no, due_at, action_at, approval_ts, approver, result_json"
_RESULT = TypeAdapter(Verification)
_KEY = "run_id = $1 AND step = $2 AND check_no = $3"
_FREE = "recorded = 0 AND (owner = '' OR lease_until IS NULL OR lease_until <= $3)"
"""A check nobody holds (or whose holder's lease ran out) with work left: `$3` is now."""


class SqlChecks:
    """`CheckSchedule` on the `action_checks` table: one row per check, held through `owner` and `lease_until` as a
    run is, and kept once done (`recorded`)."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def schedule_check(self, check: ScheduledCheck) -> None:
        """Keep the check, unless one of the same run, step and number is kept already."""
        await self._db.execute(
            "INSERT INTO action_checks (run_id, step, check_no, due_at, action_at, approval_ts, approver, owner, "
            "result_json, recorded) VALUES ($1, $2, $3, $4, $5, $6, $7, '', '', 0) ON CONFLICT DO NOTHING",
            check.run_id,
            check.step,
            check.check,
            check.due_at,
            check.action_at,
            check.approval_ts,
            check.approver,
        )

    async def claim_check(self, owner: str, ttl_s: float) -> ScheduledCheck | None:
        """Take the earliest check with work left that nobody holds, in one conditional `UPDATE`: a replica that
        loses the race finds the row held when its update re-reads it, and takes nothing."""
        now = self._db.now()
        sql = (
            "UPDATE action_checks SET owner = $1, lease_until = $2 WHERE (run_id, step, check_no) = ("
            f"SELECT run_id, step, check_no FROM action_checks WHERE {_FREE} AND ((result_json = '' AND due_at <= $3) "
            "OR (result_json <> '' AND run_id IN (SELECT run_id FROM runs WHERE status = $4))) "
            f"ORDER BY due_at, run_id, step, check_no LIMIT 1) AND {_FREE} RETURNING {_COLUMNS}"
        )
        rows = await self._db.fetch(
            sql, owner, now + timedelta(seconds=ttl_s), now, RunStatus.FINISHED, idempotent=False
        )
        return _check(rows[0]) if rows else None

    async def check_ran(self, check: ScheduledCheck, result: Verification, owner: str) -> bool:
        """Keep the result and let go of the check, while `owner` holds it."""
        changed = await self._db.execute(
            f"UPDATE action_checks SET result_json = $5, owner = '', lease_until = NULL WHERE {_KEY} AND owner = $4",
            check.run_id,
            check.step,
            check.check,
            owner,
            _RESULT.dump_json(result).decode(),
        )
        return changed == 1

    async def check_done(self, check: ScheduledCheck) -> None:
        """Mark the check done for good."""
        await self._db.execute(
            f"UPDATE action_checks SET recorded = 1, owner = '', lease_until = NULL WHERE {_KEY}",
            check.run_id,
            check.step,
            check.check,
        )


def _check(row: Row) -> ScheduledCheck:
    fields = {**row, "check": row["check_no"], "result": row["result_json"] or None}
    return ScheduledCheck.model_validate(fields)
