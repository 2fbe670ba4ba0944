"""One outbound queue per Slack channel: posts keep their order and respect ~1 message/s per channel.

While Slack is down a post is retried (for minutes); a failure is logged and reported to the waiting
caller; it never kills the run that posted.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import structlog
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.settings import POST_INTERVAL_S

log = structlog.get_logger("opsagent.slack")

OUTAGE_S = 300.0
"""How long a post is retried while Slack answers 429/5xx or cannot be reached, before it is given up (logged)."""
MAX_OUTAGE_WAIT_S = 15.0
"""The longest pause between two tries of one post during an outage."""
MAX_BLOCKS = 50
"""Slack's limit of blocks per message: merged posts stay within it."""
MAX_FALLBACK_TEXT = 3_000
"""The notification text of a merged post is cut to this."""


@dataclass
class _Post:
    method: str
    kwargs: dict[str, Any]
    merge_key: str | None = None
    not_before: float = 0.0
    """Loop time before which the post waits for more of its kind to join it (a batch of steps)."""
    taken: bool = False
    """Set when the worker picks the post up; from then on nothing may be merged into it."""
    done: asyncio.Future[dict[str, Any] | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    def absorb(self, kwargs: dict[str, Any]) -> bool:
        """Append another message's blocks to this unsent one, if the result stays within Slack's limits."""
        blocks, more = self.kwargs.get("blocks", []), kwargs.get("blocks", [])
        if self.taken or len(blocks) + len(more) > MAX_BLOCKS:
            return False
        self.kwargs["blocks"] = [*blocks, *more]
        self.kwargs["text"] = f"{self.kwargs.get('text', '')}\n{kwargs.get('text', '')}"[:MAX_FALLBACK_TEXT]
        return True


class Outbox:
    """Serialises Web API writes per channel; `send` returns the API's answer, or None if Slack refused."""

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        interval_s: float = POST_INTERVAL_S,
        batch_s: float = 0.0,
        outage_s: float = OUTAGE_S,
    ) -> None:
        self._client = client
        self._interval_s = interval_s
        self._batch_s = batch_s
        self._outage_s = outage_s
        self._queues: dict[str, asyncio.Queue[_Post]] = {}
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._tails: dict[str, _Post] = {}

    def enqueue(
        self, method: str, channel: str, *, merge_key: str | None = None, **kwargs: Any
    ) -> asyncio.Future[dict[str, Any] | None]:
        """Queue `client.<method>(channel=..., **kwargs)` behind the channel's earlier writes, at once;
        the future holds the API's answer (None if Slack refused). Callers need not wait for it.

        Posts with the same `merge_key` that pile up unsent (fast steps, a rate-limited channel) go out
        as one message: fewer calls, same order, nothing lost. Such a post also waits `batch_s` for others to
        join it (every later post of the channel waits behind it, in order).
        """
        last = self._tails.get(channel)
        mergeable = last is not None and merge_key is not None and (last.merge_key, last.method) == (merge_key, method)
        if mergeable and last is not None and last.absorb(kwargs):
            return last.done
        post = _Post(method, {"channel": channel, **kwargs}, merge_key)
        if merge_key is not None and self._batch_s > 0:
            post.not_before = asyncio.get_running_loop().time() + self._batch_s
        self._tails[channel] = post
        queue = self._queues.get(channel)
        if queue is None:
            queue = self._queues[channel] = asyncio.Queue()
            self._workers[channel] = asyncio.create_task(self._drain(queue), name=f"outbox-{channel}")
        queue.put_nowait(post)
        return post.done

    async def send(self, method: str, channel: str, **kwargs: Any) -> dict[str, Any] | None:
        """`enqueue`, then wait for the answer; a waiter cancelled meanwhile leaves the post in the queue."""
        return await asyncio.shield(self.enqueue(method, channel, **kwargs))

    async def close(self) -> None:
        """Send what is queued, then stop the workers (a later post starts a fresh one)."""
        queues, workers = self._queues, self._workers
        self._queues, self._workers = {}, {}
        for queue in queues.values():
            await queue.join()
        for worker in workers.values():
            worker.cancel()
        await asyncio.gather(*workers.values(), return_exceptions=True)

    async def _drain(self, queue: asyncio.Queue[_Post]) -> None:
        loop = asyncio.get_running_loop()
        last = 0.0
        while True:
            post = await queue.get()
            if (held := post.not_before - loop.time()) > 0:
                await asyncio.sleep(held)  # not taken yet: posts of its kind may still join it
            post.taken = True
            if post.method == "chat_postMessage":
                wait = last + self._interval_s - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                last = loop.time()
            answer: dict[str, Any] | None = None
            try:
                answer = await self._call(post)
            finally:
                if not post.done.done():  # nobody may be waiting any more; the worker must live on
                    post.done.set_result(answer)
                queue.task_done()

    async def _call(self, post: _Post) -> dict[str, Any] | None:
        """Make the post's call; while Slack is down (429, 5xx, no connection) keep trying, for up to
        `outage_s`, so an outage delays the thread instead of losing its header, answer or reaction."""
        loop = asyncio.get_running_loop()
        deadline, wait = loop.time() + self._outage_s, 1.0
        while True:
            try:
                response = await getattr(self._client, post.method)(**post.kwargs)
                return response.data if isinstance(response.data, dict) else None
            except SlackApiError as exc:
                error, transient = str(exc.response.get("error")), _slack_is_down(exc.response.status_code)
            except (aiohttp.ClientError, TimeoutError, OSError) as exc:
                error, transient = f"{type(exc).__name__}: {exc}", True
            except Exception as exc:  # a bug in a payload: report, never kill the run
                error, transient = f"{type(exc).__name__}: {exc}", False
            if not transient or loop.time() + wait > deadline:
                log.warning("slack_call_failed", method=post.method, error=error)
                return None
            log.info("slack_call_retrying", method=post.method, error=error, in_s=wait)
            await asyncio.sleep(wait)
            wait = min(2 * wait, MAX_OUTAGE_WAIT_S)


def _slack_is_down(status: int) -> bool:
    """Rate limited or failing on Slack's side (the client's own retries ran out): worth trying again later."""
    return status == 429 or status >= 500
