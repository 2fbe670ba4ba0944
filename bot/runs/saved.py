"""A run's saved trace read back: to end a run for good from its last checkpoint, to give a follow-up in its
thread the earlier task, data, answer and side effects (as data, never as instructions), and to tell an approver
that the call they are asked about was proposed in the thread before.
"""

from __future__ import annotations

import structlog

from bot.approvals.store import PendingApproval
from bot.store.ports import RunLookup
from bot.store.records import RunRecord
from bot.verdict_actions import Action, action_record, actions_of
from kernel import RunResult, follow_up_data

log = structlog.get_logger("opsagent.investigations")

EARLIER_DATA_CHARS = 4000
"""How much of an earlier run's own data (an alert's details) a follow-up in its thread is given."""
THREAD_RUNS = 20
"""How many of a thread's latest runs an approval looks through for the same call."""


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
    if result is None:
        return ""
    return follow_up_data(result, data_chars=EARLIER_DATA_CHARS, actions=action_record(result))


async def same_call_in_thread(runs: RunLookup, approval: PendingApproval) -> tuple[Action, ...]:
    """What came of the same call (same tool, same arguments) each time the thread's other runs proposed it, oldest
    first: what an approver is told before approving it again."""
    records = await runs.runs_in_thread(approval.channel, approval.thread_ts, limit=THREAD_RUNS)
    same: list[Action] = []
    for record in reversed(records):
        trace = readable_trace(record) if record.run_id != approval.run_id else None
        if trace is not None:
            actions = actions_of(trace.steps, trace.stop_reason)
            same += [a for a in actions if (a.tool, a.args_hash) == (approval.tool, approval.args_hash)]
    return tuple(same)
