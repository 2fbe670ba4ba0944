"""A run's presence in its Slack thread: the summary message kept current, one compact reply per step, a side
effect's approval collapsed to one line, and the last reply with the trace file.

Posts go through the outbox (ordered per channel, rate-limited, never raising) and updates through one coalescing
writer per message, so the run never waits on Slack and a Slack failure never ends a run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from slack_sdk.web.async_client import AsyncWebClient

from bot.access.identity import Approvers
from bot.slack.approval_blocks import action_done
from bot.slack.approval_words import approver_mentions
from bot.slack.blocks import Message
from bot.slack.outbox import Outbox
from bot.slack.steps import step_message
from bot.slack.summary import (
    Activity,
    AwaitingApproval,
    LiveRun,
    Restarting,
    Running,
    Thinking,
    final_reply,
    final_summary,
    live_summary,
)
from bot.slack.updates import MessageUpdates
from bot.verdict import StepLine, StepStatus, call_words, step_line, verdict_of
from kernel import FINISH_TOOL, ErrorKind, Hypothesis, RunResult, Step, TakenGuidance, ToolCall

log = structlog.get_logger("opsagent.investigations")

STATUS_TEXT = "is investigating…"
ROUTINE_S = 10.0
"""How stale the summary may get about routine progress (a step checked, the next call, a reworded hypothesis); a
change of status, a first hypothesis or a new confidence, and the end are written as soon as Slack's limits allow.
The steps have their own replies, so the summary need not follow each one (it would double the calls per step)."""
TraceLink = Callable[[str], str | None]
"""The URL of a run's trace page by run id (the trace viewer's signed link), or None for none."""
SummaryPosted = Callable[[str], Awaitable[None]]
"""What to do with the summary message's ts once Slack has it (the run store keeps it, for a resumed run)."""


class RunThread:
    """One run's messages in its thread; `mention_ts` (the asking message) gets the reactions, `summary_ts` is the
    summary message when a process before this one posted it; `broadcast_url`, when not None, sends the last reply
    to the channel too, linking the thread there (its permalink; "" when the workspace's address is unknown)."""

    def __init__(
        self,
        *,
        outbox: Outbox,
        updates: MessageUpdates,
        client: AsyncWebClient,
        run_id: str,
        channel: str,
        thread_ts: str,
        task: str,
        requested_by: str,
        approvers: Approvers,
        mention_ts: str = "",
        summary_ts: str = "",
        trace_link: TraceLink | None = None,
        summary_posted: SummaryPosted | None = None,
        broadcast_url: str | None = None,
    ) -> None:
        self._outbox, self._updates, self._client = outbox, updates, client
        self._broadcast_url = broadcast_url
        self.run_id, self.channel, self.thread_ts, self.mention_ts = run_id, channel, thread_ts, mention_ts
        self._task, self._requested_by, self._approvers = task, requested_by, approver_mentions(approvers)
        self._trace_url = trace_link(run_id) if trace_link is not None else None
        self._summary_ts, self._summary_posted = summary_ts, summary_posted
        self._summary_failed = False
        self._summary_posting = False
        self._unsent: tuple[Message, float] | None = None
        """Summary content set before Slack answered the summary's post: written once it has."""
        self._steps: dict[int, StepLine] = {}
        self._hypothesis: Hypothesis | None = None
        self._guidance: list[TakenGuidance] = []
        self._running: dict[int, str] = {}
        self._groups: dict[int, tuple[int, ...]] = {}
        """Groups of reads running at once, by their first step (its reply says so)."""
        self._activity: Activity = Thinking()
        self._ended = False
        self._tasks: set[asyncio.Task[None]] = set()

    def step_url(self, index: int) -> str | None:
        """The trace viewer's anchor of one step of this run, when a viewer is configured."""
        return f"{self._trace_url}#step-{index}" if self._trace_url else None

    async def opened(self) -> None:
        """A new run: 👀 on the asking message, the summary with its Stop button, Slack's status line."""
        if self.mention_ts:
            self._outbox.enqueue("reactions_add", self.channel, name="eyes", timestamp=self.mention_ts)
        self._post_summary()
        await self.set_status(STATUS_TEXT)

    async def resumed(self, checkpoint: RunResult | None) -> None:
        """A run picked up again after a restart or by another replica: its summary continues, and says from where."""
        steps = checkpoint.steps if checkpoint is not None else []
        for step in steps:
            self._remember(step)
        waiting = [s for s in steps if s.pending]
        if waiting and waiting[0].call is not None:
            self._activity = AwaitingApproval(waiting[0].index, call_words(waiting[0].call), self._approvers)
        where = f"after step {len(steps)}" if steps else "from its start"
        then = " It is waiting for the approval above." if waiting else ""
        self.reply(
            f"♻️ This investigation continues {where} (OpsAgent restarted, or another replica took it over).{then}"
        )
        if self._summary_ts:
            self._refresh(urgent=True)
        else:
            self._post_summary()
        await self.set_status(STATUS_TEXT)

    def interrupted(self, steps: int) -> None:
        """The process is stopping: the run is saved and another process (or this one, restarted) continues it."""
        where = f"after step {steps}" if steps else "from its start"
        self.reply(f"⏸ OpsAgent is restarting; this investigation is saved and continues {where} when it is back.")
        self._activity = Restarting(steps)
        self._refresh(urgent=True)

    def step_started(self, index: int, call: ToolCall, *, together: tuple[int, ...] = ()) -> None:
        """A call is about to run (`together`: with these steps, at once): the summary's "next" says so (routine: it
        may wait)."""
        if together[:1] == (index,):
            self._groups[index] = together
        if call.name != FINISH_TOOL:
            self._running[index] = call_words(call)
            self._activity = Running(tuple(self._running.values()))
            self._refresh(urgent=False)

    def step(self, step: Step, *, approval_ts: str = "") -> None:
        """A step ended: its own reply (fast steps merged into one message by the outbox), or, for a side effect,
        its approval message: left as it is while it waits, collapsed to one line with its outcome once decided
        (`approval_ts`: that message)."""
        if step.call is not None and step.call.name == FINISH_TOOL and step.error is None:
            return  # the summary carries the answer
        before = self._hypothesis
        new_level = step.hypothesis is not None and (before is None or step.hypothesis.confidence != before.confidence)
        line = self._remember(step)
        self._running.pop(step.index, None)
        if line.status is StepStatus.WAITING:
            self._activity = AwaitingApproval(step.index, line.call, self._approvers)
        else:
            self._activity = Running(tuple(self._running.values())) if self._running else Thinking()
        if line.status is StepStatus.WAITING or step.error is ErrorKind.CANCELLED:
            pass  # the approval message, just posted, is this step; a call the Stop cut short is said at the end
        elif step.approval is not None and approval_ts:
            self._updates.set(self.channel, approval_ts, action_done(line, self.step_url))
        else:
            message = step_message(line, self.step_url, together=self._groups.pop(step.index, ()))
            self._post(message, merge_key=f"steps:{self.run_id}")
        self._refresh(urgent=new_level or line.status is StepStatus.WAITING)

    def finished(self, result: RunResult, *, stopped_by: str = "") -> None:
        """The end: the summary becomes the verdict (no Stop button), the last reply says it in a line with the trace
        file (before it, when the reply goes to the channel too), and ✅/❌ goes on the asking message. `stopped_by`:
        who stopped the run (a user id), shown as a mention."""
        self._ended = True
        verdict = verdict_of(result, stopped_by=stopped_by)
        summary = final_summary(verdict, step_url=self.step_url, trace_url=self._trace_url)
        if self._summary_ts or (self._summary_posting and not self._summary_failed):
            self._set_summary(summary, within_s=0.0)
        else:  # no summary reached Slack (or none was posted from here): the verdict is posted instead
            self._post(summary)
        trace = {
            "content": result.to_json(),
            "filename": f"opsagent-trace-{result.run_id}.json",
            "title": f"Trace of run {result.run_id}",
        }
        if self._broadcast_url is not None:  # a file's comment cannot be sent to the channel: the file goes first
            reply = final_reply(verdict, thread_url=self._broadcast_url)
            self._outbox.enqueue("files_upload_v2", self.channel, thread_ts=self.thread_ts, **trace)
            self._outbox.enqueue(
                "chat_postMessage", self.channel, thread_ts=self.thread_ts, text=reply, reply_broadcast=True
            )
        else:
            reply = final_reply(verdict)
            upload = self._outbox.enqueue(
                "files_upload_v2", self.channel, thread_ts=self.thread_ts, initial_comment=reply, **trace
            )
            upload.add_done_callback(lambda done: self._reply_if_lost(done, reply))
        if self.mention_ts:
            name = "white_check_mark" if result.ok else "x"
            self._outbox.enqueue("reactions_add", self.channel, name=name, timestamp=self.mention_ts)

    def guidance_taken(self, taken: TakenGuidance) -> None:
        """The run gave a person's guidance to the model: the summary says so, with the step it came before."""
        self._guidance.append(taken)
        self._refresh(urgent=True)

    def reply(self, text: str) -> None:
        """A plain text reply of ours in the thread (our own words: not escaped, mentions work)."""
        self._outbox.enqueue("chat_postMessage", self.channel, thread_ts=self.thread_ts, text=text)

    async def set_status(self, status: str) -> None:
        """Slack's loading indicator where the workspace supports it; its absence is not an error."""
        try:
            await self._client.assistant_threads_setStatus(
                channel_id=self.channel, thread_ts=self.thread_ts, status=status
            )
        except Exception as exc:
            log.info("status_unavailable", channel=self.channel, error=str(exc)[:200])

    def _remember(self, step: Step) -> StepLine:
        line = step_line(step)
        if not (step.call is not None and step.call.name == FINISH_TOOL):
            self._steps[step.index] = line
        self._hypothesis = step.hypothesis or self._hypothesis
        return line

    def _live(self) -> Message:
        steps = tuple(self._steps[index] for index in sorted(self._steps))
        run = LiveRun(
            self.run_id,
            self._task,
            self._requested_by,
            steps,
            self._hypothesis,
            self._activity,
            tuple(self._guidance),
        )
        return live_summary(run)

    def _refresh(self, *, urgent: bool) -> None:
        if not self._ended:
            self._set_summary(self._live(), within_s=0.0 if urgent else ROUTINE_S)

    def _set_summary(self, message: Message, *, within_s: float) -> None:
        if self._summary_ts:
            self._updates.set(self.channel, self._summary_ts, message, within_s=within_s)
        else:
            self._unsent = (message, within_s)

    def _post_summary(self) -> None:
        self._summary_failed, self._summary_posting = False, True
        posted = self._post(self._live())
        posted.add_done_callback(self._summary_answered)

    def _summary_answered(self, done: asyncio.Future[dict[str, Any] | None]) -> None:
        answer = None if done.cancelled() else done.result()
        if answer is None or not answer.get("ts"):
            self._summary_failed = True
            if self._unsent is not None and self._ended:
                self._post(self._unsent[0])
            return
        self._summary_ts = str(answer["ts"])
        if self._unsent is not None:
            message, within_s = self._unsent
            self._unsent = None
            self._updates.set(self.channel, self._summary_ts, message, within_s=within_s)
        if self._summary_posted is not None:
            task = asyncio.get_running_loop().create_task(self._summary_posted(self._summary_ts))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _reply_if_lost(self, done: asyncio.Future[dict[str, Any] | None], reply: str) -> None:
        """The trace upload failed (no `files:write`, Slack down for minutes): the last reply goes alone."""
        if done.cancelled() or done.result() is None:
            self.reply(reply)

    def _post(self, message: Message, *, merge_key: str | None = None) -> asyncio.Future[dict[str, Any] | None]:
        return self._outbox.enqueue(
            "chat_postMessage",
            self.channel,
            thread_ts=self.thread_ts,
            text=message.text,
            blocks=message.blocks,
            merge_key=merge_key,
        )
