"""What the fake log servers share: an aiohttp server on a free port that records every request and answers the
failures queued for it (a status and body, or a hang) before its own answer."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from testkit.servers.local_server import LocalServer


@dataclass(frozen=True)
class Failure:
    """What the next request gets instead of an answer: a status and body, after `delay` seconds."""

    status: int = 500
    body: Any = "internal error"
    delay: float = 0.0
    path: str = ""
    """Only a request whose path ends with this gets the failure ("" for any)."""


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any


class LogServer(LocalServer):
    """An aiohttp server on a free port; `fail(...)` queues failures, `requests` records calls."""

    shutdown_timeout = 0.5

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[Request] = []
        self.failures: deque[Failure] = deque()

    def fail(self, *failures: Failure) -> None:
        self.failures.extend(failures)

    def hang(self, seconds: float = 30.0) -> None:
        """The next request is answered only after `seconds` (or when the server closes)."""
        self.failures.append(Failure(status=0, delay=seconds))

    def routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/{tail:.*}", self._handle)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        body = json.loads(raw) if raw else None
        headers = {name.lower(): value for name, value in request.headers.items()}
        self.requests.append(Request(request.method, request.path, dict(request.query), headers, body))
        failure = next((f for f in self.failures if request.path.endswith(f.path)), None)
        if failure is not None:
            self.failures.remove(failure)
            if failure.delay:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), failure.delay)
            if failure.status:
                if isinstance(failure.body, str):
                    return web.Response(text=failure.body, status=failure.status)
                return web.json_response(failure.body, status=failure.status)
        try:
            return await self.answer(request.path, dict(request.query), headers, body)
        except BadRequest as exc:
            return exc.response

    async def answer(self, path: str, query: dict[str, str], headers: dict[str, str], body: Any) -> web.StreamResponse:
        raise NotImplementedError


class BadRequest(Exception):
    def __init__(self, response: web.StreamResponse) -> None:
        self.response = response
