"""A run's presence in its Slack thread: the header, one reply per step, notices, the final answer.

Everything is queued on the outbox (ordered per channel, rate-limited, never raising), so the run
never waits on Slack and a Slack failure never ends a run.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.blocks import final_message, run_header, step_message
from bot.slack.outbox import Outbox
from kernel import FINISH_TOOL, RunResult, Step

log = structlog.get_logger("opsagent.investigations")

STATUS_TEXT = "is investigating…"
TraceLink = Callable[[str], str | None]
"""The URL of a run's trace page by run id (the trace viewer's signed link), or None for none."""


class RunThread:
    """Posts one run's messages in its thread; `mention_ts` (the asking message) gets the reactions."""

    def __init__(
        self,
        *,
        outbox: Outbox,
        client: AsyncWebClient,
        run_id: str,
        channel: str,
        thread_ts: str,
        mention_ts: str = "",
        trace_link: TraceLink | None = None,
    ) -> None:
        self._outbox = outbox
        self._client = client
        self._trace_link = trace_link
        self.run_id, self.channel, self.thread_ts, self.mention_ts = run_id, channel, thread_ts, mention_ts

    async def opened(self, asked: str, requested_by: str) -> None:
        """A new run: 👀 on the asking message, the header with its Stop button, Slack's status line."""
        if self.mention_ts:
            self._outbox.enqueue("reactions_add", self.channel, name="eyes", timestamp=self.mention_ts)
        header = run_header(self.run_id, asked, requested_by)
        self._outbox.enqueue(
            "chat_postMessage", self.channel, thread_ts=self.thread_ts, text=header.text, blocks=header.blocks
        )
        await self.set_status(STATUS_TEXT)

    async def resumed(self, checkpoint: RunResult | None) -> None:
        """A run picked up again after a restart or by another replica: say from where."""
        steps = len(checkpoint.steps) if checkpoint is not None else 0
        waiting = checkpoint is not None and checkpoint.pending_steps()
        where = f"after step {steps}" if steps else "from its start"
        then = " It is waiting for the approval above." if waiting else ""
        self.reply(
            f"♻️ This investigation continues {where} (OpsAgent restarted, or another replica took it over).{then}"
        )
        await self.set_status(STATUS_TEXT)

    def interrupted(self, steps: int) -> None:
        """The process is stopping: the run is saved and another process (or this one, restarted) continues it."""
        where = f"after step {steps}" if steps else "from its start"
        self.reply(f"⏸ OpsAgent is restarting; this investigation is saved and continues {where} when it is back.")

    def step(self, step: Step) -> None:
        """One step as a reply; fast steps are merged into one message by the outbox."""
        if _is_the_answer(step):
            return  # the final message carries it
        message = step_message(step)
        self._outbox.enqueue(
            "chat_postMessage",
            self.channel,
            thread_ts=self.thread_ts,
            text=message.text,
            blocks=message.blocks,
            merge_key=f"steps:{self.run_id}",
        )

    def finished(self, result: RunResult, *, stopped_by: str = "") -> None:
        """The answer (or the explicit failure), the trace file, and ✅/❌ on the asking message; `stopped_by`:
        who stopped the run (a user id), shown as a mention."""
        trace_name = f"opsagent-trace-{result.run_id}.json"
        trace_url = self._trace_link(result.run_id) if self._trace_link is not None else None
        for message in final_message(result, trace_name=trace_name, trace_url=trace_url, stopped_by=stopped_by):
            self._outbox.enqueue(
                "chat_postMessage", self.channel, thread_ts=self.thread_ts, text=message.text, blocks=message.blocks
            )
        self._outbox.enqueue(
            "files_upload_v2",
            self.channel,
            thread_ts=self.thread_ts,
            content=result.to_json(),
            filename=trace_name,
            title=f"Trace of run {result.run_id}",
        )
        if self.mention_ts:
            self._outbox.enqueue(
                "reactions_add",
                self.channel,
                name="white_check_mark" if result.ok else "x",
                timestamp=self.mention_ts,
            )

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


def _is_the_answer(step: Step) -> bool:
    """The successful `finish` step: its answer goes in the final message, not a step reply."""
    return step.call is not None and step.call.name == FINISH_TOOL and step.error is None
