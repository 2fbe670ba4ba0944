"""The run store's contract: its errors, and `RunStore`, the composition of its ports.

A consumer asks for the port it uses (`bot.store.ports`, `bot.approvals.store`, `bot.audit.trail`); only the
wiring (the Slack app, `serve`, the command line) holds a whole `RunStore`, to hand its ports out. One SQL adapter
(`bot.store.sql`) implements every port, on SQLite or PostgreSQL; `bot.store.factory.open_store` picks one.
"""

from __future__ import annotations

from typing import Protocol

from bot.approvals.store import ApprovalStore
from bot.audit.trail import AuditLog
from bot.store.ports import (
    AlertThreads,
    CheckSchedule,
    Dedupe,
    FeedbackStore,
    GuidanceLog,
    IncidentStore,
    Leases,
    RunRecords,
    SideEffectStore,
    Topics,
)


class StoreUnavailableError(RuntimeError):
    """The database cannot be reached (down, restarting, timing out); the call may be retried later.

    For a write, the message says whether its outcome is unknown (the connection dropped mid-call).
    """


class SchemaVersionError(RuntimeError):
    """The database's schema is not the one this code knows: not migrated yet, or from a newer version."""


class StoreConflictError(ValueError):
    """The stored state does not allow the call (an id that exists, a side effect already finished...)."""


class StoreAtCapacityError(StoreConflictError):
    """Every slot of the concurrency cap is held by an unfinished run, whichever replica carries it: not stored."""


class LeaseLostError(StoreConflictError):
    """A fenced write by a replica that no longer holds the run's lease: another replica owns the run now."""


class RunStore(Protocol):
    """Everything the bot keeps across restarts and shares across replicas, as one port per concept; call
    `migrate()` once at start and `close()` at the end. Each port's docstrings state its contract."""

    runs: RunRecords
    """Runs: where each was asked, its checkpoint, who stopped it (read-only consumers ask for `RunLookup`)."""
    leases: Leases
    """Which replica carries each unfinished run."""
    dedupe: Dedupe
    """Keys seen recently (Slack's retries)."""
    topics: Topics
    """Publish and subscribe between replicas."""
    approvals: ApprovalStore
    """Approvals of side effects."""
    audit: AuditLog
    """The append-only audit log (the audit trail writes through it as its `AuditSink`)."""
    alert_threads: AlertThreads
    """Alertmanager groups' threads."""
    feedback: FeedbackStore
    """People's ratings of runs."""
    guidance: GuidanceLog
    """What people told running investigations."""
    memory: IncidentStore
    """The memory of past incidents."""
    side_effects: SideEffectStore
    """The side-effect journal."""
    checks: CheckSchedule
    """The checks of approved actions."""

    async def migrate(self) -> None:
        """Apply the migrations this database lacks, each in its own transaction, serialised across replicas
        starting together; a no-op when current. `SchemaVersionError` for a database newer than this code."""
        ...

    async def close(self) -> None:
        """Close the subscriptions, then the connections; every port fails after it. Idempotent."""
        ...
