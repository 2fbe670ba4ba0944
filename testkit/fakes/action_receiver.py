"""An operator's action receiver on 127.0.0.1: verifies the HMAC, de-duplicates by Idempotency-Key, can hold.

It is what the exactly-once guarantee leans on: the bot may re-send an action whose answer it lost, with the
same key, and the receiver runs each key once. `hold()` keeps the next new action's answer back until
`release()` (or the server closes), so a test can kill the bot between "executing" and "done".
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections import Counter
from typing import Any

from aiohttp import web

from opsagent_tools.actions.webhook import IDEMPOTENCY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER
from testkit.servers.local_server import LocalServer


class ActionReceiver(LocalServer):
    """`POST /actions`: `requests` counts every delivery per key, `executed` the actions run (one per key)."""

    def __init__(self, secret: str) -> None:
        super().__init__()
        self.secret = secret.encode()
        self.requests: Counter[str] = Counter()
        self.executed: list[dict[str, Any]] = []
        """The bodies of the actions run, in order: one per idempotency key, however often it was sent."""
        self.held = asyncio.Event()
        """Set once a held action has been run and is waiting to answer."""
        self._hold_next = False
        self._release = asyncio.Event()

    @property
    def actions_url(self) -> str:
        return f"{self.url}/actions"

    def hold(self) -> None:
        """The next new action runs, then its answer waits for `release()`."""
        self._hold_next = True

    def release(self) -> None:
        self._release.set()

    async def close(self) -> None:
        self.release()
        await super().close()

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/actions", self._handle)

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        mac = hmac.new(self.secret, request.headers[TIMESTAMP_HEADER].encode() + b"." + body, hashlib.sha256)
        if not hmac.compare_digest(request.headers[SIGNATURE_HEADER], f"sha256={mac.hexdigest()}"):
            return web.json_response({"error": "bad signature"}, status=401)
        key = request.headers[IDEMPOTENCY_HEADER]
        self.requests[key] += 1
        if any(action["idempotency_key"] == key for action in self.executed):
            return web.json_response({"status": "duplicate", "idempotency_key": key}, status=200)
        self.executed.append(json.loads(body))
        if self._hold_next:
            self._hold_next = False
            self.held.set()
            await self._release.wait()
        return web.json_response({"status": "queued", "idempotency_key": key}, status=202)
