"""A run's events, derived from what the run store keeps (its record and the trace checkpointed after every step), so
they survive a restart and read the same on every replica.

Each event's id names the fact it reports, not its place in a list: `turn.stage.step.part`, compared as numbers. In
one model turn, the steps are recorded in order (each step's start, its approval asked, an approval decided at once,
its end); a step that paused for a person's decision is settled after all of its turn's steps (`stage` 2), before
the next turn. Guidance comes before the turn it was given with (`stage` 0); the run's end after everything. A
checkpoint only ever adds facts that sort after the ones it had, so a client that sends the last id it saw
(`Last-Event-ID`) gets every later event once, whichever process answers and however often it reconnects.

The checks of approved actions are made minutes after the run ended, and kept in its trace in the order they were
made: each sorts after the run's end, by that order. The stream ends at `run_finished`; a client that wants them
comes back later with the last id it read (or reads the investigation: each action carries its latest check).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bot.api.views import Links, investigation, step_shape, verification_shape
from bot.runs.saved import readable_trace
from bot.store.records import RunRecord, RunStatus
from bot.verdict import StepStatus, step_line
from kernel import FINISH_TOOL, ErrorKind, Step

END_STAGE = 9


class EventKind(StrEnum):
    """What an event reports."""

    STEP_STARTED = "step_started"
    STEP_COMPLETED = "step_completed"
    APPROVAL_REQUESTED = "approval_requested"
    APPROVAL_DECIDED = "approval_decided"
    GUIDANCE = "guidance"
    RUN_FINISHED = "run_finished"
    VERIFICATION = "verification"


@dataclass(frozen=True, slots=True, order=True)
class EventId:
    """Where an event sorts among its run's events: model turn, stage in the turn, step, part of the step."""

    turn: int
    stage: int
    step: int
    part: int

    def __str__(self) -> str:
        return f"{self.turn}.{self.stage}.{self.step}.{self.part}"

    @classmethod
    def parse(cls, text: str) -> EventId | None:
        """The id an event of this API was sent with (`3.1.7.0`); None for anything else."""
        parts = text.strip().split(".")
        if len(parts) != 4 or not all(part.isascii() and part.isdigit() and len(part) <= 9 for part in parts):
            return None
        turn, stage, step, part = (int(p) for p in parts)
        return cls(turn, stage, step, part)


@dataclass(frozen=True, slots=True)
class RunEvent:
    """One event of a run: its id, what it reports, and its data (JSON-ready)."""

    id: EventId
    kind: EventKind
    data: dict[str, Any]


def run_events(record: RunRecord, links: Links) -> list[RunEvent]:
    """Every event of the run so far, in order: its steps, approvals and guidance from the trace, its end once the
    record says it is finished, then the checks of its approved actions made since."""
    trace = readable_trace(record)
    events: list[RunEvent] = []
    turns = [-1]
    for number, taken in enumerate(trace.guidance if trace is not None else []):
        turns.append(taken.turn)
        data = {"by": taken.guidance.by, "text": taken.guidance.text, "at": taken.guidance.at.isoformat()}
        events.append(RunEvent(EventId(taken.turn, 0, taken.step, number), EventKind.GUIDANCE, data))
    for step in trace.steps if trace is not None else []:
        turns.append(step.turn)
        events += _step_events(step)
    if record.status is RunStatus.FINISHED:
        view = investigation(record, links)
        data = {"status": str(view.status), "verdict": view.verdict.model_dump(mode="json") if view.verdict else None}
        end = max(turns) + 1
        events.append(RunEvent(EventId(end, END_STAGE, 0, 0), EventKind.RUN_FINISHED, data))
        for made, check in enumerate(trace.verifications if trace is not None else [], start=1):
            shown = verification_shape(check).model_dump(mode="json")
            events.append(RunEvent(EventId(end, END_STAGE, made, 0), EventKind.VERIFICATION, shown))
    return sorted(events, key=lambda event: event.id)


def _step_events(step: Step) -> list[RunEvent]:
    """A step's events: started (unless the model's reply held no call, or the call never ran), its approval asked
    and decided, and completed (unless it waits for a decision). A successful `finish` is the answer, not a step."""
    if step.call is not None and step.call.name == FINISH_TOOL and step.error is None:
        return []
    line = step_line(step)
    about = {"step": step.index, "tool": line.tool, "call": line.call}
    events = []
    turn, index = step.turn, step.index
    if step.call is not None and step.error is not ErrorKind.NOT_RUN:
        events.append(RunEvent(EventId(turn, 1, index, 0), EventKind.STEP_STARTED, about))
    approval = step.approval
    if approval is not None:
        events.append(RunEvent(EventId(turn, 1, index, 1), EventKind.APPROVAL_REQUESTED, about))
    if approval is None or approval.decision == "pending":
        settled = 1
    else:
        paused = bool(approval.approval_id)  # asked of a person and waited for: settled after its turn's steps
        settled = 2 if paused else 1
        decided = {
            **about,
            "decision": approval.decision,
            "by": approval.by,
            "at": approval.at.isoformat() if approval.at else None,
            "reason": approval.reason,
        }
        events.append(RunEvent(EventId(turn, settled, index, 2), EventKind.APPROVAL_DECIDED, decided))
    if line.status is not StepStatus.WAITING:
        shown = step_shape(line)
        completed = {**about, "status": shown.status, "outcome": shown.outcome, "line": shown.line}
        events.append(RunEvent(EventId(turn, settled, index, 3), EventKind.STEP_COMPLETED, completed))
    return events
