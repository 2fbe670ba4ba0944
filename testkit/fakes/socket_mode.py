"""A fake Slack Socket Mode endpoint on 127.0.0.1: `apps.connections.open` and the `/link` WebSocket it hands out.

Tests push `events_api` and `interactive` envelopes to the connected app, see its acks, and force disconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import WSCloseCode, WSMsgType, web
from slack_sdk.web.async_client import AsyncWebClient

from testkit.fakes.slack_requests import signed_event
from testkit.fakes.slack_workspace import APP_ID, SIGNING_SECRET
from testkit.servers.local_server import LocalServer

APP_TOKEN = "xapp-1-A0OPSAGENT-1-opsagent-test-app-token"
HOST = "applink-fake"


@dataclass
class Connection:
    """One WebSocket session of the app, from the `hello` to its close."""

    index: int
    ticket: str
    ws: web.WebSocketResponse
    received: list[dict[str, Any]] = field(default_factory=list)
    """Every JSON text frame the app sent on this connection (its acks), in order."""
    closed: bool = False


@dataclass
class Envelope:
    """An envelope as pushed to the app."""

    envelope_id: str
    type: str
    payload: dict[str, Any]
    connection: int
    """The index of the connection it went out on."""
    body: dict[str, Any]
    """The whole frame as sent."""


@dataclass
class Ack:
    """The app's answer to an envelope: `{"envelope_id": ..., "payload"?: ...}`."""

    envelope_id: str
    payload: dict[str, Any] | None
    connection: int


class SocketModeFake(LocalServer):
    """Slack's Socket Mode side on a free port: point the Socket Mode client's web client at `api_url`.

    `apps.connections.open` needs the app-level token (`Authorization: Bearer xapp-…`) and answers a
    `ws://…/link/?ticket=…` URL; a ticket connects once, as on Slack, so every reconnect must open a new
    URL. Each session gets a `hello`. Push with `push_event` / `push_interactive` (to the newest open
    connection), read `acks`, `envelopes`, `connections`, `opened` (calls to `apps.connections.open`),
    and force `disconnect` (Slack's `refresh_requested` message) or `drop` (a close frame from the server).
    """

    def __init__(self, *, app_token: str = APP_TOKEN, app_id: str = APP_ID) -> None:
        super().__init__()
        self.app_token = app_token
        self.app_id = app_id
        self.connections: list[Connection] = []
        self.envelopes: list[Envelope] = []
        self.acks: list[Ack] = []
        self.opened: list[dict[str, Any]] = []
        """Every `apps.connections.open` call: {"ok", "error"?, "http_method"}."""
        self._tickets: set[str] = set()
        self._changed = asyncio.Condition()

    # --- lifecycle --------------------------------------------------------------------------------

    @property
    def api_url(self) -> str:
        """The `base_url` for the web client that calls `apps.connections.open`."""
        return f"{self.url}/api/"

    def web_client(self) -> AsyncWebClient:
        """A tokenless web client on this fake, for `AsyncSocketModeHandler(web_client=...)`.

        The Socket Mode client passes the app token itself (`apps_connections_open(app_token=...)`).
        """
        return AsyncWebClient(base_url=self.api_url)

    def routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/api/apps.connections.open", self._handle_open)
        app.router.add_get("/link/", self._handle_link)

    async def close(self) -> None:
        """Close the sessions still open (close the client first, or it reconnects), then the server."""
        for connection in self.open_connections:
            with contextlib.suppress(Exception):
                await connection.ws.close(code=WSCloseCode.GOING_AWAY)
        await super().close()

    # --- what tests call --------------------------------------------------------------------------

    @property
    def open_connections(self) -> list[Connection]:
        return [c for c in self.connections if not c.closed]

    async def wait_connected(self, count: int = 1, *, within: float = 10.0) -> Connection:
        """Wait until `count` sessions have got their `hello` and one is open; the newest open one."""
        async with asyncio.timeout(within), self._changed:
            await self._changed.wait_for(lambda: len(self.connections) >= count and bool(self.open_connections))
        return self.open_connections[-1]

    async def wait_ack(self, envelope_id: str, *, within: float = 10.0) -> Ack:
        """Wait for the app's ack of an envelope."""
        async with asyncio.timeout(within), self._changed:
            await self._changed.wait_for(lambda: self.ack_for(envelope_id) is not None)
        ack = self.ack_for(envelope_id)
        assert ack is not None
        return ack

    def ack_for(self, envelope_id: str) -> Ack | None:
        return next((a for a in self.acks if a.envelope_id == envelope_id), None)

    async def push_event(
        self,
        event: Mapping[str, Any],
        *,
        event_id: str | None = None,
        retry_attempt: int = 0,
        retry_reason: str = "",
    ) -> str:
        """Deliver an Events API event; the envelope id.

        `event` is the inner event (e.g. `app_mention_event(...)`), wrapped in the same `event_callback`
        body HTTP mode gets, or a whole `event_callback` body. Pass the same `event_id` with
        `retry_attempt=1..3` (and a `retry_reason` such as "timeout") to emulate Slack's redelivery.
        """
        if event.get("type") == "event_callback":
            payload = dict(event)
        else:  # the very body `signed_event` POSTs in HTTP mode; the signature is not needed here
            payload = json.loads(signed_event(SIGNING_SECRET, event, event_id=event_id)[0])
        extra = {"accepts_response_payload": False, "retry_attempt": retry_attempt, "retry_reason": retry_reason}
        return await self._push("events_api", payload, extra)

    async def push_interactive(self, payload: Mapping[str, Any]) -> str:
        """Deliver an interactivity payload (e.g. `block_actions_payload(...)`); the envelope id."""
        return await self._push("interactive", dict(payload), {"accepts_response_payload": False})

    async def disconnect(self, reason: str = "refresh_requested") -> Connection:
        """Send Slack's `disconnect` message on the newest open session (the client should open a new one)."""
        connection = await self.wait_connected()
        await connection.ws.send_json({"type": "disconnect", "reason": reason, "debug_info": {"host": HOST}})
        return connection

    async def drop(self, code: int = WSCloseCode.GOING_AWAY) -> list[Connection]:
        """Close every open session from the server side with a close frame."""
        dropped = self.open_connections
        for connection in dropped:
            await connection.ws.close(code=code, message=b"fake drop")
        return dropped

    # --- the server -------------------------------------------------------------------------------

    async def _push(self, kind: str, payload: dict[str, Any], extra: dict[str, Any]) -> str:
        connection = await self.wait_connected()
        envelope_id = str(uuid.uuid4())
        body = {"envelope_id": envelope_id, "payload": payload, "type": kind} | extra
        self.envelopes.append(Envelope(envelope_id, kind, payload, connection.index, body))
        await connection.ws.send_str(json.dumps(body))
        return envelope_id

    async def _handle_open(self, request: web.Request) -> web.Response:
        header = request.headers.get("Authorization", "")
        token = header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else None
        if token is None and request.can_read_body:
            token = dict(parse_qsl(await request.text())).get("token")
        record: dict[str, Any] = {"http_method": request.method}
        self.opened.append(record)
        if not token:
            record |= {"ok": False, "error": "not_authed"}
        elif token != self.app_token:
            record |= {"ok": False, "error": "invalid_auth"}
        else:
            ticket = uuid.uuid4().hex
            self._tickets.add(ticket)
            url = f"ws://127.0.0.1:{self.port}/link/?ticket={ticket}&app_id={self.app_id}"
            record |= {"ok": True, "url": url}
        return web.json_response({k: v for k, v in record.items() if k != "http_method"})

    async def _handle_link(self, request: web.Request) -> web.StreamResponse:
        ticket = request.query.get("ticket", "")
        if ticket not in self._tickets:
            return web.Response(status=401, text="invalid or used ticket")
        self._tickets.discard(ticket)
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        connection = Connection(len(self.connections), ticket, ws)
        self.connections.append(connection)
        await ws.send_json(
            {
                "type": "hello",
                "num_connections": len(self.open_connections),
                "debug_info": {"host": HOST, "build_number": 1, "approximate_connection_time": 18060},
                "connection_info": {"app_id": self.app_id},
            }
        )
        await self._notify()
        try:
            async for message in ws:
                if message.type != WSMsgType.TEXT:
                    continue
                data = json.loads(message.data)
                connection.received.append(data)
                if "envelope_id" in data:
                    self.acks.append(Ack(data["envelope_id"], data.get("payload"), connection.index))
                    await self._notify()
        finally:
            connection.closed = True
            await self._notify()
        return ws

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()
