"""The durable run store: runs (status, owner, trace), approvals, de-dup keys, side effects and the audit log.

One protocol with two implementations picked by URL (`open_store`): SQLite embedded, PostgreSQL for replicas.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol, Self
from urllib.parse import urlsplit

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from bot.alert_threads import AlertThread
from bot.approval_store import ApprovalStore
from opsagent_tools.action_journal import SideEffectState

LEASE_TTL_S = 30.0
"""How long a replica holds a run without a heartbeat: a dead replica's runs resume elsewhere after this."""


class StoreSettings(BaseModel):
    """`[store]`: where runs, approvals, de-dup keys, side effects and the audit log are kept."""

    model_config = ConfigDict(extra="forbid")

    url: str = "sqlite:///opsagent-runs.db"
    """`sqlite:///relative.db`, `sqlite:////absolute.db` (one process), or `postgresql://…` (several replicas);
    set it with OPSAGENT_STORE__URL to keep a database password out of the file."""
    lease_ttl_s: float = Field(default=LEASE_TTL_S, ge=3)


class RunStatus(StrEnum):
    """Where a run is: only `finished` runs are never resumed."""

    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting_approval"
    FINISHED = "finished"
    """Ended with any stop reason; the trace says which."""


class RunRecord(BaseModel):
    """One investigation: where it was asked, by whom, its checkpoint, and which replica holds it."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    channel: str
    thread_ts: str
    requested_by: str
    team_id: str = ""
    task: str
    mention_ts: str = ""
    status: RunStatus
    trace_json: str = ""
    """The kernel's `RunResult.to_json()`: the checkpoint a resumed run continues from."""
    owner: str = ""
    """The replica holding the lease; empty when none does."""
    lease_until: AwareDatetime | None = None
    created_at: AwareDatetime
    updated_at: AwareDatetime
    stop_requested_by: str = ""
    """Who stopped the run (a Slack mention), once someone has: the replica carrying it ends it."""


class SideEffectRecord(BaseModel):
    """One side-effect call, keyed by the idempotency key sent to the action webhook."""

    model_config = ConfigDict(frozen=True)

    key: str
    run_id: str
    step: int
    tool: str
    args_hash: str
    approval_id: str = ""
    state: SideEffectState
    outcome: str = ""
    started_at: AwareDatetime
    finished_at: AwareDatetime | None = None


class AuditEvent(BaseModel):
    """One line of the append-only audit log: what happened, to which run, who did it, when."""

    model_config = ConfigDict(frozen=True)

    seq: int = 0
    """Assigned by the store; 0 on an event not yet written."""
    at: AwareDatetime
    kind: str
    """e.g. run_started, tool_call, approval_decided, side_effect_started/done/failed, run_finished, refused."""
    run_id: str = ""
    actor: str = ""
    detail: dict[str, Any] = Field(default_factory=dict)


class StoreUnavailableError(RuntimeError):
    """The database cannot be reached (down, restarting, timing out); the call may be retried later.

    For a write, the message says whether its outcome is unknown (the connection dropped mid-call).
    """


class SchemaVersionError(RuntimeError):
    """The database's schema is not the one this code knows: not migrated yet, or from a newer version."""


class StoreConflictError(ValueError):
    """The stored state does not allow the call (an id that exists, a side effect already finished...)."""


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

    async def create_run(self, run: RunRecord) -> None: ...

    async def get_run(self, run_id: str) -> RunRecord | None: ...

    async def run_in_thread(self, channel: str, thread_ts: str) -> RunRecord | None: ...

    async def checkpoint(self, run_id: str, *, status: RunStatus, trace_json: str, owner: str = "") -> str: ...

    async def request_stop(self, run_id: str, by: str) -> None: ...

    async def acquire_lease(self, run_id: str, owner: str, ttl_s: float) -> bool: ...

    async def renew_leases(self, owner: str, ttl_s: float) -> list[str]: ...

    async def release_lease(self, run_id: str, owner: str) -> None: ...

    async def claimable_runs(self) -> list[RunRecord]: ...

    async def remember(self, key: str, ttl_s: float) -> bool: ...

    async def begin_side_effect(self, record: SideEffectRecord) -> SideEffectRecord | None: ...

    async def finish_side_effect(self, key: str, state: SideEffectState, outcome: str) -> None: ...

    async def get_side_effect(self, key: str) -> SideEffectRecord | None: ...

    async def side_effects_for_run(self, run_id: str) -> list[SideEffectRecord]: ...

    async def audit(self, event: AuditEvent) -> None: ...

    async def audit_log(self, *, run_id: str | None = None, limit: int = 1000) -> list[AuditEvent]: ...

    async def alert_thread(self, group_key: str) -> AlertThread | None: ...

    async def save_alert_thread(self, group_key: str, thread: AlertThread) -> None: ...

    async def forget_alert_thread(self, group_key: str) -> None: ...

    async def notify(self, topic: str, payload: str) -> None: ...

    def listen(self, topic: str) -> Subscription: ...


def utc_now() -> datetime:
    """The wall clock in UTC: the stores' default clock (tests inject their own)."""
    return datetime.now(UTC)


def open_store(url: str, *, clock: Callable[[], datetime] = utc_now) -> RunStore:
    """The store a URL names: `sqlite:///relative.db`, `sqlite:////absolute/path.db`, or `postgresql://…`.

    Nothing is opened yet: the first call connects; call `await store.migrate()` before using it.
    """
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        from bot.store_sqlite import SqliteRunStore

        return SqliteRunStore(sqlite_path(url), clock=clock)
    if scheme in ("postgresql", "postgres"):
        from bot.store_postgres import PostgresRunStore

        return PostgresRunStore(url, clock=clock)
    raise ValueError(
        f"unknown run store URL scheme {scheme!r} in {url.split('@')[-1]!r}: use sqlite:///relative/path.db, "
        "sqlite:////absolute/path.db or postgresql://user@host:5432/dbname"
    )


@asynccontextmanager
async def opened_store(url: str, *, clock: Callable[[], datetime] = utc_now) -> AsyncIterator[RunStore]:
    """The store a URL names, migrated, and closed on exit."""
    store = open_store(url, clock=clock)
    try:
        await store.migrate()
        yield store
    finally:
        await store.close()


def sqlite_path(url: str) -> str:
    """The file a `sqlite:///…` URL names: three slashes then a relative path, four for an absolute one."""
    prefix = "sqlite:///"
    path = url[len(prefix) :] if url.startswith(prefix) else ""
    if not path or "?" in path or "#" in path:
        raise ValueError(
            f"bad SQLite URL {url!r}: write sqlite:///relative/path.db or sqlite:////absolute/path.db "
            "(no host, no query string)"
        )
    return path
