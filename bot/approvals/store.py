"""Where approvals are kept: the record's states and the store protocol, with an in-memory store.

`compare_and_set` is the one atomic transition, so a persistent store (SQLite, PostgreSQL) can slot in.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict


class ApprovalState(StrEnum):
    """Where an approval is in its life; every state but `pending` is final."""

    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"
    EXPIRED = "expired"
    VOIDED = "voided"
    """The run was stopped, or the request could not be posted."""


class PendingApproval(BaseModel):
    """One side-effect call waiting for (or settled by) a human, bound to its exact arguments and message."""

    model_config = ConfigDict(frozen=True)

    approval_id: str
    """Opaque and random: the only thing the button carries."""
    run_id: str
    """The bot's id for the run: the one given to `confirm_hook` and to `void_run`."""
    step: int
    tool: str
    args: dict[str, Any]
    args_hash: str
    thought: str
    summary: str = ""
    """What the tool does, for the approver (`ApprovalRequest.summary`)."""
    channel: str
    thread_ts: str
    message_ts: str = ""
    """The approval message's ts, once posted; a click must come from this message."""
    requested_by: str
    """The Slack user who started the run."""
    created_at: datetime
    expires_at: datetime
    state: ApprovalState = ApprovalState.PENDING
    decided_by: str | None = None
    decided_at: datetime | None = None
    reason: str = ""


class ApprovalStore(Protocol):
    """Where approvals are kept (the run store, or `InMemoryApprovalStore`); `compare_and_set` is the one atomic
    transition (a SQL `UPDATE … WHERE state=?`). The run store raises its `StoreUnavailableError` when it cannot
    be reached."""

    async def add(self, approval: PendingApproval) -> None:
        """Keep a new approval. A `ValueError` (the run store's `StoreConflictError`) when its id is taken by another
        record; re-adding the very same record is a no-op on the run store (a call re-sent after a dropped
        connection)."""
        ...

    async def get(self, approval_id: str) -> PendingApproval | None:
        """The approval with this id as last saved, or None when there is no such approval."""
        ...

    async def compare_and_set(self, approval_id: str, expected_state: ApprovalState, new: PendingApproval) -> bool:
        """Replace the approval with `new` only if it is still in `expected_state`, atomically: of callers racing
        from one state, exactly one gets True. False when it is in another state, is unknown, or `new` has another
        id. Not re-sent after a dropped connection: the run store's `StoreUnavailableError` then says the outcome
        is unknown (read the approval back)."""
        ...

    async def pending_for_run(self, run_id: str) -> list[PendingApproval]:
        """The run's approvals still waiting for a decision (state `pending`)."""
        ...


class InMemoryApprovalStore:
    """Approvals in a dict; lost on restart, so a click from before a restart is an unknown approval.

    Each method runs without awaiting, so on one event loop `compare_and_set` is atomic.
    """

    def __init__(self) -> None:
        self._approvals: dict[str, PendingApproval] = {}

    async def add(self, approval: PendingApproval) -> None:
        """Keep a new approval; ids are unique."""
        if approval.approval_id in self._approvals:
            raise ValueError(f"approval {approval.approval_id} already exists")
        self._approvals[approval.approval_id] = approval

    async def get(self, approval_id: str) -> PendingApproval | None:
        """The approval with this id, or None."""
        return self._approvals.get(approval_id)

    async def compare_and_set(self, approval_id: str, expected_state: ApprovalState, new: PendingApproval) -> bool:
        """Replace the approval with `new` only if it is still in `expected_state`; whether it did."""
        current = self._approvals.get(approval_id)
        if current is None or current.state is not expected_state or new.approval_id != approval_id:
            return False
        self._approvals[approval_id] = new
        return True

    async def pending_for_run(self, run_id: str) -> list[PendingApproval]:
        """The run's approvals still waiting for a decision."""
        return [a for a in self._approvals.values() if a.run_id == run_id and a.state is ApprovalState.PENDING]
