"""One MCP server's connection: started once, supervised, and restarted with backoff after it crashes.

A task of its own owns the SDK client (whose task groups must be entered and left by one task); calls from
any run share the live session. A call that finds the server restarting waits for it; one that finds it
failing to restart is told so at once. Nothing here raises past a `ToolFailure` the model can act on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import select
import threading
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Iterable, Mapping
from contextlib import AsyncExitStack
from enum import StrEnum
from typing import Any, TextIO, TypeVar

import httpx2
import structlog
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, CallToolResult, Implementation, Tool
from pydantic import ValidationError

from kernel import DEFAULT_REDACTOR, ToolFailure
from opsagent_tools.bounded_json import MAX_JSON_DEPTH
from opsagent_tools.mcp.results import masked
from opsagent_tools.mcp.settings import McpServerSettings, MissingSecret

log = structlog.get_logger("opsagent.mcp")

CLIENT_INFO = Implementation(name="opsagent", version="0.1.0")
RESTART_BACKOFF_S = (1.0, 2.0, 5.0, 10.0, 30.0)
"""Delays before the 1st, 2nd, … consecutive failed restart is retried; the first restart after a crash is immediate."""
MAX_TOOL_PAGES = 50
MAX_TOOLS_PER_SERVER = 1000
"""A server listing more (or paging forever) is cut here: nobody reviews a thousand tools."""
CLOSE_TIMEOUT_S = 6.0
STDERR_LINES = 20
SETTLE_S = 0.5
"""How long a crash's message waits for the server's last stderr lines to be read."""
T = TypeVar("T")


class ServerState(StrEnum):
    """Where a server's connection is in its life."""

    STARTING = "starting"
    UP = "up"
    RESTARTING = "restarting"
    """It crashed or its connection broke; a restart is under way, or waiting out its backoff."""
    FAILED = "failed"
    """It never started: it adds no tools to this process."""
    CLOSED = "closed"


class StderrTail:
    """The last lines a stdio server wrote to its stderr, kept in memory for start-up and crash messages
    (instead of mixing an unredacted server log into ours).

    A thread reads the pipe; each read and the lines it completes are taken under one lock, so `settled` can tell
    when everything written so far has been read: a crashing server's last words reach the pipe just before the
    connection closes, and the thread may not have run since."""

    PARTIAL_BYTES = 4096
    """A line still without its newline keeps at most its last this many bytes."""

    def __init__(self) -> None:
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self._fd = read_fd
        self._lock = threading.Lock()
        self._ended = False
        self._partial = b""
        self._lines: deque[str] = deque(maxlen=STDERR_LINES)
        threading.Thread(target=self._drain, name="mcp-stderr", daemon=True).start()

    def _drain(self) -> None:
        try:
            while True:
                select.select([self._fd], [], [])
                with self._lock:
                    chunk = os.read(self._fd, 65536)
                    if not chunk:
                        self._ended = True
                        return
                    *lines, partial = (self._partial + chunk).split(b"\n")
                    self._lines.extend(line.decode("utf-8", errors="replace").rstrip() for line in lines)
                    self._partial = partial[-self.PARTIAL_BYTES :]
        finally:
            with self._lock:
                self._ended = True
                os.close(self._fd)

    def _pending(self) -> bool:
        """Whether the pipe holds bytes not read yet (under the lock: none is being read either)."""
        return not self._ended and bool(select.select([self._fd], [], [], 0)[0])

    async def settled(self, *, within_s: float = SETTLE_S) -> None:
        """Wait until what the server wrote so far has been read, or `within_s` (a server that never stops writing)."""
        deadline = asyncio.get_running_loop().time() + within_s
        while asyncio.get_running_loop().time() < deadline:
            with self._lock:
                if not self._pending():
                    return
            await asyncio.sleep(0.005)

    def last(self) -> str:
        """The last non-empty line (one still without its newline counts), or ""."""
        with self._lock:
            partial = self._partial.decode("utf-8", errors="replace").rstrip()
            return partial or next((line for line in reversed(self._lines) if line), "")

    def close(self) -> None:
        """Close our end of the pipe; the reader ends once no server holds it either."""
        self.writer.close()


class McpServer:
    """The supervised connection to one configured MCP server."""

    def __init__(
        self,
        name: str,
        settings: McpServerSettings,
        environ: Mapping[str, str],
        *,
        backoff: tuple[float, ...] = RESTART_BACKOFF_S,
    ) -> None:
        self.name = name
        self.settings = settings
        self._environ = environ
        self._backoff = backoff
        self.state = ServerState.STARTING
        self.failure: str | None = None
        """Why the last attempt to start failed, for people and the model."""
        self.tools: tuple[Tool, ...] = ()
        """The tools of the first successful listing; they make the catalogue for the life of the process."""
        self.listing_cut = False
        self.started = False
        """Whether the first start succeeded; only a started server is restarted after a crash."""
        self.restarts = 0
        self.secrets: tuple[str, ...] = ()
        self._client: Client | None = None
        self._broken = asyncio.Event()
        self._attempt = asyncio.Event()
        """Set (and replaced) when an attempt to start ends, in success or failure: waiting calls look again."""
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stderr: StderrTail | None = None
        self._garbage: str | None = None
        """What was wrong with the last thing the server sent that was not MCP, if any: why a start that timed out
        did, or a call ended."""
        self._garbled = asyncio.Event()
        """Set (and replaced) when the server sends something that is not MCP: the calls in flight end."""

    async def start(self) -> None:
        """Start the server and list its tools, within `start_timeout_s`; never raises (see `state`, `failure`)."""
        first = asyncio.create_task(self._attempt.wait())
        self._task = asyncio.create_task(self._supervise(), name=f"mcp-{self.name}")
        await asyncio.wait({first, self._task}, return_when=asyncio.FIRST_COMPLETED)
        first.cancel()
        if self._task.done() and self.state is ServerState.STARTING:  # the supervisor itself failed: say so
            error = None if self._task.cancelled() else self._task.exception()
            self.state, self.failure = ServerState.FAILED, self._describe(error or RuntimeError("stopped"))

    async def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call one of the server's tools; every failure is a `ToolFailure` saying what happened and what to do.

        Something that is not MCP arriving during the call (an answer nested too deep to read, a stray print on
        a stdio server's stdout) ends it at once: its answer may be what was lost, and waiting would only end
        in a timeout that says nothing of why."""
        client = await self._live_client()
        garbled = self._garbled
        try:
            return await _unless(garbled, client.call_tool(tool, arguments))
        except _Garbled:
            raise ToolFailure(
                f"the MCP server '{self.name}' answered with something that is not MCP JSON-RPC "
                f"({self._clean(self._garbage or '?')}), so its answer cannot be read. Whether the call took effect "
                "is unknown; the server's operator should look at it.",
                hint="Check before calling it again, or use another tool.",
            ) from None
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._mark_broken(client)
                if self._stderr is not None:
                    await self._stderr.settled()
                raise ToolFailure(
                    f"the MCP server '{self.name}' closed the connection during the call ({self._why_closed()}); "
                    "it is being restarted. Whether the call took effect is unknown.",
                    hint="Check before calling it again.",
                ) from exc
            raise ToolFailure(
                f"the MCP server '{self.name}' refused the call: {self._clean(exc.message)} "
                f"(JSON-RPC error {exc.code}).",
                hint="Fix the arguments, or use another tool.",
            ) from exc
        except ValidationError as exc:
            raise ToolFailure(
                f"the MCP server '{self.name}' answered with something that is not a valid MCP tool result "
                f"({exc.error_count()} problems, first: {self._clean(str(exc.errors()[0]['msg']))}). "
                "The server's operator should check it.",
                hint="Use another tool.",
            ) from exc
        except (RuntimeError, OSError, httpx2.HTTPError) as exc:
            raise ToolFailure(
                f"the call to the MCP server '{self.name}' failed: {type(exc).__name__}: {self._clean(str(exc))}"
            ) from exc

    def _mark_broken(self, client: Client) -> None:
        """The connection of `client` is gone: later calls wait for the restart instead of reusing it."""
        if self._client is client:
            self._client, self.state = None, ServerState.RESTARTING
            self._broken.set()
            log.warning("mcp_server_down", server=self.name, error=self._why_closed())

    async def close(self) -> None:
        """Stop the server (a stdio process is asked to exit, then killed) and end its supervisor."""
        self._stop.set()
        self._broken.set()
        if self._task is not None:
            done, _ = await asyncio.wait({self._task}, timeout=CLOSE_TIMEOUT_S)
            if not done:
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._task
        if self._stderr is not None:
            self._stderr.close()
        self.state = ServerState.CLOSED

    async def _live_client(self) -> Client:
        while True:
            match self.state:
                case ServerState.UP if self._client is not None:
                    return self._client
                case ServerState.FAILED | ServerState.CLOSED:
                    raise ToolFailure(f"the MCP server '{self.name}' is not running ({self.failure or self.state}).")
                case ServerState.RESTARTING if self.failure is not None:
                    raise ToolFailure(
                        f"the MCP server '{self.name}' is down and restarting it failed ({self.failure}); "
                        "it is retried with backoff.",
                        hint="Use other tools meanwhile.",
                    )
                case _:  # starting or restarting right now: wait for it (dispatch's timeout bounds the wait)
                    await self._attempt.wait()

    async def _supervise(self) -> None:
        failures = 0
        while not self._stop.is_set():
            was_up = False
            try:
                async with self._connected() as client:
                    was_up = True
                    self._client, self.state, self.failure = client, ServerState.UP, None
                    self._attempt_over()
                    await self._broken.wait()
            except Exception as exc:  # a server that fails in any way is reported, never raised
                if not was_up:
                    self.failure = self._describe(exc)
                if self.started:  # a failed first start is reported by `McpConnections.report`, once
                    log.warning("mcp_server_down", server=self.name, error=self.failure or self._describe(exc))
            finally:
                self._client = None
                self._broken.clear()
            if self._stop.is_set():
                return
            if not self.started:  # it never started: no tools to serve, nothing to restart
                self.state = ServerState.FAILED
                self._attempt_over()
                return
            self.state = ServerState.RESTARTING
            if not was_up:
                self._attempt_over()
            failures = 0 if was_up else failures + 1
            if failures:
                delay = self._backoff[min(failures, len(self._backoff)) - 1]
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), delay)
            self.restarts += 1
            log.info("mcp_server_restarting", server=self.name, attempt=self.restarts)

    def _attempt_over(self) -> None:
        done, self._attempt = self._attempt, asyncio.Event()
        done.set()

    @contextlib.asynccontextmanager
    async def _connected(self) -> AsyncIterator[Client]:
        """A connected, initialised client whose tools were listed; the whole start within `start_timeout_s`."""
        async with AsyncExitStack() as stack:
            async with asyncio.timeout(self.settings.start_timeout_s):
                client = await stack.enter_async_context(self._client_for(stack))
                tools, cut = await _list_tools(client)
            if not self.started:
                self.tools, self.listing_cut, self.started = tuple(tools), cut, True
            yield client

    def _client_for(self, stack: AsyncExitStack) -> Client:
        secrets = self.settings.secrets(self._environ)
        self.secrets = tuple(_secret_parts(secrets.values()))
        if self.settings.url is not None:
            http = httpx2.AsyncClient(headers=secrets, timeout=httpx2.Timeout(self.settings.start_timeout_s, read=300))
            stack.push_async_callback(http.aclose)
            transport = streamable_http_client(self.settings.url, http_client=http)
        else:
            assert self.settings.command is not None  # the settings hold exactly one of command and url
            if self._stderr is None:
                self._stderr = StderrTail()
            parameters = StdioServerParameters(
                command=self.settings.command, args=self.settings.args, env=secrets, cwd=self.settings.cwd
            )
            transport = stdio_client(parameters, errlog=self._stderr.writer)
        return Client(transport, client_info=CLIENT_INFO, cache=None, message_handler=self._on_message)

    async def _on_message(self, message: Any) -> None:
        """The session's notifications and transport faults: a fault is remembered (a line that is not JSON-RPC)."""
        if isinstance(message, Exception):
            self._garbage = _not_mcp(message)
            done, self._garbled = self._garbled, asyncio.Event()
            done.set()

    def _why_closed(self) -> str:
        last = self._stderr.last() if self._stderr is not None else ""
        return f"its last stderr line: {self._clean(last)}" if last else "it crashed or exited"

    def _describe(self, exc: BaseException) -> str:
        """One line for people and the model: what failed, and the server's last words when it wrote any."""
        leaves = list(_leaf_exceptions(exc))
        first = leaves[0] if leaves else exc
        match first:
            case TimeoutError() if self._garbage is not None:
                what = f"it sent something that is not MCP JSON-RPC ({self._garbage})"
            case TimeoutError():
                what = f"no answer within start_timeout_s = {self.settings.start_timeout_s:g} s"
            case FileNotFoundError():
                what = f"command not found: {self.settings.command}"
            case MissingSecret():
                what = str(first)
            case MCPError() if first.code == CONNECTION_CLOSED:
                what = "it exited during start-up"
            case _:
                what = f"{type(first).__name__}: {first}" if str(first) else type(first).__name__
        last = self._stderr.last() if self._stderr is not None else ""
        return self._clean(f"{what}; its last stderr line: {last}" if last else what)

    def _clean(self, text: str) -> str:
        return DEFAULT_REDACTOR.redact(masked(text, self.secrets))[:500]


class _Garbled(Exception):
    """The server sent something that is not MCP while a call waited for its answer."""


async def _unless(garbled: asyncio.Event, answer: Awaitable[T]) -> T:
    """What `answer` gives, or `_Garbled` once `garbled` is set first (the call is then cancelled)."""
    call = asyncio.ensure_future(answer)
    spoiled = asyncio.ensure_future(garbled.wait())
    try:
        done, _ = await asyncio.wait({call, spoiled}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        spoiled.cancel()
        call.cancel()  # a no-op once it is done; else it was garbled, or our caller was cancelled
    if call in done:
        return call.result()
    raise _Garbled


def _not_mcp(exc: Exception) -> str:
    """What was wrong with a line the SDK could not read as JSON-RPC, in a few words."""
    if isinstance(exc, ValidationError) and exc.errors():
        detail = str(exc.errors()[0]["msg"])
        return f"JSON nested deeper than {MAX_JSON_DEPTH} levels" if "recursion limit" in detail else detail
    return (str(exc).splitlines() or [type(exc).__name__])[0]


async def _list_tools(client: Client) -> tuple[list[Tool], bool]:
    """Every tool the server lists, page by page, up to the caps; and whether the listing was cut."""
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None or len(tools) >= MAX_TOOLS_PER_SERVER:
            break
    return tools[:MAX_TOOLS_PER_SERVER], cursor is not None or len(tools) > MAX_TOOLS_PER_SERVER


class SdkLogLine(logging.Handler):
    """The SDK's own log records as one structlog line each, without the tracebacks it attaches
    (a misbehaving server is reported by `McpServer`; a person never sees a traceback)."""

    def emit(self, record: logging.LogRecord) -> None:
        log.warning("mcp_sdk", logger=record.name, message=DEFAULT_REDACTOR.redact(record.getMessage())[:300])


def quiet_sdk_logs() -> None:
    """Send the SDK's warnings and errors through `SdkLogLine` instead of Python's default stderr handler."""
    sdk = logging.getLogger("mcp")
    if not any(isinstance(handler, SdkLogLine) for handler in sdk.handlers):
        sdk.addHandler(SdkLogLine(logging.WARNING))
        sdk.propagate = False


def _secret_parts(values: Iterable[str]) -> list[str]:
    """The values to mask in what a server says: each value, and the credentials of an 'Bearer <token>' header."""
    parts: list[str] = []
    for value in values:
        parts.append(value)
        scheme, _, credentials = value.partition(" ")
        if credentials and scheme.isalpha():
            parts.append(credentials.strip())
    return parts


def _leaf_exceptions(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, which the SDK's task groups raise."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaf_exceptions(inner)]
    return [exc]
