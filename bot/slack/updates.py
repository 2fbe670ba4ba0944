"""Messages kept current with `chat.update`: one coalescing writer per message, within Slack's limits.

A message is updated at most once per `per_message_s` (Slack: about once a second), and this process's messages
together at most `per_window` times per `window_s` (`chat.update` is Tier 3: about 50 a minute per workspace).
Newer content replaces older content not yet sent, so only the latest state is written, and the last one always is.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from dataclasses import dataclass, field

import structlog

from bot.slack.blocks import Message
from bot.slack.outbox import Outbox

log = structlog.get_logger("opsagent.slack")

PER_MESSAGE_S = 1.0
"""The least time between two updates of one message (measured from Slack's answer to the earlier one)."""
PER_WINDOW = 50
WINDOW_S = 60.0
"""At most `PER_WINDOW` updates of all messages in any `WINDOW_S`: Slack's Tier 3 for `chat.update`."""


@dataclass
class _Writer:
    """One message's writer: the content waiting to be written and when it must go at the latest."""

    channel: str
    ts: str
    message: Message | None = None
    due: float = math.inf
    answered: float = -math.inf
    """When Slack answered this message's last update (loop time)."""
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None


class UpdateWindow:
    """At most `limit` updates in any `window_s` seconds, for all messages: a sliding window of send times."""

    def __init__(self, limit: int = PER_WINDOW, window_s: float = WINDOW_S) -> None:
        self._limit, self._window_s = limit, window_s
        self._sent: deque[float] = deque()
        self._lock = asyncio.Lock()

    async def slot(self) -> None:
        """Wait until one more update fits in the window, and count it."""
        loop = asyncio.get_running_loop()
        async with self._lock:
            while True:
                now = loop.time()
                while self._sent and self._sent[0] + self._window_s <= now:
                    self._sent.popleft()
                if len(self._sent) < self._limit:
                    self._sent.append(now)
                    return
                await asyncio.sleep(self._sent[0] + self._window_s - now)


class MessageUpdates:
    """Writes the latest content of each message the bot keeps current, through the channel's outbox (so an
    update never overtakes the post it updates, and a 429 or an outage delays it rather than losing it)."""

    def __init__(
        self, outbox: Outbox, *, per_message_s: float = PER_MESSAGE_S, window: UpdateWindow | None = None
    ) -> None:
        self._outbox = outbox
        self._per_message_s = per_message_s
        self._window = window or UpdateWindow()
        self._writers: dict[tuple[str, str], _Writer] = {}
        self._closing = False

    def set(self, channel: str, ts: str, message: Message, *, within_s: float = 0.0) -> None:
        """Make `message` the content of the message at `(channel, ts)`, written within `within_s` seconds, or as
        soon as the limits allow (an earlier, more urgent `set` keeps its deadline; its content is replaced)."""
        loop = asyncio.get_running_loop()
        writer = self._writers.get((channel, ts))
        if writer is None:
            writer = self._writers[(channel, ts)] = _Writer(channel, ts)
        writer.message = message
        writer.due = min(writer.due, loop.time() + max(within_s, 0.0))
        writer.wake.set()
        if writer.task is None or writer.task.done():
            writer.task = asyncio.create_task(self._write(writer), name=f"update-{channel}-{ts}")

    async def close(self) -> None:
        """Write every waiting content now (the per-message spacing and the window still kept), then stop."""
        self._closing = True
        for writer in self._writers.values():
            writer.wake.set()
        tasks = [w.task for w in self._writers.values() if w.task is not None]
        await asyncio.gather(*tasks, return_exceptions=True)
        self._closing = False

    async def _write(self, writer: _Writer) -> None:
        """Write the writer's content whenever it is due and allowed; linger one spacing after the last write (so
        a later `set` keeps the spacing), then leave."""
        loop = asyncio.get_running_loop()
        while True:
            now, message = loop.time(), writer.message
            spaced = writer.answered + self._per_message_s
            if message is None and (now >= spaced or self._closing):
                if self._writers.get((writer.channel, writer.ts)) is writer:
                    del self._writers[(writer.channel, writer.ts)]
                return
            at = spaced if message is None else max(spaced, now if self._closing else writer.due)
            if message is None or at > now:
                writer.wake.clear()
                try:
                    async with asyncio.timeout(at - now):
                        await writer.wake.wait()
                except TimeoutError:
                    pass
                continue
            await self._window.slot()
            message = writer.message or message  # the newest content, should a `set` have come during the wait
            writer.message, writer.due = None, math.inf
            answer = await self._outbox.send("chat_update", writer.channel, ts=writer.ts, **message.as_kwargs())
            writer.answered = loop.time()
            if answer is None:
                log.warning("message_update_lost", channel=writer.channel, ts=writer.ts)
