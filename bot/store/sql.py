"""Every run-store operation, written once in SQL that SQLite and PostgreSQL both accept.

A dialect supplies only how a statement reaches its database (`_fetch`, `_execute`), migrations and notify.
"""

from __future__ import annotations

import json
import secrets
from abc import ABC, abstractmethod
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.approvals.store import ApprovalState, PendingApproval
from bot.audit.trail import AuditEvent
from bot.store.memory import IncidentSql
from bot.store.protocol import LeaseLostError, StoreAtCapacityError, StoreConflictError, Subscription
from bot.store.records import AlertThread, FeedbackRecord, RunRecord, RunStatus, SideEffectRecord
from kernel import DEFAULT_REDACTOR
from opsagent_tools.actions.journal import SideEffectState

Row = dict[str, Any]

_FEEDBACK_SELECT = "SELECT run_id, user_id, rating, reason, at FROM feedback"
_RUN_COLUMNS = (
    "run_id, channel, thread_ts, requested_by, team_id, task, task_data, mention_ts, status, trace_json, owner, "
    "lease_until, created_at, updated_at, stop_requested_by, summary_ts, alert_labels"
)
_SIDE_EFFECT_COLUMNS = "key, run_id, step, tool, args_hash, approval_id, state, outcome, started_at, finished_at"


def as_utc(moment: datetime) -> datetime:
    """The same instant in UTC; a naive datetime is refused, since its zone is a guess."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"naive datetime {moment.isoformat()}: the run store needs timezone-aware UTC times")
    return moment.astimezone(UTC)


def _placeholders(count: int) -> str:
    return ", ".join(f"${n}" for n in range(1, count + 1))


def _redacted(value: Any) -> Any:
    """Audit details with every string passed through the default redactor: the audit log is a log."""
    if isinstance(value, str):
        return DEFAULT_REDACTOR.redact(value)
    if isinstance(value, dict):
        return {key: _redacted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    return value


class SqlRunStore(IncidentSql, ABC):
    """The `RunStore` operations over two primitives, `_fetch` and `_execute` (declared with the memory's
    operations, `IncidentSql`); statements use `$1`-style parameters.

    `idempotent` tells the dialect whether a statement may be re-sent after the connection dropped mid-call.
    """

    def __init__(self, clock: Callable[[], datetime]) -> None:
        self._clock = clock

    @abstractmethod
    async def migrate(self) -> None:
        """Apply the migrations this database lacks."""

    @abstractmethod
    async def close(self) -> None:
        """Close connections and subscriptions."""

    @abstractmethod
    async def notify(self, topic: str, payload: str) -> None:
        """Publish a message to the topic's listeners."""

    @abstractmethod
    def listen(self, topic: str) -> Subscription:
        """Subscribe to a topic."""

    def _now(self) -> datetime:
        return as_utc(self._clock())

    # Runs and leases.

    async def create_run(self, run: RunRecord, *, slots: int | None = None) -> None:
        """Store a new run; an existing run id, or another unfinished run in the same thread (started on any
        replica), is a conflict (unless it is this very record, re-sent).

        With `slots`, the run takes one of that many slots or is refused (`StoreAtCapacityError`): at most `slots`
        unfinished runs exist at once however many replicas insert at the same moment, since a unique index lets
        one run hold a slot (the loser of a race tries another free slot). A slot is free again once its run is
        finished, whatever ended it; there is nothing to release.
        """
        values = [getattr(run, name.strip()) for name in _RUN_COLUMNS.split(",")]
        values[-1] = json.dumps(run.alert_labels, sort_keys=True)  # the last column: the store keeps it as JSON
        sql = (
            f"INSERT INTO runs ({_RUN_COLUMNS}, slot) VALUES ({_placeholders(len(values) + 1)}) ON CONFLICT DO NOTHING"
        )
        for _ in range(1 if slots is None else slots + 2):  # each lost race means a slot was taken: bounded
            slot = None if slots is None else await self._free_slot(slots)
            if slots is not None and slot is None:
                break
            if await self._execute(sql, *values, slot) == 1:
                return
            stored = await self.get_run(run.run_id)
            if stored == run:
                return  # this very record, re-sent after the connection dropped
            latest = await self.run_in_thread(run.channel, run.thread_ts)
            if stored is not None or slots is None or (latest is not None and latest.status is not RunStatus.FINISHED):
                raise StoreConflictError(
                    f"run {run.run_id} was not stored: its id is taken, or thread {run.thread_ts} of {run.channel} "
                    "already has an unfinished run"
                )
        raise StoreAtCapacityError(
            f"run {run.run_id} was not stored: {slots} runs are unfinished, the most allowed at once; "
            "start it again when one ends"
        )

    async def _free_slot(self, slots: int) -> int | None:
        """One of the `slots` slots no unfinished run holds, at random, or None when every one is held. At random,
        not the lowest: runs started together would all try the same slot, and all but one try again."""
        rows = await self._fetch("SELECT slot FROM runs WHERE status <> $1 AND slot IS NOT NULL", RunStatus.FINISHED)
        held = {row["slot"] for row in rows}
        free = [slot for slot in range(slots) if slot not in held]
        return secrets.choice(free) if free else None

    async def get_run(self, run_id: str) -> RunRecord | None:
        """The run with this id, or None."""
        rows = await self._fetch(f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = $1", run_id)
        return RunRecord.model_validate(rows[0]) if rows else None

    async def run_in_thread(self, channel: str, thread_ts: str) -> RunRecord | None:
        """The latest run started in this thread, or None."""
        rows = await self._fetch(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE channel = $1 AND thread_ts = $2 "
            "ORDER BY created_at DESC, run_id DESC LIMIT 1",
            channel,
            thread_ts,
        )
        return RunRecord.model_validate(rows[0]) if rows else None

    async def checkpoint(self, run_id: str, *, status: RunStatus, trace_json: str, owner: str = "") -> str:
        """Save the run's status and trace (its checkpoint); an unknown run is an error. Returns who asked the
        run to stop (`request_stop`), or "" if nobody did: the answer a run carried elsewhere reads a Stop by.

        With `owner`, the write is fenced: it lands only while that replica holds the run (else `LeaseLostError`),
        so a replica that lost its lease cannot overwrite the progress of the one that took it over.
        """
        sql = "UPDATE runs SET status = $2, trace_json = $3, updated_at = $4 WHERE run_id = $1"
        args: list[Any] = [run_id, status, trace_json, self._now()]
        if owner:
            sql += " AND owner = $5"
            args.append(owner)
        rows = await self._fetch(sql + " RETURNING stop_requested_by", *args)
        if rows:
            return str(rows[0]["stop_requested_by"])
        current = await self.get_run(run_id)
        if current is None:
            raise StoreConflictError(f"run {run_id} does not exist: create_run before checkpointing it")
        raise LeaseLostError(
            f"run {run_id} is held by {current.owner or 'nobody'}, not {owner}: stop working on it, nothing was saved"
        )

    async def request_stop(self, run_id: str, by: str) -> None:
        """Record that someone stopped the run: whichever replica carries it (now or after a restart) ends it."""
        await self._execute("UPDATE runs SET stop_requested_by = $2 WHERE run_id = $1", run_id, by)

    async def remember_summary(self, run_id: str, summary_ts: str) -> None:
        """Record where the run's summary message is, so whoever carries the run on updates that message."""
        await self._execute("UPDATE runs SET summary_ts = $2 WHERE run_id = $1", run_id, summary_ts)

    async def acquire_lease(self, run_id: str, owner: str, ttl_s: float) -> bool:
        """Take the unfinished run's lease if it is free, expired or already ours; whether we hold it now."""
        now = self._now()
        sql = (
            "UPDATE runs SET owner = $2, lease_until = $3 WHERE run_id = $1 AND status <> $4 "
            "AND (owner = '' OR owner = $2 OR lease_until IS NULL OR lease_until <= $5)"
        )
        return await self._execute(sql, run_id, owner, now + timedelta(seconds=ttl_s), RunStatus.FINISHED, now) == 1

    async def renew_leases(self, owner: str, ttl_s: float) -> list[str]:
        """Extend every lease this owner holds on an unfinished run (the heartbeat); those run ids."""
        now = self._now()
        rows = await self._fetch(
            "UPDATE runs SET lease_until = $2 WHERE owner = $1 AND status <> $3 RETURNING run_id",
            owner,
            now + timedelta(seconds=ttl_s),
            RunStatus.FINISHED,
        )
        return sorted(row["run_id"] for row in rows)

    async def release_lease(self, run_id: str, owner: str) -> None:
        """Give the run's lease up, if this owner holds it."""
        await self._execute(
            "UPDATE runs SET owner = '', lease_until = NULL WHERE run_id = $1 AND owner = $2", run_id, owner
        )

    async def claimable_runs(self) -> list[RunRecord]:
        """Unfinished runs nobody holds a live lease on, oldest first: the ones to resume."""
        rows = await self._fetch(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE status <> $1 "
            "AND (owner = '' OR lease_until IS NULL OR lease_until <= $2) ORDER BY created_at, run_id",
            RunStatus.FINISHED,
            self._now(),
        )
        return [RunRecord.model_validate(row) for row in rows]

    # Alert groups.

    async def alert_thread(self, group_key: str) -> AlertThread | None:
        """The thread an Alertmanager group opened, while the group is open."""
        rows = await self._fetch(
            "SELECT channel, thread_ts, fingerprints_json, run_id FROM alert_groups WHERE group_key = $1", group_key
        )
        if not rows:
            return None
        row = rows[0]
        fingerprints = frozenset(json.loads(row["fingerprints_json"]))
        return AlertThread(row["channel"], row["thread_ts"], fingerprints, row["run_id"] or None)

    async def save_alert_thread(self, group_key: str, thread: AlertThread) -> None:
        """Record (or replace) the group's thread."""
        await self._execute(
            "INSERT INTO alert_groups (group_key, channel, thread_ts, fingerprints_json, run_id, updated_at) "
            "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (group_key) DO UPDATE SET channel = excluded.channel, "
            "thread_ts = excluded.thread_ts, fingerprints_json = excluded.fingerprints_json, "
            "run_id = excluded.run_id, updated_at = excluded.updated_at",
            group_key,
            thread.channel,
            thread.thread_ts,
            json.dumps(sorted(thread.fingerprints)),
            thread.run_id or "",
            self._now(),
        )

    async def forget_alert_thread(self, group_key: str) -> None:
        """The group resolved: its next firing opens a new thread."""
        await self._execute("DELETE FROM alert_groups WHERE group_key = $1", group_key)

    # De-duplication.

    async def remember(self, key: str, ttl_s: float) -> bool:
        """True the first time a key is seen (or after it expired), False while it is remembered.

        A random token marks who wrote the key, so a re-sent call still learns that it was first.
        """
        now, token = self._now(), secrets.token_hex(16)
        rows = await self._fetch(
            "INSERT INTO dedup_keys (key, token, expires_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO UPDATE SET "
            "token = CASE WHEN dedup_keys.expires_at <= $4 THEN excluded.token ELSE dedup_keys.token END, "
            "expires_at = CASE WHEN dedup_keys.expires_at <= $4 THEN excluded.expires_at "
            "ELSE dedup_keys.expires_at END RETURNING token",
            key,
            token,
            now + timedelta(seconds=ttl_s),
            now,
        )
        return rows[0]["token"] == token

    # Side effects.

    async def begin_side_effect(self, record: SideEffectRecord) -> SideEffectRecord | None:
        """Record the call as executing; None when the key is new, else its earlier record.

        An earlier `done` record stays as it is (the caller must not act again); a `failed` one (it did not
        run) is executing again, and an `executing` one stays so (its outcome is unknown: the caller re-sends
        with the same idempotency key).
        """
        values = [getattr(record, name.strip()) for name in _SIDE_EFFECT_COLUMNS.split(",")]
        values[6], values[7], values[9] = SideEffectState.EXECUTING, "", None
        sql = (
            f"INSERT INTO side_effects ({_SIDE_EFFECT_COLUMNS}) VALUES ({_placeholders(len(values))}) "
            "ON CONFLICT DO NOTHING"
        )
        if await self._execute(sql, *values) == 1:
            return None
        earlier = await self.get_side_effect(record.key)
        assert earlier is not None, "side effects are never deleted"
        if earlier.state is SideEffectState.FAILED:
            retry = "UPDATE side_effects SET state = $2, outcome = '', finished_at = NULL WHERE key = $1 AND state = $3"
            await self._execute(retry, record.key, SideEffectState.EXECUTING, SideEffectState.FAILED)
        return earlier

    async def finish_side_effect(self, key: str, state: SideEffectState, outcome: str) -> None:
        """Move an executing side effect to done or failed, with its outcome; any other move is refused."""
        if state is SideEffectState.EXECUTING:
            raise StoreConflictError("finish_side_effect takes done or failed, not executing")
        sql = "UPDATE side_effects SET state = $2, outcome = $3, finished_at = $4 WHERE key = $1 AND state = $5"
        if await self._execute(sql, key, state, outcome, self._now(), SideEffectState.EXECUTING) == 1:
            return
        stored = await self.get_side_effect(key)
        if stored is not None and stored.state is state and stored.outcome == outcome:
            return  # this very call, re-sent after the connection dropped
        found = "no such side effect" if stored is None else f"it is {stored.state}"
        raise StoreConflictError(f"side effect {key} can only finish from executing, but {found}")

    async def get_side_effect(self, key: str) -> SideEffectRecord | None:
        """The side effect with this idempotency key, or None."""
        rows = await self._fetch(f"SELECT {_SIDE_EFFECT_COLUMNS} FROM side_effects WHERE key = $1", key)
        return SideEffectRecord.model_validate(rows[0]) if rows else None

    async def side_effects_for_run(self, run_id: str) -> list[SideEffectRecord]:
        """The run's side effects in the order they began."""
        rows = await self._fetch(
            f"SELECT {_SIDE_EFFECT_COLUMNS} FROM side_effects WHERE run_id = $1 ORDER BY started_at, step, key", run_id
        )
        return [SideEffectRecord.model_validate(row) for row in rows]

    # Feedback.

    async def record_feedback(self, feedback: FeedbackRecord) -> None:
        """Keep a person's rating of a run, replacing their earlier one; a new rating without a reason keeps the
        reason given with the same rating before (the buttons are clicked again; the reason came from a modal)."""
        await self._execute(
            "INSERT INTO feedback (run_id, user_id, rating, reason, at) VALUES ($1, $2, $3, $4, $5) "
            "ON CONFLICT (run_id, user_id) DO UPDATE SET rating = excluded.rating, at = excluded.at, reason = CASE "
            "WHEN excluded.reason <> '' THEN excluded.reason WHEN feedback.rating = excluded.rating "
            "THEN feedback.reason ELSE '' END",
            feedback.run_id,
            feedback.user,
            str(feedback.rating),
            DEFAULT_REDACTOR.redact(feedback.reason),
            feedback.at,
        )

    async def feedback_for(self, run_id: str) -> list[FeedbackRecord]:
        """Everyone's latest rating of the run, oldest first."""
        rows = await self._fetch(f"{_FEEDBACK_SELECT} WHERE run_id = $1 ORDER BY at, user_id", run_id)
        return [_feedback(row) for row in rows]

    async def rated_runs(self, *, limit: int = 1000) -> list[FeedbackRecord]:
        """The latest ratings of any run, newest first: what `opsagent eval export --feedback` turns into scenarios."""
        rows = await self._fetch(f"{_FEEDBACK_SELECT} ORDER BY at DESC, run_id, user_id LIMIT $1", limit)
        return [_feedback(row) for row in rows]

    # Audit.

    async def audit(self, event: AuditEvent) -> None:
        """Append one event (its details redacted); the database refuses to change or delete it later."""
        detail = json.dumps(_redacted(event.model_dump(mode="json")["detail"]), sort_keys=True)
        await self._execute(
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
        rows = await self._fetch(
            "SELECT * FROM (SELECT seq, at, kind, run_id, actor, detail_json FROM audit_events "
            f"{where} ORDER BY seq DESC LIMIT $1) AS recent ORDER BY seq",
            limit,
            *args,
        )
        return [AuditEvent.model_validate(row | {"detail": json.loads(row["detail_json"])}) for row in rows]

    # Approvals (bot.approval_store.ApprovalStore).

    async def add(self, approval: PendingApproval) -> None:
        """Keep a new approval; ids are unique."""
        sql = (
            "INSERT INTO approvals (approval_id, run_id, state, expires_at, record_json) "
            "VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING"
        )
        inserted = await self._execute(sql, *self._approval_values(approval)) == 1
        if not inserted and await self.get(approval.approval_id) != approval:
            raise StoreConflictError(f"approval {approval.approval_id} already exists")

    async def get(self, approval_id: str) -> PendingApproval | None:
        """The approval with this id, or None."""
        rows = await self._fetch("SELECT record_json FROM approvals WHERE approval_id = $1", approval_id)
        return PendingApproval.model_validate_json(rows[0]["record_json"]) if rows else None

    async def compare_and_set(self, approval_id: str, expected_state: ApprovalState, new: PendingApproval) -> bool:
        """Replace the approval with `new` only if it is still in `expected_state`: one `UPDATE … WHERE state`."""
        if new.approval_id != approval_id:
            return False
        _, run_id, state, expires_at, record_json = self._approval_values(new)
        sql = (
            "UPDATE approvals SET run_id = $3, state = $4, expires_at = $5, record_json = $6 "
            "WHERE approval_id = $1 AND state = $2"
        )
        changed = await self._execute(
            sql, approval_id, expected_state, run_id, state, expires_at, record_json, idempotent=False
        )
        return changed == 1

    async def pending_for_run(self, run_id: str) -> list[PendingApproval]:
        """The run's approvals still waiting for a decision."""
        rows = await self._fetch(
            "SELECT record_json FROM approvals WHERE run_id = $1 AND state = $2 ORDER BY expires_at, approval_id",
            run_id,
            ApprovalState.PENDING,
        )
        return [PendingApproval.model_validate_json(row["record_json"]) for row in rows]

    @staticmethod
    def _approval_values(approval: PendingApproval) -> tuple[str, str, ApprovalState, datetime, str]:
        expires_at = as_utc(approval.expires_at)
        return approval.approval_id, approval.run_id, approval.state, expires_at, approval.model_dump_json()


def _feedback(row: Any) -> FeedbackRecord:
    return FeedbackRecord(
        run_id=row["run_id"], user=row["user_id"], rating=row["rating"], reason=row["reason"], at=row["at"]
    )
