"""The run store's contract: one protocol for everything the bot keeps across restarts and shares across replicas.

Two implementations (`bot.store.sqlite`, `bot.store.postgres`) share their SQL (`bot.store.sql`); `open_store` picks one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Protocol, Self

from bot.approvals.store import ApprovalStore
from bot.audit.trail import AuditEvent
from bot.store.records import AlertThread, FeedbackRecord, RunRecord, RunStatus, SideEffectRecord
from opsagent_tools.actions.journal import SideEffectState
from opsagent_tools.memory import PastIncident


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


class Subscription:
    """The messages published on one topic, as an async iterator; close it (or `async with`) to stop.

    `subscribed` is set while messages are being received; messages sent while it is clear are lost,
    so a listener re-reads the store after (re)subscribing rather than rely on every message.
    """

    def __init__(self, close: Callable[[Subscription], Awaitable[None]]) -> None:
        self.subscribed = asyncio.Event()
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._close = close
        self._closed = False

    def deliver(self, payload: str) -> None:
        """Queue one message for the reader (called by the store)."""
        if not self._closed:
            self._queue.put_nowait(payload)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> str:
        payload = None if self._closed else await self._queue.get()
        if payload is None:
            raise StopAsyncIteration
        return payload

    async def aclose(self) -> None:
        """Stop listening; a reader waiting for a message ends its loop."""
        if self._closed:
            return
        self._closed = True
        self.subscribed.clear()
        self._queue.put_nowait(None)
        await self._close(self)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class RunStore(ApprovalStore, Protocol):
    """Everything the bot keeps across restarts and shares across replicas; call `migrate()` once at start.

    Every timestamp is timezone-aware UTC; each method is one atomic step on the database.
    """

    async def migrate(self) -> None: ...

    async def close(self) -> None: ...

    async def create_run(self, run: RunRecord, *, slots: int | None = None) -> None: ...

    async def get_run(self, run_id: str) -> RunRecord | None: ...

    async def run_in_thread(self, channel: str, thread_ts: str) -> RunRecord | None: ...

    async def checkpoint(self, run_id: str, *, status: RunStatus, trace_json: str, owner: str = "") -> str: ...

    async def request_stop(self, run_id: str, by: str) -> None: ...

    async def remember_summary(self, run_id: str, summary_ts: str) -> None: ...

    async def acquire_lease(self, run_id: str, owner: str, ttl_s: float) -> bool: ...

    async def renew_leases(self, owner: str, ttl_s: float) -> list[str]: ...

    async def release_lease(self, run_id: str, owner: str) -> None: ...

    async def claimable_runs(self) -> list[RunRecord]: ...

    async def remember(self, key: str, ttl_s: float) -> bool: ...

    async def begin_side_effect(self, record: SideEffectRecord) -> SideEffectRecord | None: ...

    async def finish_side_effect(self, key: str, state: SideEffectState, outcome: str) -> None: ...

    async def get_side_effect(self, key: str) -> SideEffectRecord | None: ...

    async def side_effects_for_run(self, run_id: str) -> list[SideEffectRecord]: ...

    async def record_feedback(self, feedback: FeedbackRecord) -> None: ...

    async def feedback_for(self, run_id: str) -> list[FeedbackRecord]: ...

    async def rated_runs(self, *, limit: int = 1000) -> list[FeedbackRecord]: ...

    async def remember_incident(self, incident: PastIncident) -> bool: ...

    async def search_incidents(
        self, query: str, *, since: datetime, service: str | None = None, limit: int = 5
    ) -> list[PastIncident]: ...

    async def incidents(self, *, limit: int = 100) -> list[PastIncident]: ...

    async def count_incidents(self) -> int: ...

    async def forget_incident(self, run_id: str) -> bool: ...

    async def forget_incidents_before(self, moment: datetime) -> int: ...

    async def runs_to_remember(self, *, limit: int = 100) -> list[RunRecord]: ...

    async def audit(self, event: AuditEvent) -> None: ...

    async def audit_log(self, *, run_id: str | None = None, limit: int = 1000) -> list[AuditEvent]: ...

    async def alert_thread(self, group_key: str) -> AlertThread | None: ...

    async def save_alert_thread(self, group_key: str, thread: AlertThread) -> None: ...

    async def forget_alert_thread(self, group_key: str) -> None: ...

    async def notify(self, topic: str, payload: str) -> None: ...

    def listen(self, topic: str) -> Subscription: ...
