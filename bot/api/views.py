"""A stored run as the API shows it: its status, its steps in a line each, its usage and its verdict, all built from
the run record and its trace through `bot.verdict` (the model every surface renders)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.access.askers import api_client_of
from bot.api import shapes
from bot.runs.saved import readable_trace
from bot.slack.permalinks import thread_url
from bot.store.records import RunRecord, RunStatus
from bot.verdict import Claim, StepLine, StepStatus, Verdict, tool_steps, verdict_of
from bot.words import verification_words
from kernel import RunResult, StopReason, Verification

MARKS = {
    StepStatus.OK: "✓",
    StepStatus.FAILED: "✗",
    StepStatus.WAITING: "⏳",
    StepStatus.DENIED: "⊘",
    StepStatus.PROSE: "·",
    StepStatus.UNUSABLE: "·",
}
"""How a step's line marks what became of it (the terminal's marks)."""


@dataclass(frozen=True)
class Links:
    """Where people see a run: the trace viewer's signed link (None without `[viewer]`), and the workspace whose
    threads' permalinks are built ("" when unknown)."""

    trace: Callable[[str], str | None] | None
    workspace_url: str

    def url(self, record: RunRecord) -> str | None:
        """The viewer's link to the run's page, or None."""
        return self.trace(record.run_id) if self.trace is not None else None

    def thread(self, record: RunRecord) -> str | None:
        """The permalink of the run's thread, or None for a run posted in no channel."""
        return thread_url(self.workspace_url, record.channel, record.thread_ts) or None


def status_of(record: RunRecord, trace: RunResult | None) -> shapes.InvestigationStatus:
    """Where the run is, by its record and, once finished, its trace's stop reason."""
    match record.status:
        case RunStatus.RUNNING:
            return shapes.InvestigationStatus.RUNNING
        case RunStatus.AWAITING_APPROVAL:
            return shapes.InvestigationStatus.WAITING_FOR_APPROVAL
        case RunStatus.FINISHED if trace is not None and trace.ok:
            return shapes.InvestigationStatus.FINISHED
        case RunStatus.FINISHED if trace is not None and trace.stop_reason is StopReason.CANCELLED:
            return shapes.InvestigationStatus.STOPPED
        case _:
            return shapes.InvestigationStatus.FAILED


def step_shape(line: StepLine) -> shapes.Step:
    """One step as the API shows it."""
    said = " · ".join(part for part in (line.call, line.outcome) if part)
    return shapes.Step(
        index=line.index,
        status=str(line.status),
        tool=line.tool,
        call=line.call,
        outcome=line.outcome,
        line=f"{line.index} {MARKS[line.status]} {said}",
        refusal=shapes.Refusal(by=r.by, at=r.at, reason=r.reason) if (r := line.refusal) is not None else None,
    )


def investigation(record: RunRecord, links: Links) -> shapes.Investigation:
    """The whole view of one run: status, steps, usage, and its verdict once it has ended."""
    trace = readable_trace(record)
    verdict = verdict_of(trace, stopped_by=record.stop_requested_by) if trace is not None else None
    usage = trace.usage if trace is not None else None
    return shapes.Investigation(
        run_id=record.run_id,
        status=status_of(record, trace),
        task=record.task,
        requested_by=api_client_of(record.requested_by) or record.requested_by,
        created_at=record.created_at,
        url=links.url(record),
        thread=links.thread(record),
        steps=[step_shape(line) for line in verdict.steps] if verdict is not None else [],
        usage=shapes.Usage(
            steps=tool_steps(trace.steps) if trace is not None else 0,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            tokens_estimated=bool(usage and usage.estimated_turns),
            cost_usd=usage.cost_usd if usage else 0.0,
            elapsed_s=usage.elapsed_s if usage else 0.0,
        ),
        verdict=verdict_shape(verdict) if verdict is not None and record.status is RunStatus.FINISHED else None,
    )


def item(record: RunRecord, links: Links) -> shapes.InvestigationItem:
    """One run in a client's list."""
    return shapes.InvestigationItem(
        run_id=record.run_id,
        status=status_of(record, readable_trace(record) if record.status is RunStatus.FINISHED else None),
        task=record.task,
        created_at=record.created_at,
        url=links.url(record),
        thread=links.thread(record),
    )


def verdict_shape(verdict: Verdict) -> shapes.Verdict:
    """The verdict as JSON: the same facts as every other surface, nothing rendered."""
    return shapes.Verdict(
        title=verdict.title,
        ok=verdict.ok,
        stop_reason=str(verdict.stop_reason),
        stop=verdict.stop.said(),
        detail=verdict.detail,
        summary=verdict.summary,
        root_cause=verdict.root_cause,
        rest=verdict.rest,
        confidence=str(verdict.confidence) if verdict.confidence is not None else None,
        derived=verdict.derived,
        confidence_words=verdict.confidence_words,
        evidence=[_claim(claim) for claim in verdict.evidence],
        ruled_out=[_claim(claim) for claim in verdict.ruled_out],
        next_steps=[*verdict.next_steps, *(action.by_hand() for action in verdict.by_hand)],
        actions=[
            shapes.Action(
                step=a.step,
                call=a.call,
                approved_by=a.approved_by,
                ok=a.ok,
                outcome=a.outcome,
                state=a.state,
                said=a.said(),
                verified=verification_shape(a.verified) if a.verified is not None else None,
            )
            for a in verdict.actions
        ],
        claimed_not_taken=list(verdict.claimed_not_taken),
        partial_answer=verdict.partial_answer,
        hypothesis=verdict.hypothesis.text if verdict.hypothesis is not None else "",
        guidance=[
            shapes.Guidance(by=t.guidance.by, text=t.guidance.text, at=t.guidance.at, before_step=t.step)
            for t in verdict.guidance
        ],
    )


def verification_shape(check: Verification) -> shapes.Verification:
    """A check of an approved action as JSON, with the line every surface says it in."""
    return shapes.Verification(
        step=check.step,
        check=check.check,
        at=check.at,
        outcome=str(check.outcome),
        metric=check.metric,
        before=check.before,
        now=check.now,
        baseline=check.baseline,
        line=verification_words(check),
    )


def verdict_text(view: shapes.Investigation) -> str:
    """The investigation in a few lines of plain text (what an MCP tool's text content says)."""
    lines = [f"Investigation {view.run_id}: {view.status}", f"Task: {view.task}"]
    if view.verdict is not None:
        v = view.verdict
        lines.append(f"Verdict: {v.title}" + (f" ({v.confidence_words})" if v.confidence_words else ""))
        lines += [text for text in (v.summary, v.root_cause, v.rest, v.partial_answer, v.detail) if text]
        lines += [f"Next: {step}" for step in v.next_steps]
        lines += [f"Action: step {action.step} {action.call}: {action.said}" for action in v.actions]
    lines += ["Steps:", *(f"  {step.line}" for step in view.steps)] if view.steps else []
    lines += [f"Trace: {view.url}"] if view.url else []
    lines += [f"Thread: {view.thread}"] if view.thread else []
    return "\n".join(lines)


def _claim(claim: Claim) -> shapes.Claim:
    return shapes.Claim(
        text=claim.text,
        steps=list(claim.steps),
        supported=claim.supported,
        problem=claim.problem,
        matched=claim.matched,
    )
