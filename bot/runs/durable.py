"""Carrying one run to its end through pauses and restarts: the trace in the store is the checkpoint.

After every step the run's trace is saved (fenced by this replica's lease); a pause for approval is
saved, then continued with the broker's decision. Observers see one run: one start, its steps, one end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import assert_never

import structlog

from bot.approvals.broker import ApprovalBroker
from bot.approvals.store import ApprovalState
from bot.audit.trail import AuditKind, AuditTrail
from bot.runs.active import ActionRan, ActiveRun, RunObserver
from bot.runs.surface import RunSurface
from bot.store.ports import RunRecords
from bot.store.protocol import LeaseLostError, StoreUnavailableError
from bot.store.records import RunStatus
from kernel import (
    Agent,
    Event,
    GuidanceTaken,
    RunFinished,
    RunResult,
    RunStarted,
    RunStream,
    Step,
    StepCompleted,
    StepStarted,
    StopReason,
)

log = structlog.get_logger("opsagent.investigations")

MAX_CHECKPOINT_WAIT_S = 5.0
"""The longest pause between two tries of a pause's or an end's checkpoint while the store is down."""


RESUMABLE = frozenset({StopReason.INTERRUPTED, StopReason.AWAITING_APPROVAL})
"""The stop reasons of a checkpoint that has more to do; any other means the run had ended when it was saved."""
LOST_APPROVAL_REASON = "asked before a restart that lost its run's progress; the agent asks again if it still needs it"


class RunTakenOver(Exception):
    """Another replica holds the run's lease now (this one stalled past it): stop here without a word."""


@dataclass
class DurableRun:
    """One run's journey: checkpoints in the store, pauses for approval, events to the thread and observers."""

    run: ActiveRun
    agent: Agent
    runs: RunRecords
    broker: ApprovalBroker
    thread: RunSurface
    audit: AuditTrail
    observers: Sequence[RunObserver]
    replica: str
    saved: Callable[[str], Awaitable[None]] | None = None
    """Told the run's id after each checkpoint lands (announced on the progress topic: API streams wake on it); must
    not raise."""
    action_ran: ActionRan | None = None
    """Told when an approved side effect succeeds (its checks are scheduled); None: nobody checks actions."""
    _approvals: dict[int, str] = field(default_factory=dict)
    """The approval id of each step that waited for one (a decided step's trace no longer names it)."""

    async def carry(self, task: str, data: str, checkpoint: RunResult | None, *, resumed: bool) -> RunResult:
        """Run a new run from the start (`task` and the `data` it came with), or a `resumed` one from its
        checkpoint (None: it had saved no step), until it ends; returns its trace."""
        control = self.run.control
        if resumed:
            await self._void_lost_approvals(checkpoint)
        if checkpoint is None:
            stream = self.agent.events(task, data=data, control=control, run_id=self.run.run_id)
            result = await self._stretch(stream, first=True)
        elif checkpoint.pending_steps():  # paused, or saved between asking for an approval and pausing
            self._notify(RunStarted(run_id=self.run.run_id, task=checkpoint.task, resumed=True))
            result = checkpoint
        elif checkpoint.stop_reason not in RESUMABLE:  # it had ended (an answer, a Stop) before it was saved as such
            result = checkpoint
        else:
            result = await self._stretch(self.agent.events_from(checkpoint, control=control), first=True)
        while result.pending_steps():
            # Its approval message is posted: a person may click at once, and the click waits for this save.
            await self._save(RunStatus.AWAITING_APPROVAL, result, urgent=True)
            waiting = {step.index: step.approval.approval_id for step in result.pending_steps() if step.approval}
            self._approvals.update(waiting)
            ids = list(waiting.values())
            decisions = {approval_id: await self.broker.decision(approval_id) for approval_id in ids}
            await self._stop_if_voided(ids)
            # A fenced write before acting on the decisions: a replica that lost the run must not act for it.
            await self._save(RunStatus.RUNNING, result, urgent=True)  # the approver waits for the action
            result = await self._stretch(self.agent.events_from(result, decisions=decisions, control=control))
        await self._save(RunStatus.FINISHED, result)
        return result

    async def _void_lost_approvals(self, checkpoint: RunResult | None) -> None:
        """Approvals asked after the checkpoint was taken (the process died in between) are asked again if
        the model still wants the action: their buttons must not approve anything any more."""
        pending = checkpoint.pending_steps() if checkpoint is not None else []
        keep = frozenset(step.approval.approval_id for step in pending if step.approval is not None)
        await self.broker.void_run(self.run.run_id, LOST_APPROVAL_REASON, keep=keep)

    async def _stop_if_voided(self, approval_ids: list[str]) -> None:
        """A voided approval means the run was stopped (maybe on another replica, whose relayed Stop may come
        later): the run must end cancelled rather than ask the model again."""
        for approval_id in approval_ids:
            approval = await self.broker.get(approval_id)
            if approval is not None and approval.state is ApprovalState.VOIDED:
                record = await self.runs.get_run(self.run.run_id)
                self.run.stop((record.stop_requested_by if record else "") or "someone")
                return

    async def _stretch(self, stream: RunStream, *, first: bool = False) -> RunResult:
        """Follow one stretch of the run (until it ends or pauses), checkpointing after every step."""
        async for event in stream:
            match event:
                case RunStarted():
                    if first:
                        self._notify(event)
                case GuidanceTaken(taken=taken):
                    self._notify(event)
                    self.thread.guidance_taken(taken)
                case StepStarted(index=index, call=call, together=together):
                    self._notify(event)
                    self.thread.step_started(index, call, together=together)
                case StepCompleted(step=step):
                    self._notify(event)
                    approval_ts = await self._approval_message(step)
                    self.thread.step(step, approval_ts=approval_ts)
                    if self.action_ran is not None and _approved_and_done(step):
                        await self.action_ran(self.run.run_id, step, approval_ts)
                    await self.audit.record(
                        AuditKind.TOOL_CALL,
                        run_id=self.run.run_id,
                        actor=self.run.requested_by,
                        step=step.index,
                        tool=step.call.name if step.call else "",
                        args_hash=step.call.args_hash() if step.call else "",
                        error=str(step.error or ""),
                        approval=step.approval.decision if step.approval else "",
                    )
                    await self._save(RunStatus.RUNNING, stream.snapshot())
                case RunFinished(result=result):
                    if result.stop_reason is not StopReason.AWAITING_APPROVAL:
                        self._notify(event)
                    return result
                case _:
                    assert_never(event)
        raise RuntimeError(f"run {self.run.run_id} ended without a RunFinished event")  # the kernel always finishes

    async def _approval_message(self, step: Step) -> str:
        """The approval message of a decided side-effect step (it becomes the step's one line); "" for any other."""
        approval_id = self._approvals.get(step.index, "")
        if step.approval is None or step.pending or not approval_id:
            return ""
        try:
            approval = await self.broker.get(approval_id)
        except StoreUnavailableError as exc:  # the step is then posted as a reply of its own
            log.warning("approval_lookup_failed", run_id=self.run.run_id, error=str(exc)[:200])
            return ""
        return approval.message_ts if approval is not None else ""

    async def _save(self, status: RunStatus, trace: RunResult, *, urgent: bool = False) -> None:
        """Checkpoint the run (`urgent`: ahead of routine writes, when a person waits on what the run does next). A
        store that is down costs a step's checkpoint, not the run (the next one retries); a pause or the end is
        retried until the store takes it, since a run the store still thinks is running would be resumed and end a
        second time, and a thread would read as running."""
        wait, trace_json = 0.5, trace.to_json(indent=None)
        while True:
            try:
                stopper = await self.runs.checkpoint(
                    self.run.run_id, status=status, trace_json=trace_json, owner=self.replica, urgent=urgent
                )
                if stopper:  # a Stop that landed on another replica, or whose relay was lost, ends the run here
                    self.run.stop(stopper)
                if self.saved is not None:
                    await self.saved(self.run.run_id)
                return
            except LeaseLostError as exc:
                raise RunTakenOver(str(exc)) from exc
            except StoreUnavailableError as exc:
                if status is RunStatus.RUNNING:
                    log.warning("checkpoint_failed", run_id=self.run.run_id, status=str(status), error=str(exc)[:300])
                    return
                log.warning("checkpoint_retrying", run_id=self.run.run_id, status=str(status), error=str(exc)[:300])
            await asyncio.sleep(wait)
            wait = min(2 * wait, MAX_CHECKPOINT_WAIT_S)

    def _notify(self, event: Event) -> None:
        for observer in self.observers:
            try:
                observer.observe(self.run, event)
            except Exception:  # an observer's bug must not end the run or silence the thread
                log.exception("observer_failed", observer=type(observer).__name__)


def _approved_and_done(step: Step) -> bool:
    """A side effect a person approved that succeeded (the action webhook's 2xx, an MCP tool's success)."""
    return step.approval is not None and step.approval.decision == "approved" and step.ok and step.call is not None
