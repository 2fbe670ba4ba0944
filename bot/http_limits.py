"""What one client may hold of the bot's HTTP server: time to send its request head and body, body sizes, connections.

aiohttp waits for a half-sent request as long as the client likes, so a few hundred slow sockets would lock Slack
out; here a head must arrive within `header_timeout_s`, a body within `body_timeout_s`, and connections are capped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

import structlog
from aiohttp import web

log = structlog.get_logger("opsagent.http")

MIB = 1024 * 1024
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_HEAD_END = b"\r\n\r\n"
_TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
_BUSY = b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\nContent-Length: 0\r\n\r\n"


@dataclass(frozen=True)
class HttpLimits:
    """The server's limits; the defaults suit Slack (small signed posts answered at once) and Alertmanager."""

    header_timeout_s: float = 10.0
    """From connecting to the end of the first request's head; later requests get `idle_timeout_s` to begin."""
    body_timeout_s: float = 30.0
    """From the end of a request's head to its answer, for a request with a body (reading it is the slow part)."""
    idle_timeout_s: float = 15.0
    """How long a kept-alive connection may wait, idle or half-way through a later head, before it is closed
    (aiohttp's `keepalive_timeout`)."""
    drain_s: float = 2.0
    """How long the rest of a body no handler read (a refused request's) is drained and dropped after the answer,
    so the client can read the answer, before the connection is closed (aiohttp's `lingering_time`, 10 s)."""
    max_connections: int = 256
    """Open connections at once; the next ones get 503 and are closed at once."""
    body_bytes: int = MIB
    """A request body's size limit (413 past it) on every path but those given their own (`/alertmanager`)."""


def bounded_bodies(limits: HttpLimits, body_limits: Mapping[str, int]) -> Callable[..., Awaitable[web.StreamResponse]]:
    """A middleware that gives a request with a body its path's size limit (413 past it, when the handler reads it)
    and `body_timeout_s` from the end of its head to its answer (408 after). Handlers with a body read it first
    thing (after checking a header token, so an unauthorised client cannot make the server hold a big body) and
    answer at once, leaving the work to a task: the time is the body's."""

    @web.middleware
    async def bounded_body(request: web.Request, handler: Handler) -> web.StreamResponse:
        if not request.body_exists:
            return await handler(request)
        limited = request.clone(client_max_size=body_limits.get(request.path, limits.body_bytes))
        deadline = asyncio.timeout(limits.body_timeout_s)
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


class LimitedSite(web.BaseSite):
    """A TCP site whose connections are capped and must send their request head in time (aiohttp's own sites
    accept every connection and wait for it forever)."""

    def __init__(self, runner: web.BaseRunner, host: str, port: int, limits: HttpLimits) -> None:
        super().__init__(runner)
        self._host, self._port = host, port
        self.limits = limits
        self.open_connections = 0

    @property
    def name(self) -> str:
        """The site's URL, as aiohttp's sites name themselves."""
        return f"http://{self._host}:{self._port}"

    async def start(self) -> None:
        """Listen, handing each accepted connection to aiohttp behind its guard."""
        await super().start()
        server = self._runner.server
        assert server is not None, "the runner is set up before its site starts"
        self._server = await asyncio.get_running_loop().create_server(
            lambda: _GuardedConnection(server(), self), self._host, self._port, backlog=self._backlog
        )


class _GuardedConnection(asyncio.Protocol):
    """One connection: refused past the cap, answered 408 and closed if its first request head is late; every other
    event goes to aiohttp's protocol as it would without the guard."""

    def __init__(self, inner: asyncio.Protocol, site: LimitedSite) -> None:
        self._inner, self._site = inner, site
        self._transport: asyncio.Transport | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._tail = b""
        self._refused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        limits = self._site.limits
        if self._site.open_connections >= limits.max_connections:
            self._refused = True
            log.warning("http_connection_refused", open=self._site.open_connections, cap=limits.max_connections)
            transport.write(_BUSY)
            transport.close()
            return
        self._site.open_connections += 1
        self._deadline = asyncio.get_running_loop().call_later(limits.header_timeout_s, self._head_late)
        self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._deadline is not None:
            seen = self._tail + data
            if _HEAD_END in seen:
                self._deadline.cancel()
                self._deadline = None
            self._tail = seen[-(len(_HEAD_END) - 1) :]
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return None if self._refused else self._inner.eof_received()

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._refused:
            return
        self._site.open_connections -= 1
        if self._deadline is not None:
            self._deadline.cancel()
        self._inner.connection_lost(exc)

    def _head_late(self) -> None:
        self._deadline = None
        assert self._transport is not None
        log.warning("http_head_timed_out", after_s=self._site.limits.header_timeout_s)
        self._transport.write(_TIMED_OUT)
        self._transport.close()
