"""Terminal runs kept as the bot keeps its own: with `[store]` configured (in the file, or OPSAGENT_STORE__URL),
`opsagent investigate` saves each run it ends in the run store, with its start and end in the audit log, so
`opsagent postmortem RUN_ID` drafts it; with `[knowledge] memory` on (the default) the run is also remembered,
and the run's `similar_incidents` searches what earlier ones (in Slack or at a terminal) concluded.

Without `[store]`, nothing is kept but the trace file: a terminal run never creates a database nobody asked for.
"""

from __future__ import annotations

import getpass
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from bot.audit.trail import AuditEvent, AuditKind
from bot.runs.memory import RunMemory
from bot.settings import Settings
from bot.store.factory import opened_store
from bot.store.protocol import RunStore
from bot.store.records import RunRecord, RunStatus, utc_now
from kernel import RunResult


@dataclass(frozen=True)
class RunKeeper:
    """Where a terminal session keeps its runs: the run store and, when on, the memory of past incidents."""

    store: RunStore
    memory: RunMemory | None
    requested_by: str
    """Who asked, as the records name them: "alice (terminal)"."""

    async def keep(self, result: RunResult) -> bool:
        """Save the run (finished, not in any Slack thread) and its start and end in the audit log, then remember
        it; whether the memory took it. A store that fails raises its `StoreUnavailableError`."""
        now = utc_now()
        record = RunRecord(
            run_id=result.run_id,
            channel="",
            thread_ts="",
            requested_by=self.requested_by,
            task=result.task,
            task_data=result.task_data,
            status=RunStatus.FINISHED,  # however it ended (the trace says): no replica may take it up
            trace_json=result.to_json(indent=None),
            created_at=result.started_at,
            updated_at=now,
        )
        await self.store.runs.create_run(record)
        for at, kind, actor, detail in (
            (result.started_at, AuditKind.RUN_STARTED, self.requested_by, {"task": result.task}),
            (now, AuditKind.RUN_FINISHED, "", {"stop_reason": str(result.stop_reason), "ok": result.ok}),
        ):
            await self.store.audit.audit(AuditEvent(at=at, kind=kind, run_id=result.run_id, actor=actor, detail=detail))
        return self.memory is not None and await self.memory.remember(record)


@asynccontextmanager
async def run_keeper(settings: Settings) -> AsyncIterator[RunKeeper | None]:
    """The configured run store, opened (created and migrated as `serve` does) for the session, and its memory;
    None when no `[store]` is configured."""
    if "store" not in settings.model_fields_set:
        yield None
        return
    async with opened_store(settings.store.url) as store:
        knowledge = settings.knowledge
        memory = RunMemory(store.memory, store.runs, days=knowledge.memory_days) if knowledge.memory else None
        yield RunKeeper(store, memory, f"{getpass.getuser()} (terminal)")
