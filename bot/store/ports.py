"""The store's ports: what each room asks of the run store, one narrow protocol per concept the store keeps.

These concepts (runs and their leases, de-dup keys, topics, alert threads, ratings, guidance, the memory of past
incidents, side effects, the checks of approved actions) are the store's own: their records live in `bot.store.records`, and the rooms that use them all sit
above the store, so the store is the one room they and the SQL adapter can all import. Approvals and the audit log
keep their ports in their own rooms (`bot.approvals.store`, `bot.audit.trail`), which sit below the store.

The contract every method shares, unless its docstring says otherwise:
- one call is one atomic step on the database (one statement, or a conditional sequence whose steps each are);
- `StoreUnavailableError` when the database cannot be reached; a write that may be re-sent safely is re-sent once
  after a dropped connection, and one that may not says that its outcome is unknown;
- `SchemaVersionError` on a database that is not migrated (or is newer than this code);
- times are timezone-aware UTC (a naive one is a `ValueError`), and text a person wrote is redacted before it is kept.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Protocol, Self

from bot.store.records import (
    AlertThread,
    FeedbackRecord,
    GuidanceRecord,
    RunRecord,
    RunStatus,
    ScheduledCheck,
    SideEffectRecord,
)
from kernel import Verification
from opsagent_tools.actions.journal import SideEffectState
from opsagent_tools.memory import PastIncident


class RunLookup(Protocol):
    """Reading runs: the door, the viewer, the alert receiver, the API, drafts and reports ask only this."""

    async def get_run(self, run_id: str) -> RunRecord | None:
        """The run with this id as last saved, or None when there is no such run."""
        ...

    async def run_in_thread(self, channel: str, thread_ts: str) -> RunRecord | None:
        """The latest run started in this thread (finished or not), or None when the thread has none."""
        ...

    async def runs_in_thread(self, channel: str, thread_ts: str, *, limit: int = 20) -> list[RunRecord]:
        """The latest `limit` runs started in this thread (a first run and its follow-ups), newest first; empty for
        a thread without one."""
        ...

    async def runs_requested_by(self, requested_by: str, *, limit: int = 20) -> list[RunRecord]:
        """The latest `limit` runs asked for by `requested_by` (a user id, `api:claude`), newest first; empty for
        someone who asked for none."""
        ...


class RunRecords(RunLookup, Protocol):
    """Keeping runs: where each was asked, by whom, its checkpoint, who stopped it and where its summary is."""

    async def create_run(self, run: RunRecord, *, slots: int | None = None) -> None:
        """Store a new run. Idempotent: re-sending the very same record is a no-op.

        `StoreConflictError` when its id is taken, or its thread already has an unfinished run (started on any
        replica). With `slots`, the run takes one of that many slots, or `StoreAtCapacityError` (a conflict too)
        when every slot is held by an unfinished run: at most `slots` unfinished runs exist at once, however many
        replicas insert together. A slot is free again once its run is finished; there is nothing to release.
        """
        ...

    async def checkpoint(
        self, run_id: str, *, status: RunStatus, trace_json: str, owner: str = "", urgent: bool = False
    ) -> str:
        """Save the run's status and trace in one write, and return who asked it to stop ("" if nobody has).

        With `owner` the write is fenced: it lands only while that replica holds the run's lease, else
        `LeaseLostError` and nothing is saved. `StoreConflictError` for an unknown run. Idempotent. `urgent`: a
        person waits on it (the run acts on their decision next), so it goes before routine writes queued with it.
        """
        ...

    async def request_stop(self, run_id: str, by: str) -> None:
        """Record who stopped the run, for whichever replica carries it (now or after a restart) to read back from
        its next checkpoint. Idempotent; the latest `by` wins; an unknown run is left as it is (no error)."""
        ...

    async def remember_summary(self, run_id: str, summary_ts: str) -> None:
        """Record the ts of the run's summary message, so whoever carries the run on updates that message.
        Idempotent; an unknown run is left as it is (no error)."""
        ...

    async def record_verification(self, run_id: str, verification: Verification) -> bool:
        """Write a check of one of the run's actions into its saved trace (`RunResult.verified`: in place of an
        earlier record of the same step and check), if the run has finished; whether it was written. False, and
        nothing written, for a run that is not finished (its carrier's checkpoints own the trace until it is) or
        unknown. A compare-and-set on the trace, so two checks written at once both stay; idempotent.
        `StoreConflictError` when the trace kept changing under it; a `ValueError` for a trace that cannot be read.
        """
        ...


class Leases(Protocol):
    """Which replica carries each unfinished run: a lease that expires unless renewed, so a dead replica's runs are
    taken over by another. A finished run has no lease to take."""

    async def acquire_lease(self, run_id: str, owner: str, ttl_s: float) -> bool:
        """Take the unfinished run's lease for `ttl_s` seconds if it is free, expired or already `owner`'s (then
        it is extended); whether `owner` holds it now. Atomic: of replicas racing for one lease, one wins."""
        ...

    async def renew_leases(self, owner: str, ttl_s: float) -> list[str]:
        """Extend every lease `owner` holds on an unfinished run by `ttl_s` from now (the heartbeat); those run
        ids, sorted. Idempotent."""
        ...

    async def release_lease(self, run_id: str, owner: str) -> None:
        """Give up `owner`'s lease on the run, so another replica may take it at once; nothing happens when
        `owner` does not hold it. Idempotent."""
        ...

    async def claimable_runs(self) -> list[RunRecord]:
        """The unfinished runs no replica holds a live lease on, oldest first: the ones to resume. A read: taking
        one is `acquire_lease`, which another replica may win first."""
        ...


class Dedupe(Protocol):
    """Keys seen recently, across replicas: Slack's retries and double deliveries are handled once."""

    async def remember(self, key: str, ttl_s: float) -> bool:
        """True the first time `key` is seen (or once its `ttl_s` has run out), False while it is remembered.

        Atomic: of callers racing with one key, exactly one gets True; a call re-sent after a dropped connection
        still learns that it was the first.
        """
        ...


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


class Topics(Protocol):
    """Publish and subscribe between replicas (a decision or a Stop that lands on one wakes the run on another).

    Delivery is a hint, not a record: a message reaches the subscriptions listening when it is sent, and may be lost
    or (after a reconnect) come twice, so a listener acts on what the store says, not on the message alone.
    """

    async def notify(self, topic: str, payload: str) -> None:
        """Send `payload` (under 8000 bytes) to every subscription on `topic`: every replica's on PostgreSQL, this
        process's on SQLite. Not stored; with no listener it is dropped."""
        ...

    def listen(self, topic: str) -> Subscription:
        """Subscribe to `topic`; the subscription re-subscribes by itself after a lost connection, and raises
        nothing (a database that is down shows as `subscribed` clear)."""
        ...


class AlertThreads(Protocol):
    """Alertmanager group key → the Slack thread investigating it: what makes Alertmanager's re-sends harmless."""

    async def alert_thread(self, group_key: str) -> AlertThread | None:
        """The thread the group opened, while the group is open; None before it fired or after it resolved."""
        ...

    async def save_alert_thread(self, group_key: str, thread: AlertThread) -> None:
        """Record the group's thread, replacing any earlier one (the last write wins). Idempotent."""
        ...

    async def forget_alert_thread(self, group_key: str) -> None:
        """The group resolved: its next firing opens a new thread. Idempotent; an unknown group is no error."""
        ...


class FeedbackStore(Protocol):
    """People's ratings of runs' answers (👍/👎, and a 👎's reason): each person's latest rating of a run stands."""

    async def record_feedback(self, feedback: FeedbackRecord) -> None:
        """Keep the rating in one upsert, replacing the person's earlier rating of the run; its reason is redacted.
        A rating without a reason keeps the reason given with the same rating before (the buttons are clicked again;
        the reason came from a modal); a changed rating drops it. Idempotent."""
        ...

    async def feedback_for(self, run_id: str) -> list[FeedbackRecord]:
        """Everyone's latest rating of the run, oldest first; empty for a run nobody rated (or an unknown one)."""
        ...

    async def rated_runs(self, *, limit: int = 1000) -> list[FeedbackRecord]:
        """The latest `limit` ratings of any run, newest first (what `opsagent eval export --feedback` reads)."""
        ...


class IncidentStore(Protocol):
    """The memory of past incidents: finished runs remembered as incidents, searched in full text, forgotten after
    the retention or on request. Each incident's texts are redacted when it is remembered."""

    async def remember_incident(self, incident: PastIncident) -> bool:
        """Remember (or update: the newest verdict wins) a finished run's incident; whether it is kept. False, and
        nothing kept, when its run is not in the store or was forgotten on purpose (`forget_incident`).
        Idempotent; two writes (the run is marked, then the incident kept), so a failure between them is made good
        by calling again."""
        ...

    async def search_incidents(
        self, query: str, *, since: datetime, service: str | None = None, limit: int = 5
    ) -> list[PastIncident]:
        """The incidents finished since `since` whose text matches any word of `query` (words only: no search
        syntax; stop words left out), best first, of `service` only when given; none for a query without words."""
        ...

    async def incidents(self, *, limit: int = 100) -> list[PastIncident]:
        """The remembered incidents, newest first."""
        ...

    async def count_incidents(self) -> int:
        """How many incidents are remembered."""
        ...

    async def forget_incident(self, run_id: str) -> bool:
        """Forget the run's incident for good: it is deleted and never remembered again (the run and its audit log
        stay); whether the run was known. Idempotent."""
        ...

    async def forget_incidents_before(self, moment: datetime) -> int:
        """Delete the incidents finished before `moment` (the retention); how many. Idempotent."""
        ...

    async def runs_to_remember(self, *, limit: int = 100) -> list[RunRecord]:
        """Finished runs neither remembered nor forgotten yet (finished before the memory existed, or while it could
        not be written), oldest first: what a start-up backfill remembers."""
        ...


class SideEffectStore(Protocol):
    """The journal of side-effect calls, keyed by the idempotency key sent to the action webhook: an `executing`
    record is written before anything is sent, so no action runs twice across restarts and replicas."""

    async def begin_side_effect(self, record: SideEffectRecord) -> SideEffectRecord | None:
        """Record the call as `executing`; None when the key is new, else its earlier record (as it was).

        Of callers racing with one key, one gets None. An earlier `done` record stays done (do not act again); a
        `failed` one (it did not run) is `executing` again; an `executing` one stays so (its outcome is unknown:
        re-send with the same idempotency key).
        """
        ...

    async def finish_side_effect(self, key: str, state: SideEffectState, outcome: str) -> None:
        """Move an `executing` side effect to `done` or `failed`, with its outcome. Idempotent: the same finish
        re-sent is a no-op. `StoreConflictError` for any other move (an unknown key, one finished otherwise, or
        `executing` as the new state)."""
        ...

    async def get_side_effect(self, key: str) -> SideEffectRecord | None:
        """The side effect with this idempotency key, or None."""
        ...

    async def side_effects_for_run(self, run_id: str) -> list[SideEffectRecord]:
        """The run's side effects in the order they began."""
        ...


class GuidanceLog(Protocol):
    """What people told running investigations: kept so that whichever replica carries a run (now, or after a
    restart) gives each message to it once."""

    async def add_guidance(self, guidance: GuidanceRecord, *, limit: int) -> GuidanceRecord | None:
        """Keep a message for its run, numbered after the run's others (`seq`), unless the run holds `limit`
        already: then None and nothing is kept, however many replicas add at once. Not idempotent: a re-sent
        message is a second one (callers drop Slack's retries first)."""
        ...

    async def guidance_for(self, run_id: str) -> list[GuidanceRecord]:
        """The run's messages in the order they came (`seq`)."""
        ...


class CheckSchedule(Protocol):
    """The checks of approved actions, each due at a time: kept so that exactly one replica (any, after a restart)
    runs each once it is due, and its result reaches the run's trace once the run has finished. A check is held
    by one replica at a time, with a lease like a run's: a replica that dies holding one lets another take it."""

    async def schedule_check(self, check: ScheduledCheck) -> None:
        """Keep a check to run at its `due_at`. Idempotent: a check already kept for the same run, step and number
        is left as it is (whatever it came with)."""
        ...

    async def claim_check(self, owner: str, ttl_s: float) -> ScheduledCheck | None:
        """Take the earliest check there is work for that no replica holds (free, or its lease ran out): one due
        and not run yet (`result` None), or one run whose result waits for its run to finish, once it has; it is
        `owner`'s for `ttl_s` seconds. None when there is none. Atomic: of replicas racing, one gets each check."""
        ...

    async def check_ran(self, check: ScheduledCheck, result: Verification, owner: str) -> bool:
        """Keep what the check found and let it go (its result then waits for the run to finish); whether it was
        kept: False, and nothing kept, when `owner` no longer holds it (another replica has taken it over)."""
        ...

    async def check_done(self, check: ScheduledCheck) -> None:
        """The check's result is in its run's trace (or never will be): nothing more to do for it, whoever holds it
        (writing a result into the trace twice keeps one, so this needs no lease). Idempotent."""
        ...
