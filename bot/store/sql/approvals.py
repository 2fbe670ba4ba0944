"""Approvals in SQL: the `ApprovalStore` port (owned by `bot.approvals`) over one `Database`."""

from __future__ import annotations

from datetime import datetime

from bot.approvals.store import ApprovalState, PendingApproval
from bot.store.protocol import StoreConflictError
from bot.store.sql.database import Database, as_utc


class SqlApprovals:
    """`ApprovalStore` on the `approvals` table: the record as JSON, its state and expiry as columns. Every statement
    is urgent: an approver's click, or a run about to act on its decision, waits on it."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def add(self, approval: PendingApproval) -> None:
        """Keep a new approval; ids are unique."""
        sql = (
            "INSERT INTO approvals (approval_id, run_id, state, expires_at, record_json) "
            "VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING"
        )
        inserted = await self._db.execute(sql, *_values(approval), urgent=True) == 1
        if not inserted and await self.get(approval.approval_id) != approval:
            raise StoreConflictError(f"approval {approval.approval_id} already exists")

    async def get(self, approval_id: str) -> PendingApproval | None:
        """The approval with this id, or None."""
        rows = await self._db.fetch(
            "SELECT record_json FROM approvals WHERE approval_id = $1", approval_id, urgent=True
        )
        return PendingApproval.model_validate_json(rows[0]["record_json"]) if rows else None

    async def compare_and_set(self, approval_id: str, expected_state: ApprovalState, new: PendingApproval) -> bool:
        """Replace the approval with `new` only if it is still in `expected_state`: one `UPDATE … WHERE state`."""
        if new.approval_id != approval_id:
            return False
        _, run_id, state, expires_at, record_json = _values(new)
        sql = (
            "UPDATE approvals SET run_id = $3, state = $4, expires_at = $5, record_json = $6 "
            "WHERE approval_id = $1 AND state = $2"
        )
        changed = await self._db.execute(
            sql, approval_id, expected_state, run_id, state, expires_at, record_json, idempotent=False, urgent=True
        )
        return changed == 1

    async def pending_for_run(self, run_id: str) -> list[PendingApproval]:
        """The run's approvals still waiting for a decision."""
        rows = await self._db.fetch(
            "SELECT record_json FROM approvals WHERE run_id = $1 AND state = $2 ORDER BY expires_at, approval_id",
            run_id,
            ApprovalState.PENDING,
            urgent=True,
        )
        return [PendingApproval.model_validate_json(row["record_json"]) for row in rows]


def _values(approval: PendingApproval) -> tuple[str, str, ApprovalState, datetime, str]:
    return (
        approval.approval_id,
        approval.run_id,
        approval.state,
        as_utc(approval.expires_at),
        approval.model_dump_json(),
    )
