"""Investigations in Slack threads: a mention starts a run, each step becomes a reply, Stop ends it.

The service owns the registry of running investigations (a cap, cancellation, drain on shutdown) and
turns the kernel's event stream into thread messages; the Bolt listeners only hand it work.
"""

from __future__ import annotations

import asyncio
import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, assert_never

import structlog
from slack_sdk.web.async_client import AsyncWebClient

from bot.access import AccessPolicy, Allowed, Refused, RunRequest, author_teams
from bot.approvals import ApprovalBroker
from bot.blocks import ephemeral, final_message, run_header, step_message
from bot.mrkdwn import user_ref
from bot.outbox import Outbox
from kernel import (
    FINISH_TOOL,
    Agent,
    ConfirmHook,
    Event,
    RunControl,
    RunFinished,
    RunResult,
    RunStarted,
    RunStream,
    Step,
    StepCompleted,
    StepStarted,
    StopReason,
    new_run_id,
)

log = structlog.get_logger("opsagent.investigations")

MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
SEEN_LIMIT = 10_000
"""Event ids and message keys remembered for de-duplication (Slack retries within about 6 minutes)."""
STOP_WORDS = frozenset({"stop", "cancel", "abort"})
STATUS_TEXT = "is investigating…"

AgentFactory = Callable[[ConfirmHook], Agent]
"""Builds the agent for one run around that run's confirm hook (the broker's, bound to the thread)."""
TraceLink = Callable[[str], str | None]
"""The URL of a run's trace page by run id (the trace viewer's signed link), or None for none."""


@dataclass
class ActiveRun:
    """One investigation in flight."""

    run_id: str
    channel: str
    thread_ts: str
    requested_by: str
    control: RunControl
    task: asyncio.Task[None] | None = None


class RunObserver(Protocol):
    """Something that follows every run's events besides the thread: metrics, tracing, the trace viewer."""

    def observe(self, run: ActiveRun, event: Event) -> None:
        """Take one event of `run`; must not block or raise (a failing observer is logged and skipped)."""
        ...


class InvestigationService:
    """Starts, tracks, stops and reports investigations; one per mention."""

    def __init__(
        self,
        *,
        agent_factory: AgentFactory,
        client: AsyncWebClient,
        outbox: Outbox,
        broker: ApprovalBroker,
        access: AccessPolicy,
        observers: Sequence[RunObserver] = (),
        trace_link: TraceLink | None = None,
    ) -> None:
        self._agent_factory = agent_factory
        self._trace_link = trace_link
        self._client = client
        self._outbox = outbox
        self._broker = broker
        self._access = access
        self._observers = (access, *observers)
        self._runs: dict[str, ActiveRun] = {}
        self._by_thread: dict[tuple[str, str], str] = {}
        self._last_result: dict[tuple[str, str], RunResult] = {}
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._accepting = True

    @property
    def active(self) -> dict[str, ActiveRun]:
        """Runs in flight, by run id."""
        return dict(self._runs)

    async def on_mention(self, *, event_id: str, event: dict[str, Any]) -> ActiveRun | None:
        """Handle an `app_mention`: start a run, or stop the thread's run; duplicates are dropped."""
        channel, ts, user = event["channel"], event["ts"], event.get("user", "")
        if self._already_seen(f"event:{event_id}") or self._already_seen(f"message:{channel}:{ts}"):
            log.info("duplicate_event_dropped", event_id=event_id, channel=channel, ts=ts)
            return None
        thread_ts = event.get("thread_ts") or ts
        text = " ".join(MENTION.sub(" ", event.get("text", "")).split())
        running = self._by_thread.get((channel, thread_ts))
        if text.lower() in STOP_WORDS:
            if running is not None:
                await self.stop(running, user)
            else:
                self._reply(channel, thread_ts, "No investigation is running in this thread.")
            return None
        if running is not None:
            self._reply(
                channel,
                thread_ts,
                "An investigation is still running in this thread. Wait for its answer, or say “@opsagent stop” first.",
            )
            return None
        if not text:
            self._reply(
                channel,
                thread_ts,
                "Tell me what to investigate, e.g. “@opsagent order-service 5xx jumped to 12%, find the root cause”.",
            )
            return None
        return self.start(
            channel=channel,
            thread_ts=thread_ts,
            text=text,
            requested_by=user,
            mention_ts=ts,
            teams=author_teams(event),
        )

    def start(
        self,
        *,
        channel: str,
        thread_ts: str,
        text: str,
        requested_by: str,
        mention_ts: str | None = None,
        teams: tuple[str, ...] | None = None,
    ) -> ActiveRun | None:
        """Start investigating `text` in a thread, if the access policy admits it and the bot is not shutting
        down; a refusal is said to the person (ephemeral), or in the thread for an alert.

        `mention_ts` is the message that asked, which gets the 👀/✅/❌ reactions; runs started by an alert have none.
        `teams`: the asking person's workspaces (`author_teams` of the event); None for a run not asked by a
        person in Slack (an alert), which skips the workspace and per-user rules.
        """
        if not self._accepting:
            self._reply(channel, thread_ts, "Not started: I am shutting down. Try again shortly.")
            return None
        request = RunRequest(user=requested_by, channel=channel, teams=teams)
        match decision := self._access.admit(request, in_flight=len(self._runs)):
            case Refused(message=message):
                self._refuse(request, thread_ts, message)
                return None
            case Allowed():
                pass
            case _:
                assert_never(decision)
        run = ActiveRun(
            run_id=new_run_id(), channel=channel, thread_ts=thread_ts, requested_by=requested_by, control=RunControl()
        )
        task = self._with_history(text, channel, thread_ts)
        self._runs[run.run_id] = run
        self._by_thread[(channel, thread_ts)] = run.run_id
        run.task = asyncio.create_task(
            self._investigate(run, text, task, mention_ts=mention_ts), name=f"run-{run.run_id}"
        )
        return run

    async def stop(self, run_id: str, user_id: str) -> str:
        """Cancel a run and void its pending approvals; the words to show the person who asked."""
        run = self._runs.get(run_id)
        if run is None:
            return "That investigation has already ended."
        run.control.cancel(f"stopped by {user_ref(user_id)}")
        self._reply(
            run.channel, run.thread_ts, f"⏹ {user_ref(user_id)} stopped this investigation; pending approvals are void."
        )
        await self._broker.void_run(run_id, "the run was stopped", by=user_id)
        log.info("run_stop_requested", run_id=run_id, user=user_id)
        return "Stopping the investigation."

    async def shutdown(self, *, timeout_s: float = 10.0) -> None:
        """Stop taking new work, cancel the runs in flight (they say so in their threads), wait for them."""
        self._accepting = False
        for run in list(self._runs.values()):
            run.control.cancel("the bot is shutting down")
            await self._broker.void_run(run.run_id, "the bot is shutting down")
        tasks = [run.task for run in self._runs.values() if run.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout_s)
        await asyncio.wait_for(self._outbox.close(), timeout=timeout_s)

    async def _investigate(self, run: ActiveRun, asked: str, task: str, *, mention_ts: str | None) -> None:
        channel, thread = run.channel, run.thread_ts
        # Every log line of this task (dispatch, approvals, Slack calls) carries the run and its thread.
        structlog.contextvars.bind_contextvars(
            run_id=run.run_id, channel=channel, thread_ts=thread, user=run.requested_by
        )
        try:
            if mention_ts:
                self._outbox.enqueue("reactions_add", channel, name="eyes", timestamp=mention_ts)
            header = run_header(run.run_id, asked, run.requested_by)
            self._outbox.enqueue("chat_postMessage", channel, thread_ts=thread, text=header.text, blocks=header.blocks)
            await self._set_status(channel, thread, STATUS_TEXT)
            agent = self._agent_factory(self._broker.confirm_hook(run.run_id, channel, thread, run.requested_by))
            result = await self._follow(run, agent.events(task, control=run.control, run_id=run.run_id))
            while result.stop_reason is StopReason.AWAITING_APPROVAL:
                decisions = {
                    step.approval.approval_id: await self._broker.decision(step.approval.approval_id)
                    for step in result.pending_steps()
                    if step.approval is not None
                }
                result = await self._follow(run, agent.events_from(result, decisions=decisions, control=run.control))
            await self._report(run, result, mention_ts)
        except Exception as exc:  # a bug of ours: say so in the thread rather than go silent
            log.exception("run_crashed", run_id=run.run_id)
            self._reply(
                channel,
                thread,
                f"❌ The investigation failed inside OpsAgent ({type(exc).__name__}). The logs have details.",
            )
        finally:
            self._runs.pop(run.run_id, None)
            if self._by_thread.get((channel, thread)) == run.run_id:
                del self._by_thread[(channel, thread)]

    async def _follow(self, run: ActiveRun, stream: RunStream) -> RunResult:
        """Post each step of one stretch of the run in its thread; the stretch ends finished or paused."""
        async for event in stream:
            self._notify_observers(run, event)
            match event:
                case StepCompleted(step=step) if _is_the_answer(step):
                    pass  # the final message carries it
                case StepCompleted(step=step):
                    message = step_message(step)
                    self._outbox.enqueue(
                        "chat_postMessage",
                        run.channel,
                        thread_ts=run.thread_ts,
                        text=message.text,
                        blocks=message.blocks,
                        merge_key=f"steps:{run.run_id}",
                    )
                case RunFinished(result=result):
                    return result
                case RunStarted() | StepStarted():
                    pass
                case _:
                    assert_never(event)
        raise RuntimeError(f"run {run.run_id} ended without a RunFinished event")  # the kernel always finishes

    def _notify_observers(self, run: ActiveRun, event: Event) -> None:
        for observer in self._observers:
            try:
                observer.observe(run, event)
            except Exception:  # an observer's bug must not end the run or silence the thread
                log.exception("observer_failed", observer=type(observer).__name__)

    async def _report(self, run: ActiveRun, result: RunResult, mention_ts: str | None) -> None:
        channel, thread = run.channel, run.thread_ts
        self._last_result[(channel, thread)] = result
        while len(self._last_result) > SEEN_LIMIT:
            del self._last_result[next(iter(self._last_result))]
        trace_name = f"opsagent-trace-{result.run_id}.json"
        trace_url = self._trace_link(result.run_id) if self._trace_link is not None else None
        for message in final_message(result, trace_name=trace_name, trace_url=trace_url):
            self._outbox.enqueue(
                "chat_postMessage", channel, thread_ts=thread, text=message.text, blocks=message.blocks
            )
        self._outbox.enqueue(
            "files_upload_v2",
            channel,
            thread_ts=thread,
            content=result.to_json(),
            filename=trace_name,
            title=f"Trace of run {result.run_id}",
        )
        if mention_ts:
            self._outbox.enqueue(
                "reactions_add", channel, name="white_check_mark" if result.ok else "x", timestamp=mention_ts
            )
        log.info(
            "run_finished",
            run_id=result.run_id,
            ok=result.ok,
            stop_reason=str(result.stop_reason),
            steps=result.usage.steps,
            channel=channel,
        )

    async def _set_status(self, channel: str, thread_ts: str, status: str) -> None:
        """Slack's loading indicator where the workspace supports it; its absence is not an error."""
        try:
            await self._client.assistant_threads_setStatus(channel_id=channel, thread_ts=thread_ts, status=status)
        except Exception as exc:
            log.info("status_unavailable", channel=channel, error=str(exc)[:200])

    def _with_history(self, text: str, channel: str, thread_ts: str) -> str:
        """A follow-up in an investigation thread knows the earlier task and answer."""
        earlier = self._last_result.get((channel, thread_ts))
        if earlier is None:
            return text
        answer = earlier.answer or earlier.partial_answer or f"(no answer: {earlier.stop_reason})"
        return f"{text}\n\nEarlier in this thread you investigated: {earlier.task}\nYour answer then: {answer}"

    def _refuse(self, request: RunRequest, thread_ts: str, text: str) -> None:
        """Tell who asked why no run started: only them when a person asked, the thread when an alert did."""
        if request.teams is None:
            self._reply(request.channel, thread_ts, f"Not started: {text}")
            return
        message = ephemeral(f"Not started: {text}")
        self._outbox.enqueue(
            "chat_postEphemeral",
            request.channel,
            user=request.user,
            thread_ts=thread_ts,
            text=message.text,
            blocks=message.blocks,
        )

    def _reply(self, channel: str, thread_ts: str, text: str) -> None:
        """A plain text reply of ours in the thread (our own words: not escaped, mentions work)."""
        self._outbox.enqueue("chat_postMessage", channel, thread_ts=thread_ts, text=text)

    def _already_seen(self, key: str) -> bool:
        if key in self._seen:
            return True
        self._seen[key] = None
        if len(self._seen) > SEEN_LIMIT:
            self._seen.popitem(last=False)
        return False


def _is_the_answer(step: Step) -> bool:
    """The successful `finish` step: its answer goes in the final message, not a step reply."""
    return step.call is not None and step.call.name == FINISH_TOOL and step.error is None
