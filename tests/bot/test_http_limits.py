"""The bot's HTTP server holds no half-sent request forever: raw sockets that stop inside a request head or body
get 408 and are closed, connections past the cap get 503 at once, and bodies past a path's limit get 413.

The limits are short here (the same mechanism as the defaults); each wait for the server's answer is bounded
generously, so that only a server that never answers fails it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import pytest

from bot.http_limits import MIB, HttpLimits

LIMITS = HttpLimits(header_timeout_s=0.5, body_timeout_s=0.5, idle_timeout_s=0.5, drain_s=0.5, max_connections=4)
PATIENCE_S = 15.0
"""How long a test waits for the server to give up on a client (the server's limits are under a second)."""
HEAD = b"POST /slack/events HTTP/1.1\r\nHost: opsagent\r\nContent-Type: application/json\r\n"


@pytest.fixture
def app_options():
    return {"limits": LIMITS}


@contextlib.asynccontextmanager
async def raw_socket(harness) -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    address = urlsplit(harness.url)
    reader, writer = await asyncio.open_connection(address.hostname, address.port)
    try:
        yield reader, writer
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


async def answer(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sends until it closes the connection."""
    return await asyncio.wait_for(reader.read(), PATIENCE_S)


async def test_a_request_head_that_stops_half_way_is_closed(harness) -> None:
    async with raw_socket(harness) as (reader, writer):
        writer.write(HEAD)  # no blank line: the head never ends
        await writer.drain()
        assert (await answer(reader)).startswith(b"HTTP/1.1 408")


async def test_a_connection_that_sends_nothing_is_closed(harness) -> None:
    async with raw_socket(harness) as (reader, _):
        assert (await answer(reader)).startswith(b"HTTP/1.1 408")


async def test_a_body_that_stops_half_way_is_refused(harness) -> None:
    async with raw_socket(harness) as (reader, writer):
        writer.write(HEAD + b"Content-Length: 100\r\n\r\n" + b'{"type": "event')
        await writer.drain()
        got = await answer(reader)
        assert got.startswith(b"HTTP/1.1 408"), got[:200]


async def test_connections_past_the_cap_are_refused_and_the_server_recovers(harness) -> None:
    async with contextlib.AsyncExitStack() as held:
        for _ in range(LIMITS.max_connections):
            _, writer = await held.enter_async_context(raw_socket(harness))
            writer.write(HEAD)
            await writer.drain()
        await asyncio.sleep(0.05)  # let the server accept them (a step for the loop, not a timing assertion)
        async with raw_socket(harness) as (reader, _):
            assert (await answer(reader)).startswith(b"HTTP/1.1 503")
    async with asyncio.timeout(PATIENCE_S):
        while True:  # the held sockets are gone: the server takes new connections again
            async with harness.http.get(f"{harness.url}/healthz") as response:
                if response.status == 200:
                    break
            await asyncio.sleep(0.05)


async def test_a_body_past_the_default_limit_is_too_large(harness) -> None:
    async with harness.http.post(f"{harness.url}/slack/events", data=b"{" + b" " * (2 * MIB)) as response:
        assert response.status == 413
