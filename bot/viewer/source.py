"""Where the trace viewer finds a run's trace: a one-method protocol, and the run store behind it.

Every replica saves its runs' traces in the shared store, so a link works whichever replica serves it
and after a restart.
"""

from __future__ import annotations

from typing import Protocol

from bot.store.ports import RunLookup
from kernel import RunResult


class TraceSource(Protocol):
    """Finds the trace of a run by its id."""

    async def __call__(self, run_id: str) -> RunResult | None:
        """The run's latest trace, or None when this source does not know the run."""
        ...


class StoredTraces:
    """The traces the run store holds: each run's checkpoint, which is its whole trace once it has ended."""

    def __init__(self, runs: RunLookup) -> None:
        self._runs = runs

    async def __call__(self, run_id: str) -> RunResult | None:
        """The run's saved trace, or None for a run the store does not know (or one without a step yet)."""
        record = await self._runs.get_run(run_id)
        return RunResult.from_json(record.trace_json) if record is not None and record.trace_json else None
