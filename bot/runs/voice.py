"""What the investigation service says in Slack: each run's thread (its summary's place kept in the run store, so
whoever carries the run on updates that message), replies in a thread, and words for one person only.

Everything is queued (the outbox, the message writers); a shutdown gives the queues one budget to drain.
"""

from __future__ import annotations

import asyncio

import structlog
from slack_sdk.web.async_client import AsyncWebClient

from bot.access.askers import Asker, Person
from bot.access.identity import Approvers
from bot.gate.requests import Place
from bot.slack.blocks import ephemeral
from bot.slack.outbox import Outbox
from bot.slack.permalinks import thread_url
from bot.slack.run_thread import RunThread, TraceLink
from bot.slack.updates import MessageUpdates
from bot.store.ports import RunRecords
from bot.store.protocol import StoreUnavailableError
from bot.store.records import RunRecord

log = structlog.get_logger("opsagent.investigations")


class ServiceVoice:
    """The service's messages: threads, replies, ephemerals and refusals, through one outbox and one set of writers."""

    def __init__(
        self,
        *,
        client: AsyncWebClient,
        outbox: Outbox,
        updates: MessageUpdates,
        runs: RunRecords,
        approvers: Approvers,
        trace_link: TraceLink | None,
        broadcast_verdict: bool = False,
        workspace_url: str = "",
    ) -> None:
        self._client, self._outbox, self._updates, self._runs = client, outbox, updates, runs
        self._approvers, self._trace_link = approvers, trace_link
        self._broadcast, self._workspace_url = broadcast_verdict, workspace_url

    def thread(self, record: RunRecord, asked: str | None = None) -> RunThread:
        """The run's thread; `asked`: what its summary says was asked (default: the task). A run asked for by a
        message (a mention) ends with its verdict sent to the channel too when `broadcast_verdict` is on; an alert's
        run does not: its thread's first message is the alert, at the channel's top already."""

        async def remember(summary_ts: str) -> None:
            try:
                await self._runs.remember_summary(record.run_id, summary_ts)
            except StoreUnavailableError as exc:  # a resumed run then posts a summary of its own
                log.warning("summary_not_recorded", run_id=record.run_id, error=str(exc)[:200])

        return RunThread(
            outbox=self._outbox,
            updates=self._updates,
            client=self._client,
            run_id=record.run_id,
            channel=record.channel,
            thread_ts=record.thread_ts,
            task=asked or record.task,
            requested_by=record.requested_by,
            approvers=self._approvers,
            mention_ts=record.mention_ts,
            summary_ts=record.summary_ts,
            trace_link=self._trace_link,
            summary_posted=remember,
            broadcast_url=thread_url(self._workspace_url, record.channel, record.thread_ts)
            if self._broadcast and record.mention_ts
            else None,
        )

    def refuse(self, asker: Asker, place: Place, text: str) -> None:
        """Tell who asked why no run started: only them when a person asked, the thread when an alert (an allowed
        bot, an API client) did; nobody when it was asked in no channel (its caller hears it from the API)."""
        if isinstance(asker, Person):
            self.tell(place.channel, place.thread_ts, asker.user, text)
        else:
            self.reply(place.channel, place.thread_ts, text)

    def tell(self, channel: str, thread_ts: str, user: str, text: str) -> None:
        """Words of ours for one person only (an ephemeral message in the thread)."""
        if not channel:
            return
        message = ephemeral(text)
        self._outbox.enqueue(
            "chat_postEphemeral", channel, user=user, thread_ts=thread_ts, text=message.text, blocks=message.blocks
        )

    def reply(self, channel: str, thread_ts: str, text: str) -> None:
        """A plain text reply of ours in the thread (our own words: not escaped, mentions work); none for a run posted
        in no channel."""
        if not channel:
            return
        self._outbox.enqueue("chat_postMessage", channel, thread_ts=thread_ts, text=text)

    async def drain(self, deadline: float) -> None:
        """Write what waits (the latest content of each kept message, then every queued post) by `deadline` (loop
        time): Slack may be down, and the outbox would wait it out for minutes."""
        loop = asyncio.get_running_loop()
        try:
            await asyncio.wait_for(self._updates.close(), timeout=max(deadline - loop.time(), 0.1))
            await asyncio.wait_for(self._outbox.close(), timeout=max(deadline - loop.time(), 0.1))
        except TimeoutError:
            log.warning("shutdown_messages_unsent")
