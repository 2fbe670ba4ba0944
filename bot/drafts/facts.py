"""The recorded facts of one investigation, gathered for a postmortem or a status update: the run, its trace, the
audit log (who started, approved, stopped; every step and side effect, with when), the side-effect journal, the
feedback and the thread's human messages, and one timeline made of them.

Facts, never the model's words: the timeline is the audit log and the thread, in order; only drafts' narrative
sections are written by a model, from these facts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.audit.trail import AuditEvent, AuditKind, AuditLog, names_in
from bot.runs.saved import readable_trace
from bot.slack.thread_history import ThreadHistory, ThreadMessage
from bot.store.ports import FeedbackStore, SideEffectStore
from bot.store.records import FeedbackRecord, RunRecord, RunStatus, SideEffectRecord
from bot.words import verification_words
from kernel import DEFAULT_REDACTOR, RunResult, Step, StopReason, Verification

AUDIT_LIMIT = 5000
"""Audit events of one run read at most."""
MESSAGE = "message"
"""The timeline kind of a person's message in the thread."""
WHAT_CHARS = 300
OPSAGENT = "OpsAgent"
_AGENT_KINDS = frozenset(
    {
        AuditKind.TOOL_CALL,
        AuditKind.APPROVAL_REQUESTED,
        AuditKind.RUN_RESUMED,
        AuditKind.RUN_INTERRUPTED,
        AuditKind.RUN_FINISHED,
        AuditKind.SIDE_EFFECT_STARTED,
        AuditKind.SIDE_EFFECT_DONE,
        AuditKind.SIDE_EFFECT_FAILED,
        AuditKind.ACTION_VERIFIED,
    }
)
"""What OpsAgent did itself, whoever the event names as the run's requester."""


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    """One moment of the incident: when, who (a Slack user id, `alertmanager`, `OpsAgent`), what, and its source
    (an audit kind, or `message`)."""

    at: datetime
    who: str
    what: str
    kind: str


@dataclass(frozen=True)
class IncidentFacts:
    """Everything recorded about one run, redacted."""

    record: RunRecord
    trace: RunResult | None
    audit: tuple[AuditEvent, ...]
    side_effects: tuple[SideEffectRecord, ...]
    feedback: tuple[FeedbackRecord, ...]
    history: ThreadHistory
    timeline: tuple[TimelineEntry, ...]
    trace_file: str = ""
    """The trace file the facts were read from, for a run no run store holds ("" for a stored run)."""

    def named(self, who: str) -> str:
        """A person by the name they had when they acted (the audit log keeps it), else as recorded (a user id,
        `alertmanager`, "alice (terminal)")."""
        return names_in(self.audit).get(who) or who

    @property
    def started_at(self) -> datetime:
        """When the incident was first seen: the first alert's start, else when the investigation was asked for."""
        fired = [_moment(event.detail.get("starts_at")) for event in self.audit if event.kind == AuditKind.ALERT_FIRED]
        return min([moment for moment in fired if moment is not None], default=self.record.created_at)

    @property
    def resolved_at(self) -> datetime | None:
        """When Alertmanager reported the alert resolved, if it did."""
        ends = [
            _moment(event.detail.get("ends_at")) or event.at
            for event in self.audit
            if event.kind == AuditKind.ALERT_RESOLVED
        ]
        return max(ends, default=None)


async def gather_facts(
    record: RunRecord,
    history: ThreadHistory,
    *,
    audit: AuditLog,
    side_effects: SideEffectStore,
    feedback: FeedbackStore,
) -> IncidentFacts:
    """The run's facts from the store's audit log, side-effect journal and ratings, and the thread's messages (read
    by the caller, who has the Slack client)."""
    events = tuple(await audit.audit_log(run_id=record.run_id, limit=AUDIT_LIMIT))
    trace = readable_trace(record)
    redacted = ThreadHistory(
        tuple(ThreadMessage(m.ts, m.at, m.user, DEFAULT_REDACTOR.redact(m.text)) for m in history.messages),
        history.problem,
    )
    return IncidentFacts(
        record=record,
        trace=trace,
        audit=events,
        side_effects=tuple(await side_effects.side_effects_for_run(record.run_id)),
        feedback=tuple(await feedback.feedback_for(record.run_id)),
        history=redacted,
        timeline=tuple(timeline(events, trace, redacted.messages)),
    )


def trace_facts(trace: RunResult, trace_file: str) -> IncidentFacts:
    """The facts of a run known only by its trace file: no audit log, side-effect journal, ratings or thread, so
    the timeline holds what the trace records with a time (its start, each approval's decision, each check of an
    approved action)."""
    status = {StopReason.AWAITING_APPROVAL: RunStatus.AWAITING_APPROVAL, StopReason.INTERRUPTED: RunStatus.RUNNING}
    record = RunRecord(
        run_id=trace.run_id,
        channel="",
        thread_ts="",
        requested_by="",
        task=trace.task,
        task_data=trace.task_data,
        status=status.get(trace.stop_reason, RunStatus.FINISHED),
        created_at=trace.started_at,
        updated_at=trace.started_at,
    )
    moments = [AuditEvent(at=trace.started_at, kind=AuditKind.RUN_STARTED, detail={"task": trace.task})]
    moments += [
        AuditEvent(
            at=step.approval.at,
            kind=AuditKind.APPROVAL_DECIDED,
            actor=step.approval.by,
            detail={"step": step.index, "tool": step.call.name if step.call else "", "decision": step.approval.decision}
            | ({"reason": step.approval.reason} if step.approval.reason else {}),
        )
        for step in trace.steps
        if step.approval is not None and step.approval.at is not None and not step.pending
    ]
    moments += [
        AuditEvent(at=v.at, kind=AuditKind.ACTION_VERIFIED, detail={"step": v.step, "check": v.check})
        for v in trace.verifications
    ]
    history = ThreadHistory((), "a trace file has no thread")
    entries = tuple(timeline(moments, trace, ()))
    return IncidentFacts(record, trace, (), (), (), history, entries, trace_file=trace_file)


def timeline(
    audit: Sequence[AuditEvent], trace: RunResult | None, messages: Sequence[ThreadMessage]
) -> list[TimelineEntry]:
    """The audit events (each said in words, with its step's call and outcome from the trace) and the thread's
    messages, in time order; an audit event before a message of the same instant. People are named as the audit
    log kept them when they acted (a person who never acted in the run is shown by their user id)."""
    names = names_in(audit)
    steps = {step.index: step for step in trace.steps} if trace is not None else {}
    checks = {(v.step, v.check): v for v in trace.verifications} if trace is not None else {}
    by_approval = {
        step.approval.approval_id: step for step in steps.values() if step.approval and step.approval.approval_id
    }
    entries = [
        TimelineEntry(
            event.at,
            OPSAGENT if event.kind in _AGENT_KINDS or not event.actor else names.get(event.actor) or event.actor,
            _said(event, steps, by_approval, checks),
            event.kind,
        )
        for event in audit
    ]
    entries += [TimelineEntry(m.at, names.get(m.user) or m.user, _flat(m.text), MESSAGE) for m in messages]
    return sorted(entries, key=lambda entry: (entry.at, entry.kind == MESSAGE))


def _said(
    event: AuditEvent, steps: dict[int, Step], by_approval: dict[str, Step], checks: dict[tuple[int, int], Verification]
) -> str:
    """One audit event in words."""
    detail = event.detail
    step = steps.get(detail["step"]) if isinstance(detail.get("step"), int) else None
    if step is None and isinstance(detail.get("approval_id"), str):
        step = by_approval.get(detail["approval_id"])
    where = f"step {step.index} " if step is not None else ""
    tool = str(detail.get("tool") or "")
    match event.kind:
        case AuditKind.RUN_STARTED:
            return f"investigation started: {_flat(str(detail.get('task') or ''))}"
        case AuditKind.RUN_RESUMED:
            return "investigation resumed (after a restart, or by another replica)"
        case AuditKind.RUN_INTERRUPTED:
            return f"investigation paused by a restart after {detail.get('steps', 0)} steps"
        case AuditKind.RUN_FINISHED:
            return f"investigation ended: {detail.get('stop_reason', '?')}"
        case AuditKind.STOP_REQUESTED:
            return "stopped the investigation"
        case AuditKind.REQUEST_REFUSED:
            action = str(detail.get("action") or "start")
            return f"asked to {action} and was refused ({str(detail.get('reason') or '?').replace('_', ' ')})"
        case AuditKind.TOOL_CALL:
            if detail.get("approval") == "pending" and step is not None and step.call is not None:
                return f"step {step.index}: {_flat(step.call.render())} → waiting for a person's approval"
            return _step_said(step, tool, str(detail.get("error") or ""))
        case AuditKind.APPROVAL_REQUESTED:
            return f"approval asked for {where}{tool}"
        case AuditKind.APPROVAL_DECIDED:
            reason = f" ({_flat(str(detail['reason']))})" if detail.get("reason") else ""
            return f"{detail.get('decision', 'decided')} {where}{tool}{reason}"
        case AuditKind.APPROVAL_REFUSED:
            return f"could not decide {where}{tool}: {detail.get('refusal', '')}"
        case AuditKind.SIDE_EFFECT_STARTED:
            return f"side effect {tool} ({where.strip() or 'step ' + str(detail.get('step', '?'))}) sent"
        case AuditKind.SIDE_EFFECT_DONE:
            return f"side effect {tool} done: {_flat(str(detail.get('outcome') or ''))}"
        case AuditKind.SIDE_EFFECT_FAILED:
            return f"side effect {tool} failed: {_flat(str(detail.get('outcome') or ''))}"
        case AuditKind.ACTION_VERIFIED:
            check = checks.get((detail.get("step"), detail.get("check")))
            said = _flat(verification_words(check) if check is not None else f"checked: {detail.get('outcome', '?')}")
            action = f"{where}{step.call.name if step is not None and step.call is not None else tool}".strip()
            return f"{action}: {said}" if action else said
        case AuditKind.ALERT_FIRED:
            return f"alert {detail.get('alert', '?')} fired ({detail.get('alerts', 1)} alerts)"
        case AuditKind.ALERT_RESOLVED:
            return f"alert {detail.get('alert', '?')} resolved"
        case _:
            return _flat(event.kind.replace("_", " "))


def _step_said(step: Step | None, tool: str, error: str) -> str:
    if step is None or step.call is None:
        return f"{tool or 'a model turn'}{f' failed: {error}' if error else ''}"
    shown = step.said_for_people if step.error is not None else step.observation  # never the model's hint
    outcome = step.headline or (shown.strip().split("\n", 1)[0] if shown else "")
    failed = f" failed ({error})" if error else ""
    return f"step {step.index}: {_flat(step.call.render())}{failed} → {_flat(outcome)}"


def _flat(text: str) -> str:
    flat = " ".join(DEFAULT_REDACTOR.redact(text).split())
    return flat if len(flat) <= WHAT_CHARS else flat[: WHAT_CHARS - 1] + "…"


def _moment(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None and moment.year > 1 else None
