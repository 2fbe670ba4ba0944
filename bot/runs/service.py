"""Investigations in Slack threads: an admitted request starts a run, each step becomes a reply, Stop ends it.

The service owns this process's running investigations (starting, cancellation, shutdown, resuming saved runs);
every run is recorded in the run store, so a restart or another replica can continue it. Who may ask is the
gate's to say (`bot.gate`): the service takes only admitted requests.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta

import structlog
from slack_sdk.web.async_client import AsyncWebClient

from bot.access.askers import requester
from bot.access.refusals import AccessRefused
from bot.approvals.broker import ApprovalBroker
from bot.audit.trail import AuditKind, AuditTrail
from bot.gate.gate import Admitted, Gate
from bot.gate.requests import Investigate, StopRun
from bot.runs.active import ActionRan, ActiveRun, RunObserver, stopped_by
from bot.runs.durable import DurableRun, RunTakenOver
from bot.runs.guidance import RunGuidance
from bot.runs.memory import RunMemory
from bot.runs.quiet import QuietRun, quiet_approvals
from bot.runs.saved import earlier_work, readable_trace
from bot.runs.supervisor import RunSupervisor
from bot.runs.surface import RunSurface
from bot.runs.topics import PROGRESS_TOPIC, STOPS_TOPIC
from bot.runs.voice import ServiceVoice
from bot.slack.outbox import Outbox
from bot.slack.refusals import refusal_text
from bot.slack.run_thread import TraceLink
from bot.slack.updates import MessageUpdates
from bot.store.ports import Dedupe, GuidanceLog, Leases, RunRecords, Topics
from bot.store.protocol import StoreAtCapacityError, StoreConflictError, StoreUnavailableError
from bot.store.records import RunRecord, RunStatus, utc_now
from bot.verdict import tool_steps
from bot.words import RUN_STOPPED_REASON
from kernel import Agent, ConfirmHook, RunResult, StopReason, new_run_id
from opsagent_tools.runbooks import RunbookLibrary, runbooks_note

log = structlog.get_logger("opsagent.investigations")

STILL_RUNNING = "An investigation is still running in this thread. Wait for its answer, or say “@opsagent stop” first."
SHUTTING_DOWN = "Not started: I am shutting down. Try again shortly."
STORE_DOWN = "Not started: OpsAgent cannot reach its run store. Ask again shortly."

AgentFactory = Callable[[ConfirmHook], Agent]
"""Builds the agent for one run around that run's confirm hook (the broker's, bound to the thread)."""


@dataclass(frozen=True, slots=True)
class NotStarted:
    """An admitted run that did not start, and why: `refused` by the concurrency cap, or `words` alone (shutting
    down, the run store unreachable, the thread's run still going). Already said where the run would have posted."""

    words: str
    refused: AccessRefused | None = None


class InvestigationService:
    """Starts, tracks, stops, saves and resumes investigations; one per mention or alert."""

    def __init__(
        self,
        *,
        agent_factory: AgentFactory,
        client: AsyncWebClient,
        outbox: Outbox,
        updates: MessageUpdates,
        broker: ApprovalBroker,
        gate: Gate,
        runs: RunRecords,
        leases: Leases,
        topics: Topics,
        guidance: GuidanceLog,
        dedupe: Dedupe,
        audit: AuditTrail,
        replica: str,
        lease_ttl_s: float,
        observers: Sequence[RunObserver] = (),
        trace_link: TraceLink | None = None,
        runbooks: RunbookLibrary | None = None,
        memory: RunMemory | None = None,
        broadcast_verdict: bool = False,
        workspace_url: str = "",
        quiet_approvals: str = "",
        action_ran: ActionRan | None = None,
    ) -> None:
        self._agent_factory = agent_factory
        self._outbox, self._updates, self._trace_link = outbox, updates, trace_link
        self._quiet_approvals = quiet_approvals
        """Where the approvals of runs posted in no channel go (`[api] approval_channel`); "" denies them."""
        self._action_ran = action_ran
        """Told when an approved side effect succeeds (its checks are scheduled); None: actions are not checked."""
        self._runbooks = runbooks
        self._memory = memory
        """Remembers each run as it finishes (the memory of past incidents); None: `[knowledge] memory = false`."""
        self._broker = broker
        self._gate = gate
        self._runs, self._leases, self._topics = runs, leases, topics
        self._audit = audit
        self.supervisor = RunSupervisor(
            leases=leases, replica=replica, lease_ttl_s=lease_ttl_s, max_runs=gate.settings.max_concurrent_runs
        )
        """The runs this process carries (their tasks and leases)."""
        self.guidance = RunGuidance(
            store=guidance,
            runs=runs,
            dedupe=dedupe,
            topics=topics,
            gate=gate,
            supervisor=self.supervisor,
            outbox=outbox,
            audit=audit,
        )
        """What people tell the runs while they run: kept, and given to the runs this process carries."""
        self._observers = tuple(observers)
        self._voice = ServiceVoice(
            client=client,
            outbox=outbox,
            updates=updates,
            runs=runs,
            approvers=broker.approvers(),
            trace_link=trace_link,
            broadcast_verdict=broadcast_verdict,
            workspace_url=workspace_url,
        )

    @property
    def active(self) -> dict[str, ActiveRun]:
        """Runs in flight in this process, by run id."""
        return self.supervisor.active

    async def start(self, admitted: Admitted[Investigate]) -> ActiveRun | NotStarted:
        """Start the investigation the gate admitted, if the concurrency cap has a slot and the bot is not shutting
        down; a refusal is said to the person (ephemeral), or in the thread for an alert or an API client, and
        returned. A request made in no channel (an API run without one) starts a run that posts nowhere.

        The task is a person's words (or an alert's fixed task), redacted at its door; what it comes with from
        elsewhere (an alert's details, the thread's earlier run) the model sees fenced as data, with the runbooks
        whose services or alert names the task or the alerts' labels name.
        """
        request = admitted.request
        channel, thread_ts = request.place.channel, request.place.thread_ts
        if not self.supervisor.accepting:
            self._gate.withdraw(admitted)
            self._voice.reply(channel, thread_ts, SHUTTING_DOWN)
            return NotStarted(SHUTTING_DOWN)
        noted = await runbooks_note(self._runbooks, request.task, request.labels)
        data = "\n\n".join(part for part in (request.data, earlier_work(request.earlier), noted) if part)
        now, run_id = utc_now(), new_run_id()
        record = RunRecord(
            run_id=run_id,
            channel=channel,
            thread_ts=thread_ts if channel else run_id,  # no thread: its own id keeps (channel, thread) unique
            requested_by=requester(request.asker),
            task=request.task,
            task_data=data,
            alert_labels=tuple(dict(alert) for alert in request.labels),
            mention_ts=request.place.message_ts,
            status=RunStatus.RUNNING,
            owner=self.supervisor.replica,
            lease_until=now + timedelta(seconds=self.supervisor.lease_ttl_s),
            created_at=now,
            updated_at=now,
        )
        try:  # the store holds the concurrency cap: one slot per unfinished run, across replicas, atomically
            await self._runs.create_run(record, slots=self._gate.settings.max_concurrent_runs)
        except StoreAtCapacityError:
            refused = await self._gate.at_capacity(admitted)
            text = refusal_text(refused, now=self._gate.now(), approvers=self._broker.approvers())
            self._voice.refuse(request.asker, request.place, text)
            return NotStarted(text, refused)
        except StoreUnavailableError as exc:  # not started, not lost in silence: the person can ask again
            self._gate.withdraw(admitted)
            log.error("run_store_unavailable", error=str(exc)[:300])
            self._voice.reply(channel, thread_ts, STORE_DOWN)
            return NotStarted(STORE_DOWN)
        except StoreConflictError:  # another mention in this thread, maybe on another replica, got there first
            self._gate.withdraw(admitted)
            self._voice.reply(channel, thread_ts, STILL_RUNNING)
            return NotStarted(STILL_RUNNING)
        return self._launch(record, asked=request.asked or request.task)

    def resume(self, record: RunRecord) -> ActiveRun | None:
        """Continue a saved run whose lease this replica has just taken (after a restart or a takeover)."""
        if not self.supervisor.accepting or record.run_id in self.supervisor.active:
            return None
        return self._launch(record, asked=None)

    async def stop_requested(self, admitted: Admitted[StopRun]) -> bool:
        """A Stop the gate admitted (the button, “@opsagent stop”, a resolved alert): whether it stopped the run
        (False: it had ended meanwhile)."""
        return await self.stop(admitted.request.run.run_id, requester(admitted.request.asker))

    async def stop(self, run_id: str, by: str) -> bool:
        """Stop a run wherever it runs and void its pending approvals, for `by` (a user id the gate let through, or
        `alertmanager` for a resolved alert); whether it stopped it (False: it had ended already). Whoever carries
        the run says so at its end, once (`RunThread.finished`)."""
        run = self.supervisor.active.get(run_id)
        record = await self._runs.get_run(run_id)
        if record is None or record.status is RunStatus.FINISHED:
            return False
        if run is not None:  # cancel before voiding: a woken run must find itself cancelled, not ask the model again
            self.supervisor.cancel(run_id, by=by)
        await self._runs.request_stop(run_id, by)  # durable: whoever carries the run reads it
        await self._audit.record(AuditKind.STOP_REQUESTED, run_id=run_id, actor=by)
        # No word here: the run's end says, in one reply, who stopped it, what was known and what the Stop voided.
        await self._broker.void_run(run_id, RUN_STOPPED_REASON, by=by)
        log.info("run_stop_requested", run_id=run_id, user=by)
        if run is None and record.owner and record.lease_until is not None and record.lease_until > utc_now():
            await self._topics.notify(STOPS_TOPIC, json.dumps({"run_id": run_id, "by": by}))
        elif run is None and run_id not in self.supervisor.active:
            detail = f"{stopped_by(by)} while no replica was running it"
            await self._end_for_good(run_id, StopReason.CANCELLED, detail, stopped=by)
        return True

    async def _end_for_good(
        self, run_id: str, reason: StopReason, detail: str, *, stopped: str = "", thread: RunSurface | None = None
    ) -> None:
        """End a saved run with `reason` (and `detail` saying why) so no one resumes it, and say so in its thread:
        a Stop for a run nobody carries (its replica died; `stopped` says by whom), or a run that failed inside
        OpsAgent (`internal_error`). The trace is the last one saved: every step before the failing one."""
        record = await self._runs.get_run(run_id)
        replica = self.supervisor.replica
        if record is None or not await self._leases.acquire_lease(run_id, replica, self.supervisor.lease_ttl_s):
            return  # a replica has just taken it over: it will see the voided approvals and the stop is lost
        if stopped:
            await self._broker.void_run(run_id, RUN_STOPPED_REASON, by=stopped)
        else:
            await self._broker.void_run(run_id, detail)
        saved = readable_trace(record)
        ended = (
            saved.model_copy(update={"stop_reason": reason, "detail": detail})
            if saved is not None
            else RunResult(
                run_id=record.run_id, task=record.task, task_data=record.task_data, stop_reason=reason, detail=detail
            )
        )
        await self._runs.checkpoint(
            record.run_id, status=RunStatus.FINISHED, trace_json=ended.to_json(indent=None), owner=replica
        )
        await self.supervisor.release(record.run_id)
        await self._progressed(record.run_id)
        await self._audit.record(AuditKind.RUN_FINISHED, run_id=record.run_id, stop_reason=str(reason), ok=False)
        (thread or self._presence(record, None)[0]).finished(ended, stopped_by=stopped)
        if self._memory is not None:
            await self._memory.remember_finished(record.run_id)

    async def shutdown(self, *, timeout_s: float = 10.0) -> None:
        """Stop taking work; the runs in flight are saved and say so in their threads, for the next process."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        await self.supervisor.shutdown(timeout_s=timeout_s)
        await self._voice.drain(deadline)

    async def _progressed(self, run_id: str) -> None:
        """A run's checkpoint moved on: announced to whoever follows it (the API's streams, on any replica). Never
        raises: the announcement is a wake-up call, and whoever follows the run re-reads the store on its own too."""
        try:
            await self._topics.notify(PROGRESS_TOPIC, run_id)
        except Exception as exc:
            log.warning("progress_announce_failed", run_id=run_id, error=repr(exc)[:200])

    def _launch(self, record: RunRecord, *, asked: str | None) -> ActiveRun:
        return self.supervisor.launch(record, lambda run: self._investigate(run, record, asked))

    def _presence(self, record: RunRecord, asked: str | None) -> tuple[RunSurface, ConfirmHook]:
        """Where a run shows itself and asks for approvals: its Slack thread; or, for a run posted in no channel,
        nowhere, its approvals going to the quiet approvals channel (denied without one)."""
        if record.channel:
            hook = self._broker.confirm_hook(record.run_id, record.channel, record.thread_ts, record.requested_by)
            return self._voice.thread(record, asked), hook
        trace_url = self._trace_link(record.run_id) if self._trace_link is not None else None
        channel = self._quiet_approvals
        quiet = QuietRun(run_id=record.run_id, updates=self._updates, approvals=channel, trace_url=trace_url)
        return quiet, quiet_approvals(self._broker, self._outbox, record, channel=channel, trace_url=trace_url)

    async def _investigate(self, run: ActiveRun, record: RunRecord, asked: str | None) -> None:
        """Carry one run to its end (`asked` set: a new run; None: resuming `record`'s checkpoint)."""
        # Every log line of this task (dispatch, approvals, Slack calls) carries the run and its thread.
        structlog.contextvars.bind_contextvars(
            run_id=run.run_id, channel=run.channel, thread_ts=run.thread_ts, user=run.requested_by
        )
        thread, hook = self._presence(record, asked)
        if record.stop_requested_by:  # stopped while no process carried it, or before its last save
            run.stop(record.stop_requested_by)
        try:
            checkpoint = RunResult.from_json(record.trace_json) if record.trace_json else None
            if asked is not None:
                await self._audit.record(AuditKind.RUN_STARTED, run_id=run.run_id, actor=run.requested_by, task=asked)
                await thread.opened()
            else:
                await self._audit.record(AuditKind.RUN_RESUMED, run_id=run.run_id, replica=self.supervisor.replica)
                await thread.resumed(checkpoint)
            await self.guidance.resumed(run, checkpoint)
            journey = DurableRun(
                run,
                self._agent_factory(hook),
                self._runs,
                self._broker,
                thread,
                self._audit,
                self._observers,
                self.supervisor.replica,
                saved=self._progressed,
                action_ran=self._action_ran,
            )
            result = await journey.carry(record.task, record.task_data, checkpoint, resumed=asked is None)
            thread.finished(result, stopped_by=run.stopped_by)
            await self.guidance.ended(record, result)
            await self._audit.record(
                AuditKind.RUN_FINISHED, run_id=run.run_id, stop_reason=str(result.stop_reason), ok=result.ok
            )
            log.info("run_finished", ok=result.ok, stop_reason=str(result.stop_reason), steps=tool_steps(result.steps))
            if self._memory is not None:
                await self._memory.remember_finished(run.run_id)
        except asyncio.CancelledError:
            if run.taken_over:
                log.warning("run_taken_over", replica=self.supervisor.replica)
                return
            try:
                await self._interrupted(run, thread)
            except Exception as exc:  # the store is down too: the lease runs out and the run resumes anyway
                log.warning("interruption_not_recorded", error=repr(exc)[:300])
            raise
        except RunTakenOver as exc:
            log.warning("run_taken_over", replica=self.supervisor.replica, error=str(exc)[:200])
        except StoreUnavailableError as exc:  # it must not go on unrecorded; its lease runs out, then it resumes
            log.error("run_store_unavailable", error=str(exc)[:300])
            thread.reply(
                "⏸ The investigation paused: OpsAgent cannot reach its run store. It continues from its last saved "
                "step when the store is back; the logs have details."
            )
        except Exception as exc:  # a bug of ours: end it for good (resuming would crash again) and say so
            log.exception("run_crashed")
            detail = f"the run failed inside OpsAgent ({type(exc).__name__}); the logs have details"
            try:
                await self._end_for_good(run.run_id, StopReason.INTERNAL_ERROR, detail, thread=thread)
            except Exception:  # the store is failing too: the reply is all that can be done
                log.exception("run_end_failed")
                thread.reply(
                    f"❌ The investigation failed inside OpsAgent ({type(exc).__name__}). The logs have details."
                )

    async def _interrupted(self, run: ActiveRun, thread: RunSurface) -> None:
        """The process is stopping: the last checkpoint stands; the thread is told the run will continue."""
        saved = await self._runs.get_run(run.run_id)
        trace = readable_trace(saved) if saved is not None else None
        steps = len(trace.steps) if trace is not None else 0
        thread.interrupted(steps)
        replica = self.supervisor.replica
        await self._audit.record(AuditKind.RUN_INTERRUPTED, run_id=run.run_id, replica=replica, steps=steps)
