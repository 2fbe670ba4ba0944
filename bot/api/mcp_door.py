"""`/mcp`: the MCP server's streamable HTTP transport, served by aiohttp on `serve`'s listener through a small ASGI
bridge (the SDK's transport is an ASGI app; the bot's server is aiohttp, with its connection and body limits).

The bridge checks the bearer token first (401 JSON, as the REST door), reads the body (64 KiB, within the
listener's body deadline, which it then lifts: a tool's answer may stream progress for minutes), and hands the
request to the SDK with the client's name as its authenticated user, which the tools read. The transport is
stateless: each POST is served on its own, so any replica answers any call and a restart breaks no session.
A client that hangs up is told to the SDK as a disconnect, which ends the tool call it was waiting for.
"""

from __future__ import annotations

import asyncio
from typing import Any

import structlog
from aiohttp import web
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from bot.api.problems import BODY_TOO_LARGE, UNAUTHORIZED, problem
from bot.api.rest import answered
from bot.api.settings import BODY_BYTES
from bot.api.tokens import ApiTokens
from bot.http_limits.bodies import read_body

log = structlog.get_logger("opsagent.api")

PATH = "/mcp"
DISCONNECT_POLL_S = 0.5
"""How often a streaming answer checks whether its client is still connected (aiohttp does not say on its own)."""


class McpDoor:
    """The MCP server on aiohttp: `start` before serving, `close` at the end."""

    def __init__(self, server: MCPServer, tokens: ApiTokens) -> None:
        self._tokens = tokens
        # Every request carries a bearer token, which a page reached by DNS rebinding does not have: no Host check.
        no_host_check = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        self._app = server.streamable_http_app(
            streamable_http_path=PATH,
            stateless_http=True,
            max_request_body_size=BODY_BYTES,
            transport_security=no_host_check,
        )
        self._manager = server.session_manager
        self._closing = asyncio.Event()
        self._running: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    def routes(self) -> list[web.RouteDef]:
        """`/mcp`, every method (the SDK answers those it does not serve)."""
        return [web.route("*", PATH, self.handle)]

    async def start(self) -> None:
        """Run the SDK's session manager in a task of its own (its task group must not be a request's)."""
        self._running = asyncio.create_task(self._hold(), name="mcp-server")
        await self._ready.wait()

    async def close(self) -> None:
        """Stop the SDK's session manager: calls in progress end."""
        if self._running is not None:
            self._closing.set()
            await asyncio.gather(self._running, return_exceptions=True)

    async def _hold(self) -> None:
        async with self._manager.run():
            self._ready.set()
            await self._closing.wait()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """One MCP request: token, body, then the SDK."""
        client = self._tokens.client(request.headers.get("Authorization", ""))
        if client is None:
            log.warning("mcp_unauthorised", remote=request.remote)
            return answered(UNAUTHORIZED)
        if not self._ready.is_set() or self._closing.is_set():
            return answered(problem(503, "not_serving", "the MCP server is starting or stopping: try again shortly"))
        body = await read_body(request, BODY_BYTES)
        if body is None:
            return answered(BODY_TOO_LARGE)
        exchange = _Exchange(request, body)
        await self._app(exchange.scope(client), exchange.receive, exchange.send)
        return exchange.response or web.Response(status=499)  # the client left before any answer began


class _Exchange:
    """One request between aiohttp and the ASGI app: its scope, its body once, then a disconnect when the client
    leaves; the app's answer written to aiohttp as it comes."""

    def __init__(self, request: web.Request, body: bytes) -> None:
        self._request = request
        self._body: bytes | None = body
        self.response: web.StreamResponse | None = None

    def scope(self, client: str) -> dict[str, Any]:
        """The ASGI scope of the request, its user the API client (the SDK reads `user`; the tools too)."""
        request = self._request
        peer = request.transport.get_extra_info("peername") if request.transport is not None else None
        return {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": f"{request.version.major}.{request.version.minor}",
            "method": request.method,
            "scheme": request.scheme,
            "path": request.path,
            "raw_path": request.raw_path.split("?", 1)[0].encode(),
            "query_string": request.query_string.encode(),
            "root_path": "",
            "headers": [(name.lower(), value) for name, value in request.raw_headers],
            "client": tuple(peer[:2]) if isinstance(peer, tuple) else None,
            "server": None,
            "user": AuthenticatedUser(AccessToken(token="", client_id=client, scopes=[])),
        }

    async def receive(self) -> dict[str, Any]:
        """The body in one message, then (only) a disconnect once the client has left."""
        if self._body is not None:
            body, self._body = self._body, None
            return {"type": "http.request", "body": body, "more_body": False}
        # aiohttp signals no disconnect a handler can await: its transport is looked at every DISCONNECT_POLL_S
        while (transport := self._request.transport) is not None and not transport.is_closing():  # noqa: ASYNC110
            await asyncio.sleep(DISCONNECT_POLL_S)
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        """The app's answer: its head prepares aiohttp's response, its body parts are written as they come."""
        match message["type"]:
            case "http.response.start":
                response = web.StreamResponse(status=message["status"])
                for name, value in message.get("headers", []):
                    response.headers.add(name.decode("latin-1"), value.decode("latin-1"))
                self.response = response
                await response.prepare(self._request)
            case "http.response.body" if self.response is not None:
                await self.response.write(message.get("body", b""))
                if not message.get("more_body", False):
                    await self.response.write_eof()
            case _:
                pass
