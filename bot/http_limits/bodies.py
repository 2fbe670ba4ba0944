"""A request body's limits: its path's size limit and `body_timeout_s` to arrive (aiohttp waits for a half-sent
body as long as the client likes)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping

import structlog
from aiohttp import web

from bot.http_limits.limits import HttpLimits

log = structlog.get_logger("opsagent.http")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
BODY_DEADLINE = web.RequestKey("opsagent_body_deadline", asyncio.Timeout)
"""The deadline the middleware set on a request with a body: `read_body` lifts it once the body is in."""


def bounded_bodies(limits: HttpLimits, body_limits: Mapping[str, int]) -> Callable[..., Awaitable[web.StreamResponse]]:
    """A middleware that gives a request with a body its path's size limit (413 past it, when the handler reads it)
    and `body_timeout_s` from the end of its head to its answer (408 after). Handlers with a body read it first
    thing (after checking a header token, so an unauthorised client cannot make the server hold a big body) and
    answer at once, leaving the work to a task: the time is the body's. A handler whose answer streams reads its
    body with `read_body`, which lifts the deadline once the body is in."""

    @web.middleware
    async def bounded_body(request: web.Request, handler: Handler) -> web.StreamResponse:
        if not request.body_exists:
            return await handler(request)
        limited = request.clone(client_max_size=body_limits.get(request.path, limits.body_bytes))
        deadline = asyncio.timeout(limits.body_timeout_s)
        limited[BODY_DEADLINE] = deadline
        try:
            async with deadline:
                return await handler(limited)
        except TimeoutError:
            if not deadline.expired():
                raise  # the handler's own timeout, not the body's
        log.warning("http_body_timed_out", path=request.path, remote=request.remote)
        return web.json_response(
            {"ok": False, "error": f"the request body did not arrive within {limits.body_timeout_s:g} s"},
            status=408,
            headers={"Connection": "close"},
        )

    return bounded_body


async def read_body(request: web.Request, limit: int) -> bytes | None:
    """The request's body, read to its end within the body's deadline, or None once it is over `limit` bytes (the rest
    is never read). Then the deadline is lifted: the answer may stream for as long as it takes (an event stream, an MCP
    tool's progress). A request without a body reads as b""."""
    if request.content_length is not None and request.content_length > limit:
        return None
    chunks, size = [], 0
    async for chunk in request.content.iter_any():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    if (deadline := request.get(BODY_DEADLINE)) is not None:
        deadline.reschedule(None)
    return b"".join(chunks)
