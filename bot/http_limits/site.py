"""The server's TCP site: every connection goes through an `Admission` (who may hold one, see
`bot.http_limits.admission`) and must send its first request head within `header_timeout_s`; the `admitted_requests`
middleware tells each connection when its request head is complete and what the request is.

aiohttp's own sites accept every connection and leave it to its keep-alive timer; here a connection refused or
giving way is answered 503 (`Retry-After: 1`) before it is closed, and one whose head is late 408.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import structlog
from aiohttp import web

from bot.http_limits.admission import Admission, RequestKind, classify, client_of
from bot.http_limits.bodies import Handler
from bot.http_limits.limits import ConnectionCaps, HttpLimits

log = structlog.get_logger("opsagent.http")

_TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
_BUSY = b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\nContent-Length: 0\r\n\r\n"


class LimitedSite(web.BaseSite):
    """A TCP site whose connections are admitted within `caps` and must send their first request head in time."""

    def __init__(self, runner: web.BaseRunner, host: str, port: int, limits: HttpLimits, caps: ConnectionCaps) -> None:
        super().__init__(runner)
        self._host, self._port = host, port
        self.limits = limits
        self.admission = Admission(caps, burst_s=limits.burst_s)

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
            lambda: _GuardedConnection(server(), self), self._host, self._port, backlog=self.admission.caps.backlog
        )


def admitted_requests(signed_path: str | None) -> Callable[..., Awaitable[web.StreamResponse]]:
    """A middleware, the outermost, that tells a request's connection its head is complete and what the request is
    (a probe, signed on `signed_path`, or open): a request there is no room for is answered 503 and its connection
    closed, without reading its body. On a server without a `LimitedSite` (aiohttp's test server) it does nothing."""

    @web.middleware
    async def admitted(request: web.Request, handler: Handler) -> web.StreamResponse:
        transport = request.transport
        guard = transport.get_protocol() if transport is not None else None
        if not isinstance(guard, _GuardedConnection):
            return await handler(request)
        kind = classify(request.method, request.path, request.headers, signed_path)
        if not guard.request_started(kind):
            log.warning("http_request_refused", kind=kind.value, path=request.path, client=guard.client)
            return web.json_response(
                {"ok": False, "error": "the server has no room for this request now: retry in a second"},
                status=503,
                headers={"Connection": "close", "Retry-After": "1"},
            )
        try:
            return await handler(request)
        finally:
            guard.request_finished()

    return admitted


class _GuardedConnection(asyncio.Protocol):
    """One connection: refused or admitted by the site's `Admission`, answered 408 and closed if its first request
    head is late, closed when it gives way; every other event goes to aiohttp's protocol as without the guard."""

    def __init__(self, inner: asyncio.Protocol, site: LimitedSite) -> None:
        self._inner, self._site = inner, site
        self._transport: asyncio.Transport | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._burst: asyncio.TimerHandle | None = None
        self._refused = False
        self._requested = False
        """Whether a request has begun on it (a 503 or 408 of ours would then garble its answer)."""
        self.client = ""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self.client = client_of(transport.get_extra_info("peername"))
        admission = self._site.admission
        if not admission.admit(self, self.client):
            self._refused = True
            log.warning("http_connection_refused", client=self.client, open=len(admission), cap=admission.caps.total)
            transport.write(_BUSY)
            transport.close()
            return
        loop = asyncio.get_running_loop()
        self._deadline = loop.call_later(self._site.limits.header_timeout_s, self._head_late)
        self._burst = loop.call_later(self._site.limits.burst_s, admission.burst_over, self)
        self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if not self._refused:
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
        self._site.admission.forget(self)
        self._stop_deadline()
        if self._burst is not None:
            self._burst.cancel()
        self._inner.connection_lost(exc)

    def request_started(self, kind: RequestKind) -> bool:
        """A request's head is complete: whether the admission has room for it."""
        self._requested = True
        self._stop_deadline()
        return self._site.admission.start(self, kind)

    def request_finished(self) -> None:
        """The request is answered: the connection waits for the next (kept alive)."""
        self._site.admission.finish(self)

    def give_way(self) -> None:
        """Closed for a newer connection: 503 if it never sent a request head (a client sending one may retry)."""
        self._stop_deadline()
        log.warning("http_connection_evicted", client=self.client, before_first_request=not self._requested)
        self._close(b"" if self._requested else _BUSY)

    def _head_late(self) -> None:
        self._deadline = None
        self._site.admission.forget(self)
        log.warning("http_head_timed_out", client=self.client, after_s=self._site.limits.header_timeout_s)
        self._close(_TIMED_OUT)

    def _close(self, answer: bytes) -> None:
        assert self._transport is not None
        if self._transport.is_closing():  # aiohttp closed it already (its keep-alive timer): its place is free
            return
        if answer:
            self._transport.write(answer)
        self._transport.close()

    def _stop_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
