"""Investigations in Slack threads: a mention starts a run, each step becomes a reply, Stop ends it.

The service owns this process's running investigations (admission, cancellation, shutdown, resuming
saved runs); every run is recorded in the run store, so a restart or another replica can continue it.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any, assert_never

import structlog
from slack_sdk.web.async_client import AsyncWebClient

from bot.access.policy import AccessPolicy, Admitted, Refused, RunRequest, author_teams, requester_of
from bot.approvals.broker import ApprovalBroker
from bot.audit.trail import AuditKind, AuditTrail
from bot.runs.active import ActiveRun, RunObserver, stopped_by
from bot.runs.drafts import DraftService, draft_asked
from bot.runs.durable import DurableRun, RunTakenOver
from bot.runs.memory import RunMemory
from bot.runs.saved import earlier_work, readable_trace
from bot.runs.stopping import StopAnswer, StopPolicy
from bot.runs.topics import STOPS_TOPIC
from bot.runs.voice import ServiceVoice
from bot.slack.mrkdwn import user_ref
from bot.slack.outbox import Outbox
from bot.slack.refusals import refusal_text
from bot.slack.run_thread import RunThread, TraceLink
from bot.slack.updates import MessageUpdates
from bot.store.protocol import RunStore, StoreAtCapacityError, StoreConflictError, StoreUnavailableError
from bot.store.records import RunRecord, RunStatus, utc_now
from kernel import (
    DEFAULT_REDACTOR,
    Agent,
    ConfirmHook,
    Redactor,
    RunControl,
    RunResult,
    StopReason,
    new_run_id,
)
from opsagent_tools.runbooks import RunbookLibrary, runbooks_note

log = structlog.get_logger("opsagent.investigations")

MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
DEDUPE_TTL_S = 3600.0
"""How long event ids and message keys are remembered (Slack retries within about 6 minutes)."""
STOP_WORDS = frozenset({"stop", "cancel", "abort"})
STILL_RUNNING = "An investigation is still running in this thread. Wait for its answer, or say “@opsagent stop” first."
ALREADY_ENDED = "That investigation has already ended."
ASK_FOR_A_TASK = "Tell me what to investigate, e.g. “@opsagent order-service 5xx jumped to 12%, find the root cause”."

AgentFactory = Callable[[ConfirmHook], Agent]
"""Builds the agent for one run around that run's confirm hook (the broker's, bound to the thread)."""


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
        access: AccessPolicy,
        store: RunStore,
        replica: str,
        lease_ttl_s: float,
        observers: Sequence[RunObserver] = (),
        trace_link: TraceLink | None = None,
        redactor: Redactor = DEFAULT_REDACTOR,
        runbooks: RunbookLibrary | None = None,
        memory: RunMemory | None = None,
        drafts: DraftService | None = None,
    ) -> None:
        self._agent_factory = agent_factory
        self._runbooks = runbooks
        self._memory = memory
        """Remembers each run as it finishes (the memory of past incidents); None: `[knowledge] memory = false`."""
        self._drafts = drafts
        """Makes the postmortem and status drafts asked for in a thread (“@opsagent postmortem”)."""
        self._broker = broker
        self._access = access
        self._store = store
        self._audit = AuditTrail(store)
        self.replica = replica
        self.lease_ttl_s = lease_ttl_s
        self._observers = (access, *observers)
        self._stoppers = StopPolicy(broker, access.settings.who_may_stop, self._audit)
        self._voice = ServiceVoice(
            client=client,
            outbox=outbox,
            updates=updates,
            store=store,
            approvers=broker.approvers(),
            trace_link=trace_link,
        )
        self._redactor = redactor
        """Masks secrets in a task where it enters, so the model, trace, store, audit and header all read it masked."""
        self._runs: dict[str, ActiveRun] = {}
        self._accepting = True

    @property
    def active(self) -> dict[str, ActiveRun]:
        """Runs in flight in this process, by run id."""
        return dict(self._runs)

    @property
    def has_room(self) -> bool:
        """Whether this process may take over one more run: it never carries more than `[access]
        max_concurrent_runs`, the cap of all replicas together (new runs are capped by the store's slots)."""
        return self._accepting and len(self._runs) < self._access.settings.max_concurrent_runs

    async def on_mention(self, *, event_id: str, event: dict[str, Any]) -> ActiveRun | None:
        """Handle an `app_mention`: start a run, or stop the thread's run; duplicates (on any replica) are dropped,
        and so are mentions by bots (`[access] allowed_bots` names the exceptions), without a word: no bot loops."""
        channel, ts = event["channel"], event["ts"]
        if not await self._first_time(f"event:{event_id}") or not await self._first_time(f"message:{channel}:{ts}"):
            log.info("duplicate_event_dropped", event_id=event_id, channel=channel, ts=ts)
            return None
        user = requester_of(event, self._access.settings.allowed_bots)
        if user is None:
            log.warning("bot_mention_refused", bot_id=str(event.get("bot_id") or ""), channel=channel, ts=ts)
            return None
        thread_ts = event.get("thread_ts") or ts
        text = " ".join(MENTION.sub(" ", event.get("text", "")).split())
        latest = await self._store.run_in_thread(channel, thread_ts)
        running = latest if latest is not None and latest.status is not RunStatus.FINISHED else None
        if text.lower() in STOP_WORDS:
            if running is None:
                self._voice.reply(channel, thread_ts, "No investigation is running in this thread.")
                return None
            answer = await self.request_stop(running.run_id, user=user, teams=author_teams(event))
            if not answer.stopped:
                self._voice.tell(channel, thread_ts, user, answer.text)
            return None
        if self._drafts is not None and (draft := draft_asked(text)) is not None:
            self._drafts.asked(draft, channel=channel, thread_ts=thread_ts, latest=latest)
            return None
        if running is not None:
            self._voice.reply(channel, thread_ts, STILL_RUNNING)
            return None
        if not text:
            self._voice.reply(channel, thread_ts, ASK_FOR_A_TASK)
            return None
        return await self.start(
            channel=channel,
            thread_ts=thread_ts,
            text=text,
            data=earlier_work(latest),
            requested_by=user,
            mention_ts=ts,
            teams=author_teams(event),
        )

    async def start(
        self,
        *,
        channel: str,
        thread_ts: str,
        text: str,
        requested_by: str,
        data: str = "",
        asked: str | None = None,
        mention_ts: str | None = None,
        teams: tuple[str, ...] | None = None,
        labels: Sequence[Mapping[str, str]] = (),
    ) -> ActiveRun | None:
        """Start investigating `text` in a thread, if the access policy admits it, the concurrency cap has a slot
        and the bot is not shutting down; a refusal is said to the person (ephemeral), or in the thread for an alert.

        `text` is the task with a person's authority (the mention); `data` is what it comes with from elsewhere (an
        alert's details, an earlier answer), which the model sees fenced as data. `asked` is what the header shows
        (default `text`); `mention_ts` is the message that asked, which gets the 👀/✅/❌ reactions (alerts have
        none). `teams`: the asking person's workspaces (`author_teams`); None for a run not asked by a person in
        Slack (an alert), which skips the workspace and per-user rules.
        All three texts are redacted here, where every task enters: a secret typed in a mention goes no further.
        The runbooks whose services or alert names `text` names or an alert's `labels` carry are named to the
        model in the data.
        """
        text, asked, data = (self._redactor.redact(part) for part in (text, asked or text, data))
        if not self._accepting:
            self._voice.reply(channel, thread_ts, "Not started: I am shutting down. Try again shortly.")
            return None
        request = RunRequest(user=requested_by, channel=channel, teams=teams)
        match admitted := self._access.admit(request):
            case Refused():
                self._voice.refuse(request, thread_ts, refusal_text(admitted, now=self._access.now()))
                return None
            case Admitted():
                pass
            case _:
                assert_never(admitted)
        data = "\n\n".join(part for part in (data, await runbooks_note(self._runbooks, text, labels)) if part)
        now = utc_now()
        record = RunRecord(
            run_id=new_run_id(),
            channel=channel,
            thread_ts=thread_ts,
            requested_by=requested_by,
            task=text,
            task_data=data,
            alert_labels=tuple(dict(alert) for alert in labels),
            mention_ts=mention_ts or "",
            status=RunStatus.RUNNING,
            owner=self.replica,
            lease_until=now + timedelta(seconds=self.lease_ttl_s),
            created_at=now,
            updated_at=now,
        )
        try:  # the store holds the concurrency cap: one slot per unfinished run, across replicas, atomically
            await self._store.create_run(record, slots=self._access.settings.max_concurrent_runs)
        except StoreAtCapacityError:
            refused = self._access.at_capacity(admitted)
            self._voice.refuse(request, thread_ts, refusal_text(refused, now=self._access.now()))
            return None
        except StoreUnavailableError as exc:  # not started, not lost in silence: the person can ask again
            self._access.withdraw(admitted)
            log.error("run_store_unavailable", error=str(exc)[:300])
            self._voice.reply(
                channel, thread_ts, "Not started: OpsAgent cannot reach its run store. Ask again shortly."
            )
            return None
        except StoreConflictError:  # another mention in this thread, maybe on another replica, got there first
            self._access.withdraw(admitted)
            self._voice.reply(channel, thread_ts, STILL_RUNNING)
            return None
        return self._launch(record, asked=asked)

    def resume(self, record: RunRecord) -> ActiveRun | None:
        """Continue a saved run whose lease this replica has just taken (after a restart or a takeover)."""
        if not self._accepting or record.run_id in self._runs:
            return None
        return self._launch(record, asked=None)

    async def request_stop(self, run_id: str, *, user: str, teams: tuple[str, ...]) -> StopAnswer:
        """A person's Stop (the button, or “@opsagent stop”): the run stops if the stop policy lets them
        (`[access] who_may_stop`), else nothing changes and the refusal is audited; what to tell them privately."""
        record = await self._store.get_run(run_id)
        if record is None or record.status is RunStatus.FINISHED:
            return StopAnswer(stopped=False, text=ALREADY_ENDED)
        refused = await self._stoppers.refused(record, user=user, teams=teams)
        return refused or StopAnswer(stopped=True, text=await self.stop(run_id, user))

    async def stop(self, run_id: str, by: str) -> str:
        """Stop a run wherever it runs and void its pending approvals, for `by` (a user id the stop policy let
        through, or `alertmanager` for a resolved alert); the words to show whoever asked."""
        run = self._runs.get(run_id)
        record = await self._store.get_run(run_id)
        if record is None or record.status is RunStatus.FINISHED:
            return ALREADY_ENDED
        if run is not None:  # cancel before voiding: a woken run must find itself cancelled, not ask the model again
            self.cancel(run_id, by=by)
        await self._store.request_stop(run_id, by)  # durable: whoever carries the run reads it
        await self._audit.record(AuditKind.STOP_REQUESTED, run_id=run_id, actor=by)
        self._voice.reply(
            record.channel,
            record.thread_ts,
            f"⏹ {user_ref(by)} stopped this investigation; pending approvals are void.",
        )
        await self._broker.void_run(run_id, "the run was stopped", by=by)
        log.info("run_stop_requested", run_id=run_id, user=by)
        if run is None and record.owner and record.lease_until is not None and record.lease_until > utc_now():
            await self._store.notify(STOPS_TOPIC, json.dumps({"run_id": run_id, "by": by}))
        elif run is None and run_id not in self._runs:
            detail = f"{stopped_by(by)} while no replica was running it"
            await self._end_for_good(run_id, StopReason.CANCELLED, detail, stopped=by)
        return "Stopping the investigation."

    async def _end_for_good(
        self, run_id: str, reason: StopReason, detail: str, *, stopped: str = "", thread: RunThread | None = None
    ) -> None:
        """End a saved run with `reason` (and `detail` saying why) so no one resumes it, and say so in its thread:
        a Stop for a run nobody carries (its replica died; `stopped` says by whom), or a run that failed inside
        OpsAgent (`internal_error`). The trace is the last one saved: every step before the failing one."""
        record = await self._store.get_run(run_id)
        if record is None or not await self._store.acquire_lease(run_id, self.replica, self.lease_ttl_s):
            return  # a replica has just taken it over: it will see the voided approvals and the stop is lost
        await self._broker.void_run(run_id, detail)
        saved = readable_trace(record)
        ended = (
            saved.model_copy(update={"stop_reason": reason, "detail": detail})
            if saved is not None
            else RunResult(
                run_id=record.run_id, task=record.task, task_data=record.task_data, stop_reason=reason, detail=detail
            )
        )
        await self._store.checkpoint(
            record.run_id, status=RunStatus.FINISHED, trace_json=ended.to_json(indent=None), owner=self.replica
        )
        await self._release(record.run_id)
        await self._audit.record(AuditKind.RUN_FINISHED, run_id=record.run_id, stop_reason=str(reason), ok=False)
        (thread or self._voice.thread(record)).finished(ended, stopped_by=stopped)
        if self._memory is not None:
            await self._memory.remember_finished(record.run_id)

    def cancel(self, run_id: str, *, by: str) -> None:
        """Cancel a run of this process for a Stop by `by` (here, or relayed from another replica); it ends
        `cancelled`."""
        run = self._runs.get(run_id)
        if run is not None:
            run.stop(by)

    def abandon(self, run_id: str) -> None:
        """Drop a run another replica has taken over (this one lost its lease): no word in the thread."""
        run = self._runs.get(run_id)
        if run is not None and run.task is not None:
            run.taken_over = True
            run.task.cancel()

    async def shutdown(self, *, timeout_s: float = 10.0) -> None:
        """Stop taking work; the runs in flight are saved and say so in their threads, for the next process."""
        self._accepting = False
        tasks = [run.task for run in self._runs.values() if run.task is not None]
        for task in tasks:
            task.cancel()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        if tasks:
            await asyncio.wait(tasks, timeout=timeout_s)
        await self._voice.drain(deadline)

    def _launch(self, record: RunRecord, *, asked: str | None) -> ActiveRun:
        run = ActiveRun(record.run_id, record.channel, record.thread_ts, record.requested_by, RunControl())
        self._runs[run.run_id] = run
        run.task = asyncio.create_task(self._investigate(run, record, asked), name=f"run-{run.run_id}")
        return run

    async def _investigate(self, run: ActiveRun, record: RunRecord, asked: str | None) -> None:
        """Carry one run to its end (`asked` set: a new run; None: resuming `record`'s checkpoint)."""
        # Every log line of this task (dispatch, approvals, Slack calls) carries the run and its thread.
        structlog.contextvars.bind_contextvars(
            run_id=run.run_id, channel=run.channel, thread_ts=run.thread_ts, user=run.requested_by
        )
        thread = self._voice.thread(record, asked)
        if record.stop_requested_by:  # stopped while no process carried it, or before its last save
            run.stop(record.stop_requested_by)
        try:
            checkpoint = RunResult.from_json(record.trace_json) if record.trace_json else None
            if asked is not None:
                await self._audit.record(AuditKind.RUN_STARTED, run_id=run.run_id, actor=run.requested_by, task=asked)
                await thread.opened()
            else:
                await self._audit.record(AuditKind.RUN_RESUMED, run_id=run.run_id, replica=self.replica)
                await thread.resumed(checkpoint)
            hook = self._broker.confirm_hook(run.run_id, run.channel, run.thread_ts, run.requested_by)
            journey = DurableRun(
                run,
                self._agent_factory(hook),
                self._store,
                self._broker,
                thread,
                self._audit,
                self._observers,
                self.replica,
            )
            result = await journey.carry(record.task, record.task_data, checkpoint, resumed=asked is None)
            thread.finished(result, stopped_by=run.stopped_by)
            await self._audit.record(
                AuditKind.RUN_FINISHED, run_id=run.run_id, stop_reason=str(result.stop_reason), ok=result.ok
            )
            log.info("run_finished", ok=result.ok, stop_reason=str(result.stop_reason), steps=result.usage.steps)
            if self._memory is not None:
                await self._memory.remember_finished(run.run_id)
        except asyncio.CancelledError:
            if run.taken_over:
                log.warning("run_taken_over", replica=self.replica)
                return
            try:
                await self._interrupted(run, thread)
            except Exception as exc:  # the store is down too: the lease runs out and the run resumes anyway
                log.warning("interruption_not_recorded", error=repr(exc)[:300])
            raise
        except RunTakenOver as exc:
            log.warning("run_taken_over", replica=self.replica, error=str(exc)[:200])
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
        finally:
            self._runs.pop(run.run_id, None)
            await self._release(run.run_id)

    async def _interrupted(self, run: ActiveRun, thread: RunThread) -> None:
        """The process is stopping: the last checkpoint stands; the thread is told the run will continue."""
        saved = await self._store.get_run(run.run_id)
        trace = readable_trace(saved) if saved is not None else None
        steps = len(trace.steps) if trace is not None else 0
        thread.interrupted(steps)
        await self._audit.record(AuditKind.RUN_INTERRUPTED, run_id=run.run_id, replica=self.replica, steps=steps)

    async def _release(self, run_id: str) -> None:
        try:
            await self._store.release_lease(run_id, self.replica)
        except StoreUnavailableError as exc:  # the lease expires on its own; another replica then resumes the run
            log.warning("lease_release_failed", run_id=run_id, error=str(exc)[:200])

    async def _first_time(self, key: str) -> bool:
        """Whether no replica has seen this key recently (Slack's retries and double deliveries)."""
        return await self._store.remember(key, DEDUPE_TTL_S)
