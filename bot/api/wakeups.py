"""Waking whoever follows a run (an event stream, an MCP wait) when its checkpoint moves, on any replica.

One subscription per process to the progress topic, fanned out to the runs' watchers. A message is a wake-up call,
not the truth: a watcher re-reads the store, and also every `POLL_S` on its own, so a lost message (a reconnecting
subscription, a replica that died mid-step) delays an event, never loses it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

import structlog

from bot.runs.topics import PROGRESS_TOPIC
from bot.store.ports import Topics

log = structlog.get_logger("opsagent.api")

POLL_S = 2.0
"""How long a watcher waits for a wake-up before it re-reads the store anyway."""


class Wakeups:
    """The progress topic's messages, handed to whoever watches each run."""

    def __init__(self, topics: Topics) -> None:
        self._topics = topics
        self._watchers: dict[str, set[asyncio.Event]] = {}
        self._task: asyncio.Task[None] | None = None
        self.closed = False
        """Set on shutdown: watchers stop following their runs (a client reconnects to another process)."""

    async def start(self) -> None:
        """Subscribe (in a task of its own; the subscription reconnects by itself)."""
        self._task = asyncio.create_task(self._listen(), name="api-wakeups")

    async def close(self) -> None:
        """Unsubscribe, and wake every watcher to find the process shutting down."""
        self.closed = True
        for watchers in self._watchers.values():
            for woken in watchers:
                woken.set()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    @contextlib.contextmanager
    def watch(self, run_id: str) -> Iterator[asyncio.Event]:
        """An event set whenever the run's checkpoint moves, while the block lasts: clear it, read the store, then
        wait on it (`wait`), so no wake-up between the read and the wait is lost."""
        woken = asyncio.Event()
        self._watchers.setdefault(run_id, set()).add(woken)
        try:
            yield woken
        finally:
            watchers = self._watchers.get(run_id, set())
            watchers.discard(woken)
            if not watchers:
                self._watchers.pop(run_id, None)

    async def _listen(self) -> None:
        async with self._topics.listen(PROGRESS_TOPIC) as messages:
            async for run_id in messages:
                for woken in self._watchers.get(run_id, ()):
                    woken.set()


async def wait(woken: asyncio.Event, timeout_s: float = POLL_S) -> None:
    """Until the watched run's checkpoint moves, or `timeout_s` passes (then the store is read anyway)."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(timeout_s):
            await woken.wait()
    woken.clear()
