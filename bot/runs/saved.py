"""A run's saved trace read back: to end a run for good from its last checkpoint, and to give a follow-up in its
thread the earlier task, data and answer (as data, never as instructions).
"""

from __future__ import annotations

import structlog

from bot.store.records import RunRecord
from kernel import RunResult, follow_up_data

log = structlog.get_logger("opsagent.investigations")

EARLIER_DATA_CHARS = 4000
"""How much of an earlier run's own data (an alert's details) a follow-up in its thread is given."""


def readable_trace(record: RunRecord) -> RunResult | None:
    """The record's saved trace, or None if it has none or it cannot be read (corrupt, or from another version)."""
    if not record.trace_json:
        return None
    try:
        return RunResult.from_json(record.trace_json)
    except ValueError as exc:
        log.error("saved_trace_unreadable", run_id=record.run_id, error=str(exc)[:300])
        return None


def earlier_work(earlier: RunRecord | None) -> str:
    """What a follow-up in an investigation thread is given as data: the earlier task, its data and its answer
    (model output, which data it read may have steered: never instructions); "" for a thread without one."""
    result = readable_trace(earlier) if earlier is not None else None
    return follow_up_data(result, data_chars=EARLIER_DATA_CHARS) if result is not None else ""
