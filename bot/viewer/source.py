"""Where the trace viewer finds a run: a one-method protocol, and the run store behind it.

Every replica saves its runs' traces in the shared store, so a link works whichever replica serves it
and after a restart. The audit log says who the people in a run are called (each named as they acted).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from bot.audit.trail import AuditLog, names_in
from bot.store.ports import RunLookup
from kernel import RunResult

AUDIT_LIMIT = 5000
"""Audit events of one run read at most, for its people's names."""


@dataclass(frozen=True)
class ShownRun:
    """What a run's page shows: its trace, who stopped it, and the names of the people it names."""

    trace: RunResult
    stopped_by: str = ""
    """Who stopped the run (a user id, `alertmanager`), when someone did."""
    names: Mapping[str, str] = field(default_factory=dict)
    """People's names by user id, as each was called when they acted (the audit log's `actor_name`)."""


class TraceSource(Protocol):
    """Finds a run by its id."""

    async def __call__(self, run_id: str) -> ShownRun | None:
        """The run's latest trace and its people, or None when this source does not know the run."""
        ...


class StoredTraces:
    """The runs the run store holds: each run's checkpoint, which is its whole trace once it has ended, and the
    names its audit log keeps."""

    def __init__(self, runs: RunLookup, audit: AuditLog) -> None:
        self._runs = runs
        self._audit = audit

    async def __call__(self, run_id: str) -> ShownRun | None:
        """The run's saved trace, or None for a run the store does not know (or one without a step yet)."""
        record = await self._runs.get_run(run_id)
        if record is None or not record.trace_json:
            return None
        names = names_in(await self._audit.audit_log(run_id=run_id, limit=AUDIT_LIMIT))
        return ShownRun(RunResult.from_json(record.trace_json), record.stop_requested_by, names)
