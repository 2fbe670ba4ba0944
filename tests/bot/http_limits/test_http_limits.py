"""The bot's HTTP server holds no half-sent request forever: raw sockets that stop inside a request head or body
get 408 and are closed, and bodies past a path's limit get 413 (tests/bot/http_limits/test_connection_shares.py:
who may hold connections).

The limits are short here (the same mechanism as the defaults); each wait for the server's answer is bounded
generously, so that only a server that never answers fails it."""

from __future__ import annotations

import pytest

from bot.http_limits.limits import MIB, HttpLimits
from testkit.servers.raw_client import HALF_POST, answer, raw_socket

LIMITS = HttpLimits(header_timeout_s=0.5, body_timeout_s=0.5, idle_timeout_s=0.5, drain_s=0.5)


@pytest.fixture
def app_options():
    return {"limits": LIMITS}


async def test_a_request_head_that_stops_half_way_is_closed(harness) -> None:
    async with raw_socket(harness.url) as (reader, writer):
        writer.write(HALF_POST)  # no blank line: the head never ends
        await writer.drain()
        assert (await answer(reader)).startswith(b"HTTP/1.1 408")


async def test_a_connection_that_sends_nothing_is_closed(harness) -> None:
    async with raw_socket(harness.url) as (reader, _):
        assert (await answer(reader)).startswith(b"HTTP/1.1 408")


async def test_a_body_that_stops_half_way_is_refused(harness) -> None:
    async with raw_socket(harness.url) as (reader, writer):
        writer.write(HALF_POST + b"Content-Length: 100\r\n\r\n" + b'{"type": "event')
        await writer.drain()
        got = await answer(reader)
        assert got.startswith(b"HTTP/1.1 408"), got[:200]


async def test_a_body_past_the_default_limit_is_too_large(harness) -> None:
    async with harness.http.post(f"{harness.url}/slack/events", data=b"{" + b" " * (2 * MIB)) as response:
        assert response.status == 413
