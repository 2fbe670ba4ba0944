"""Runs and their leases in SQL: the `RunRecords` and `Leases` ports over one `Database`."""

from __future__ import annotations

import json
import secrets
from datetime import timedelta
from typing import Any

from bot.store.protocol import LeaseLostError, StoreAtCapacityError, StoreConflictError
from bot.store.records import RunRecord, RunStatus
from bot.store.sql.database import Database, placeholders
from kernel import RunResult, Verification

TRACE_WRITES = 5
"""How often a check is written into a finished run's trace when another write changed the trace meanwhile."""
RUN_COLUMNS = (
    "run_id, channel, thread_ts, requested_by, team_id, task, task_data, mention_ts, status, trace_json, owner, "
    "lease_until, created_at, updated_at, stop_requested_by, summary_ts, alert_labels"
)


class SqlRunRecords:
    """`RunRecords` on the `runs` table; the docstrings of `bot.store.ports` are the contract."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def create_run(self, run: RunRecord, *, slots: int | None = None) -> None:
        """Store a new run, in one of `slots` slots when given (see `RunRecords.create_run`).

        A unique index lets one unfinished run hold a slot: the loser of a race tries another free slot, so the
        tries are bounded by the slots.
        """
        values = [getattr(run, name.strip()) for name in RUN_COLUMNS.split(",")]
        values[-1] = json.dumps(run.alert_labels, sort_keys=True)  # the last column: the store keeps it as JSON
        sql = f"INSERT INTO runs ({RUN_COLUMNS}, slot) VALUES ({placeholders(len(values) + 1)}) ON CONFLICT DO NOTHING"
        for _ in range(1 if slots is None else slots + 2):  # each lost race means a slot was taken: bounded
            slot = None if slots is None else await self._free_slot(slots)
            if slots is not None and slot is None:
                break
            if await self._db.execute(sql, *values, slot) == 1:
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
        rows = await self._db.fetch("SELECT slot FROM runs WHERE status <> $1 AND slot IS NOT NULL", RunStatus.FINISHED)
        held = {row["slot"] for row in rows}
        free = [slot for slot in range(slots) if slot not in held]
        return secrets.choice(free) if free else None

    async def get_run(self, run_id: str) -> RunRecord | None:
        """The run with this id, or None."""
        rows = await self._db.fetch(f"SELECT {RUN_COLUMNS} FROM runs WHERE run_id = $1", run_id)
        return RunRecord.model_validate(rows[0]) if rows else None

    async def run_in_thread(self, channel: str, thread_ts: str) -> RunRecord | None:
        """The latest run started in this thread, or None."""
        rows = await self._db.fetch(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE channel = $1 AND thread_ts = $2 "
            "ORDER BY created_at DESC, run_id DESC LIMIT 1",
            channel,
            thread_ts,
        )
        return RunRecord.model_validate(rows[0]) if rows else None

    async def runs_in_thread(self, channel: str, thread_ts: str, *, limit: int = 20) -> list[RunRecord]:
        """The latest `limit` runs started in this thread, newest first."""
        rows = await self._db.fetch(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE channel = $1 AND thread_ts = $2 "
            "ORDER BY created_at DESC, run_id DESC LIMIT $3",
            channel,
            thread_ts,
            limit,
        )
        return [RunRecord.model_validate(row) for row in rows]

    async def runs_requested_by(self, requested_by: str, *, limit: int = 20) -> list[RunRecord]:
        """The latest `limit` runs `requested_by` asked for, newest first."""
        rows = await self._db.fetch(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE requested_by = $1 ORDER BY created_at DESC, run_id DESC LIMIT $2",
            requested_by,
            limit,
        )
        return [RunRecord.model_validate(row) for row in rows]

    async def checkpoint(
        self, run_id: str, *, status: RunStatus, trace_json: str, owner: str = "", urgent: bool = False
    ) -> str:
        """Save the run's status and trace, fenced by `owner` when given; who asked the run to stop, or ""
        (see `RunRecords.checkpoint`)."""
        sql = "UPDATE runs SET status = $2, trace_json = $3, updated_at = $4 WHERE run_id = $1"
        args: list[Any] = [run_id, status, trace_json, self._db.now()]
        if owner:
            sql += " AND owner = $5"
            args.append(owner)
        rows = await self._db.fetch(sql + " RETURNING stop_requested_by", *args, urgent=urgent)
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
        await self._db.execute("UPDATE runs SET stop_requested_by = $2 WHERE run_id = $1", run_id, by)

    async def remember_summary(self, run_id: str, summary_ts: str) -> None:
        """Record where the run's summary message is, so whoever carries the run on updates that message."""
        await self._db.execute("UPDATE runs SET summary_ts = $2 WHERE run_id = $1", run_id, summary_ts)

    async def record_verification(self, run_id: str, verification: Verification) -> bool:
        """Write a check into the finished run's trace, compare-and-set on the trace it read (see
        `RunRecords.record_verification`)."""
        for _ in range(TRACE_WRITES):
            record = await self.get_run(run_id)
            if record is None or record.status is not RunStatus.FINISHED:
                return False
            trace = RunResult.from_json(record.trace_json).verified(verification).to_json(indent=None)
            sql = "UPDATE runs SET trace_json = $2 WHERE run_id = $1 AND status = $3 AND trace_json = $4"
            if await self._db.execute(sql, run_id, trace, RunStatus.FINISHED, record.trace_json) == 1:
                return True
        raise StoreConflictError(f"run {run_id}'s trace kept changing: the check was not written; try again")


class SqlLeases:
    """`Leases` as two columns of the `runs` table (`owner`, `lease_until`), each move one conditional `UPDATE`."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def acquire_lease(self, run_id: str, owner: str, ttl_s: float) -> bool:
        """Take the unfinished run's lease if it is free, expired or already ours; whether we hold it now."""
        now = self._db.now()
        sql = (
            "UPDATE runs SET owner = $2, lease_until = $3 WHERE run_id = $1 AND status <> $4 "
            "AND (owner = '' OR owner = $2 OR lease_until IS NULL OR lease_until <= $5)"
        )
        return await self._db.execute(sql, run_id, owner, now + timedelta(seconds=ttl_s), RunStatus.FINISHED, now) == 1

    async def renew_leases(self, owner: str, ttl_s: float) -> list[str]:
        """Extend every lease this owner holds on an unfinished run (the heartbeat); those run ids."""
        rows = await self._db.fetch(
            "UPDATE runs SET lease_until = $2 WHERE owner = $1 AND status <> $3 RETURNING run_id",
            owner,
            self._db.now() + timedelta(seconds=ttl_s),
            RunStatus.FINISHED,
        )
        return sorted(row["run_id"] for row in rows)

    async def release_lease(self, run_id: str, owner: str) -> None:
        """Give the run's lease up, if this owner holds it."""
        await self._db.execute(
            "UPDATE runs SET owner = '', lease_until = NULL WHERE run_id = $1 AND owner = $2", run_id, owner
        )

    async def claimable_runs(self) -> list[RunRecord]:
        """Unfinished runs nobody holds a live lease on, oldest first: the ones to resume."""
        rows = await self._db.fetch(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE status <> $1 "
            "AND (owner = '' OR lease_until IS NULL OR lease_until <= $2) ORDER BY created_at, run_id",
            RunStatus.FINISHED,
            self._db.now(),
        )
        return [RunRecord.model_validate(row) for row in rows]
