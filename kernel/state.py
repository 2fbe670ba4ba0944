"""The mutable state of one run, and how each kind of step is recorded into it.

The loop (`kernel.loop`) decides what happens next, stops included; this module keeps the books
(steps, turns, usage, the conversation, the trace) and reports what it saw as a `Verdict`.
"""

from __future__ import annotations

import copy
import hashlib
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, assert_never

from kernel.answer import Conclusion, EvidenceCheck, Findings, FinishedBy, check_evidence, hypothesis_in
from kernel.budget import Budget, Usage
from kernel.calls import ToolCall
from kernel.context import Conversation
from kernel.deferral import LOAD_TOOLS_TOOL, Offering
from kernel.dispatch import DispatchResult
from kernel.guidance import Guidance, TakenGuidance
from kernel.llm import LLMResponse, Message
from kernel.loop_guard import LoopGuard
from kernel.observations import (
    READ_OUTPUT_TOOL,
    ObservationStore,
    handle_for,
    trimmed_marker,
    truncate_observation,
)
from kernel.policy import Approved, Deferred, Denied
from kernel.prompt import fence, render_task
from kernel.stop import StopReason
from kernel.streak import ErrorStreak, StreakStop
from kernel.tool_errors import PROSE_REMINDER, ErrorKind, StepError
from kernel.tools import ToolRegistry
from kernel.trace import ApprovalRecord, RunResult, Step
from kernel.turns import PlannedStep


@dataclass(frozen=True, slots=True)
class AwaitingApproval:
    """The step's call waits for a human decision."""


@dataclass(frozen=True, slots=True)
class LoopConfirmed:
    """The step repeated a call the loop guard had warned about, and got the same result again."""

    step: int


@dataclass(frozen=True, slots=True)
class StreakExhausted:
    """The failed steps ending with this one show the model is stuck (`reason` says how)."""

    reason: StreakStop
    step: int
    error: StepError


_PAGER = f"{READ_OUTPUT_TOOL}("
"""How an observation (a truncation marker, the loop guard's warning) or an elided stub points at a handle."""

Verdict = AwaitingApproval | LoopConfirmed | StreakExhausted
"""What the books saw in a recorded step that may end the run; the loop decides whether it stops."""


@dataclass(eq=False)
class RunState:
    """Everything one run has done so far; `result()` turns it into the trace."""

    run_id: str
    task: str
    model: str
    nonce: str
    started_at: datetime
    budget: Budget
    tools: ToolRegistry
    conversation: Conversation
    store: ObservationStore
    obs_limit_tokens: int
    offering: Offering
    """The tools offered in full (the core and those loaded since) and the index of the rest."""
    task_data: str = ""
    """What the task came with (alert details, an earlier answer), shown to the model fenced as data."""
    usage: Usage = field(default_factory=Usage)
    steps: list[Step] = field(default_factory=list)
    turns: list[LLMResponse] = field(default_factory=list)
    offered: list[tuple[str, ...]] = field(default_factory=list)
    """The tools each turn's request carried in full (shared tuples: most turns offer what the last did)."""
    stop: StopReason | None = None
    answer: str | None = None
    findings: Findings | None = None
    evidence_check: EvidenceCheck | None = None
    finished_by: FinishedBy | None = None
    partial_answer: str | None = None
    detail: str = ""
    guidance: list[TakenGuidance] = field(default_factory=list)
    guard: LoopGuard = field(default_factory=LoopGuard)
    streak: ErrorStreak = field(init=False)
    _open: list[Step] = field(default_factory=list)
    _native: bool = False
    _turn_tokens: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        self.streak = ErrorStreak(self.budget)

    def take_guidance(self, guidance: Guidance) -> TakenGuidance:
        """Give a person's guidance to the model with its next request, and keep where it was taken."""
        taken = TakenGuidance(guidance, turn=len(self.turns), step=self.next_index)
        self.guidance.append(taken)
        self.conversation.add(Message(role="user", content=guidance.message()))
        return taken

    def begin_turn(self, response: LLMResponse, *, native: bool, prompt_tokens: int, completion_tokens: int) -> None:
        """Record a model turn before its steps are run, and the tools its request offered."""
        self.turns.append(response)
        self.offered.append(self.offering.current().names)
        self._native = native
        self._turn_tokens = (prompt_tokens, completion_tokens)

    @property
    def native_turn(self) -> bool:
        """Whether the latest model turn made native function calls (not the text protocol)."""
        return self._native

    @property
    def next_index(self) -> int:
        """The number the next recorded step will get."""
        return len(self.steps) + 1

    def record(
        self, planned: PlannedStep, outcome: DispatchResult | StepError | None = None
    ) -> tuple[Step, Verdict | None]:
        """Record a finished step: the observation the model will see, its error, and what it says of the run."""
        index = self.next_index
        verdict: Verdict | None
        match outcome:
            case DispatchResult():
                fields, seen = self._dispatch_fields(index, planned.call, outcome)
                counted = self._count(index, planned.call, outcome.error)
                verdict = seen or counted
            case StepError():
                fields = {
                    "observation": outcome.render(),
                    "error": outcome.kind,
                    "said": outcome.said,
                    "hint": outcome.hint,
                }
                verdict = self._count(index, planned.call, outcome)
            case None:
                fields, verdict = {}, None
            case _:
                assert_never(outcome)
        step = self._append(planned, **fields)
        if not step.pending and step.error is not ErrorKind.NOT_RUN:
            self.usage.steps += 1
        return step, verdict

    def remind(self, planned: PlannedStep) -> Step:
        """Record a prose reply that reads as an answer: its observation asks the model to confirm it (call
        `finish`) or go on. Not a failure and not work: neither the error streak nor the step budget counts it."""
        return self._append(planned, observation=PROSE_REMINDER)

    @property
    def reminded(self) -> str | None:
        """The prose answer the latest turn ended with, which the model was asked to confirm; None otherwise."""
        last = self.steps[-1] if self.steps else None
        return last.thought if last is not None and last.prose and last.turn == len(self.turns) - 1 else None

    def conclude(self, conclusion: Conclusion) -> None:
        """Take the run's final answer, and check its findings against the steps so far. A run resumed after a
        failure drops its partial answer and the account of that stop: it has an answer now."""
        self.answer, self.findings, self.finished_by = conclusion.answer, conclusion.findings, conclusion.by
        self.partial_answer, self.detail = None, ""
        self.evidence_check = check_evidence(conclusion.findings, self.steps, conclusion.answer)

    def keep_unconfirmed_prose(self) -> None:
        """When the run stops before the model could confirm its prose answer, keep it as the partial answer."""
        if (prose := self.reminded) is not None and not self.partial_answer:
            self.partial_answer = prose
            self.detail = (self.detail + "; " if self.detail else "") + "the model's prose answer was not confirmed"

    def _append(self, planned: PlannedStep, **fields: Any) -> Step:
        prompt, completion = self._turn_tokens
        tool = self.tools.get(planned.call.name) if planned.call is not None else None
        step = Step(
            index=self.next_index,
            turn=len(self.turns) - 1,
            thought=planned.thought,
            call=planned.call,
            prompt_tokens=prompt,
            completion_tokens=completion,
            hypothesis=hypothesis_in(planned.thought),
            side_effect=tool is not None and tool.side_effect,
            **fields,
        )
        self.steps.append(step)
        self._open.append(step)
        return step

    def _dispatch_fields(
        self, index: int, call: ToolCall | None, outcome: DispatchResult
    ) -> tuple[dict[str, Any], AwaitingApproval | LoopConfirmed | None]:
        """The step fields for a dispatched call, keeping the full output; and a pause or a loop, if seen."""
        assert call is not None
        approval = _approval_record(outcome.decision)
        if isinstance(outcome.decision, Deferred):
            return {"approval": approval, "ms": outcome.ms}, AwaitingApproval()
        handle = handle_for(index)
        view = outcome.text if outcome.error else truncate_observation(outcome.text, self.obs_limit_tokens, handle)
        if outcome.more and not outcome.error:
            self.store.keep(handle, f"{outcome.text}\n{outcome.more}")
            view = f"{view}\n{trimmed_marker(outcome.more, handle, offset=len(outcome.text) + 1)}"
        else:
            self.store.keep(handle, outcome.text)
        looped = self.guard.record(call, index, outcome.text, ok=outcome.error is None)
        fields = {
            "observation": view,
            "error": outcome.error.kind if outcome.error else None,
            "said": outcome.error.said if outcome.error else "",
            "hint": outcome.error.hint if outcome.error else "",
            "ms": outcome.ms,
            "approval": approval,
            "headline": outcome.headline,
            "links": outcome.links,
        }
        return fields, LoopConfirmed(index) if looped else None

    def _count(self, index: int, call: ToolCall | None, error: StepError | None) -> StreakExhausted | None:
        """Count a step's outcome into the error streak; the verdict when the streak shows the model is stuck.

        A call that was not run (cancelled, past the step budget, or after the run began to stop) says nothing
        about the model or its tools, so it neither counts as a failure nor ends a streak."""
        if error is not None and error.kind in (ErrorKind.CANCELLED, ErrorKind.NOT_RUN):
            return None
        fingerprint = f"{error.kind}:{call.key if call else _digest(self.turns[-1].text)}" if error else ""
        reason = self.streak.observe(error, fingerprint)
        return StreakExhausted(reason, index, error) if reason is not None and error is not None else None

    def settle(self, step: Step, outcome: DispatchResult) -> tuple[Step, Verdict | None]:
        """Replace a step that waited for approval with its outcome, once decided (its approval record keeps the id
        of the approval it waited for); and what it says of the run."""
        fields, seen = self._dispatch_fields(step.index, step.call, outcome)
        decided, asked = fields.get("approval"), step.approval
        if isinstance(decided, ApprovalRecord) and asked is not None:  # the decision keeps the approval it settled
            fields["approval"] = replace(decided, approval_id=decided.approval_id or asked.approval_id)
        settled = replace(step, **fields)
        counted = self._count(step.index, step.call, outcome.error)
        if not settled.pending:
            self.usage.steps += 1
        self.steps[step.index - 1] = settled
        self._open = [settled if s.index == step.index else s for s in self._open]
        return settled, seen or counted

    def close_turn(self) -> None:
        """Append the turn and its observations to the conversation, once no step waits for approval; and offer
        the schemas its steps loaded from the next request on."""
        if not self._open or any(s.pending for s in self._open):
            return
        turn, steps, self._open = self.turns[self._open[0].turn], self._open, []
        self._add_turn(turn, steps)
        if not self.offering.paging and (self.conversation.elided or any(_PAGER in s.observation for s in steps)):
            self.offering.offer_paging()  # an observation names a handle: paging it may serve from now on
        offer = self.offering.current()
        self.conversation.offer(offer.specs, offer.prefix_tokens)

    def _add_turn(self, turn: LLMResponse, steps: list[Step]) -> None:
        if self._native and all(s.call and s.call.id for s in steps):
            calls = tuple(s.call for s in steps if s.call)
            replies = [
                (Message(role="tool", content=self._shown(s), tool_call_id=s.call.id, tool_name=s.call.name), (s,))
                for s in steps
                if s.call
            ]
            self.conversation.add_turn(
                [(Message(role="assistant", content=turn.text, tool_calls=calls), None), *replies]
            )
            return
        blocks = [
            f"Observation (step {s.index}{', ' + s.call.name if s.call else ''}):\n{self._shown(s)}" for s in steps
        ]
        observed = tuple(s for s in steps if s.call is not None)
        self.conversation.add_turn(
            [
                (Message(role="assistant", content=turn.text), None),
                (Message(role="user", content="\n\n".join(blocks)), observed or None),
            ]
        )

    def _shown(self, step: Step) -> str:
        """The observation as it goes to the model: tool output fenced as data, kernel messages as they are."""
        fenced = step.error is None or step.error is ErrorKind.EXCEPTION
        return fence(step.observation, self.nonce) if fenced and step.call is not None else step.observation

    def dispatched_calls(self) -> Counter[str]:
        """Calls per tool that reached dispatch's rate limit, from the steps so far (for a resumed run)."""
        refused_before = {
            ErrorKind.FORMAT,
            ErrorKind.UNKNOWN_TOOL,
            ErrorKind.BAD_ARGS,
            ErrorKind.RATE_LIMITED,
            ErrorKind.LOOP_GUARD,
            ErrorKind.NOT_RUN,
        }
        return Counter(s.call.name for s in self.steps if s.call and not s.pending and s.error not in refused_before)

    def start(self, task: str) -> None:
        """Open the conversation with the task."""
        self.conversation.add(Message(role="user", content=render_task(task, self.nonce, self.task_data)))

    def restore(self, trace: RunResult) -> None:
        """Rebuild the state from a trace: the same steps replayed into the same conversation."""
        self.start(trace.task)
        self.usage = replace(trace.usage)
        by_turn: dict[int, list[Step]] = {}
        for step in trace.steps:
            by_turn.setdefault(step.turn, []).append(step)
        guided: dict[int, list[Guidance]] = {}
        for taken in trace.guidance:
            guided.setdefault(taken.turn, []).append(taken.guidance)
        for turn_index, response in enumerate(trace.turns):
            for guidance in guided.pop(turn_index, []):
                self.take_guidance(guidance)
            steps = by_turn.get(turn_index, [])
            first = steps[0] if steps else None
            native = bool(response.tool_calls) and all(s.call is not None and s.call.id for s in steps)
            self.begin_turn(
                response,
                native=native,
                prompt_tokens=first.prompt_tokens if first else 0,
                completion_tokens=first.completion_tokens if first else 0,
            )
            for step in steps:
                if step.call is not None and not step.pending:
                    full = trace.outputs.get(handle_for(step.index), step.observation)
                    self.store.keep(handle_for(step.index), full)
                    self.guard.record(step.call, step.index, full, ok=step.ok)
                    if step.call.name == LOAD_TOOLS_TOOL and step.ok:
                        self.offering.replay(step.call.args)
                self.steps.append(step)
                self._open.append(step)
            self.close_turn()
        for later in sorted(guided):  # taken, then the run stopped before the model's next turn
            for guidance in guided[later]:
                self.take_guidance(guidance)
        self.answer, self.partial_answer, self.detail = trace.answer, trace.partial_answer, trace.detail

    def result(self) -> RunResult:
        """The trace of the run so far; before the run stops it is a checkpoint (`interrupted`)."""
        outputs = {h: text for h, text in self.store.items() if self._view_of(h) != text}
        return RunResult(
            run_id=self.run_id,
            task=self.task,
            task_data=self.task_data,
            model=self.model,
            started_at=self.started_at,
            stop_reason=self.stop or StopReason.INTERRUPTED,
            answer=self.answer,
            findings=self.findings,
            evidence_check=self.evidence_check,
            finished_by=self.finished_by,
            partial_answer=self.partial_answer,
            detail=self.detail,
            steps=list(self.steps),
            turns=list(self.turns),
            offered=list(self.offered),
            usage=copy.copy(self.usage),  # `replace` is several times slower
            outputs=outputs,
            nonce=self.nonce,
            guidance=list(self.guidance),
        )

    def _view_of(self, handle: str) -> str | None:
        index = int(handle[1:])
        return self.steps[index - 1].observation if 0 < index <= len(self.steps) else None


def _approval_record(decision: Approved | Denied | Deferred | None) -> ApprovalRecord | None:
    match decision:
        case None:
            return None
        case Approved():
            return ApprovalRecord(decision="approved", by=decision.by, at=decision.at, reason=decision.note)
        case Denied():
            return ApprovalRecord(decision="denied", by=decision.by, at=decision.at, reason=decision.reason)
        case Deferred():
            return ApprovalRecord(decision="pending", approval_id=decision.approval_id)


def elided_stub(steps: tuple[Step, ...]) -> str:
    """What stays in view of elided observations: each step's first line and its handle."""
    return "\n".join(
        f"[step {s.index} output elided from view to save context; it began: "
        f"{s.observation.strip().split(chr(10), 1)[0][:160]!r}. "
        f'read_output(handle="{handle_for(s.index)}") shows it in full]'
        for s in steps
    )


def _digest(text: str) -> str:
    return hashlib.sha256(text.strip().encode()).hexdigest()[:16]
