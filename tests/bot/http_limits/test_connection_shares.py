"""Who may hold a connection to the bot's HTTP server, over raw sockets from several loopback addresses: an address
past its share loses its longest-waiting connection (not another address's), the unproven share gives way the same
way, open requests past it get 503 while probes and Slack's signed requests are answered from the reserve, and a
server whose every connection has a request in progress refuses the next one and recovers.

The caps are small here (8 connections, 4 unproven, 2 per address); the server reads a head and runs the
admission in this test's event loop, so `settle()` lets it take in what a socket sent before the next step."""

from __future__ import annotations

import asyncio
import contextlib
import time

import aiohttp
import pytest

from bot.http_limits.limits import HttpLimits
from testkit.servers.raw_client import END_OF_HEAD, HALF_POST, HALF_PROBE, answer, first_answer, raw_socket
from testkit.slack_bot import FINISH

LIMITS = HttpLimits(
    header_timeout_s=60, body_timeout_s=60, idle_timeout_s=60, max_connections=8, per_address=2, burst_s=0
)
"""Held sockets stay until the test closes them; every waiting connection counts against its address at once."""
BURSTY = HttpLimits(max_connections=64, per_address=2, burst_s=60)
SLOW_BODY = HALF_POST + b"Content-Length: 100\r\n" + END_OF_HEAD + b'{"type": '
"""An unsigned post whose body stops: an open request in progress until its body's time is up."""


def forged(body: bytes) -> bytes:
    """A post carrying Slack's signature header names (not a valid signature) with `body`."""
    stamp = str(int(time.time())).encode()
    return HALF_POST + b"X-Slack-Signature: v0=00\r\nX-Slack-Request-Timestamp: " + stamp + b"\r\n" + body


@pytest.fixture
def app_options(request):
    return {"limits": getattr(request, "param", LIMITS)}


async def settle() -> None:
    """A few turns of the event loop, for the server to accept a connection and read what it sent (a step, not a
    timing assertion)."""
    await asyncio.sleep(0.05)


async def hold(held: contextlib.AsyncExitStack, harness, source: str, data: bytes):
    """A socket from `source` that sent `data` and is kept open until `held` closes."""
    reader, writer = await held.enter_async_context(raw_socket(harness.url, source))
    writer.write(data)
    await writer.drain()
    await settle()
    return reader, writer


async def served(connection) -> bytes:
    """Complete a held probe's head; the status line and headers of its answer."""
    reader, writer = connection
    writer.write(END_OF_HEAD)
    return await first_answer(reader)


async def fresh_probe(harness) -> int:
    """A health probe on a connection of its own, as a kubelet sends it."""
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as http,
        http.get(f"{harness.url}/healthz") as response,
    ):
        return response.status


async def test_past_its_share_an_address_loses_its_longest_waiting_connection_to_the_new_one(harness) -> None:
    async with contextlib.AsyncExitStack() as held:
        oldest = await hold(held, harness, "127.0.0.2", HALF_PROBE)
        older = await hold(held, harness, "127.0.0.2", HALF_PROBE)
        newest = await hold(held, harness, "127.0.0.2", HALF_PROBE)
        assert (await answer(oldest[0])).startswith(b"HTTP/1.1 503")
        assert (await served(older)).startswith(b"HTTP/1.1 200")
        assert (await served(newest)).startswith(b"HTTP/1.1 200")


async def test_an_address_churning_half_sent_requests_leaves_another_address_connection_alone(harness) -> None:
    async with contextlib.AsyncExitStack() as held:
        neighbour = await hold(held, harness, "127.0.0.1", HALF_PROBE)
        churned = [await hold(held, harness, "127.0.0.2", HALF_PROBE) for _ in range(10)]
        for reader, _ in churned[: -LIMITS.per_address]:
            assert (await answer(reader)).startswith(b"HTTP/1.1 503")
        assert (await served(neighbour)).startswith(b"HTTP/1.1 200")
        for connection in churned[-LIMITS.per_address :]:
            assert (await served(connection)).startswith(b"HTTP/1.1 200")


async def test_past_the_unproven_share_the_longest_waiting_connection_of_any_address_gives_way(harness) -> None:
    async with contextlib.AsyncExitStack() as held:
        waiting = [await hold(held, harness, f"127.0.0.{n}", HALF_PROBE) for n in range(2, 6)]  # 4: the share
        newest = await hold(held, harness, "127.0.0.6", HALF_PROBE)
        assert (await answer(waiting[0][0])).startswith(b"HTTP/1.1 503")
        for connection in [*waiting[1:], newest]:
            assert (await served(connection)).startswith(b"HTTP/1.1 200")


async def test_open_requests_past_the_unproven_share_get_503_while_probes_and_slack_are_answered(
    harness, script
) -> None:
    script.append([FINISH])
    async with contextlib.AsyncExitStack() as held:
        for n in range(2, 6):  # 4 unsigned posts whose bodies stop: the unproven share, in progress
            await hold(held, harness, f"127.0.0.{n}", SLOW_BODY)
        reader, _ = await hold(held, harness, "127.0.0.6", SLOW_BODY)
        refused = await answer(reader)
        assert refused.startswith(b"HTTP/1.1 503"), refused[:200]
        assert b"retry in a second" in refused
        assert await fresh_probe(harness) == 200
        ts = await harness.mention("order-service 5xx at 12%")  # signed: answered 200 (asserted inside)
        await harness.ended(ts)


async def test_an_address_forging_slack_header_names_holds_no_more_than_its_share_of_the_reserve(
    harness, script
) -> None:
    script.append([FINISH])
    async with contextlib.AsyncExitStack() as held:
        for n in range(2, 6):  # the unproven share, full of open requests in progress
            await hold(held, harness, f"127.0.0.{n}", SLOW_BODY)
        for _ in range(LIMITS.per_address):  # the forger's share of signed requests, in progress
            await hold(held, harness, "127.0.0.7", forged(b"Content-Length: 100\r\n" + END_OF_HEAD + b'{"type": '))
        reader, _ = await hold(held, harness, "127.0.0.7", forged(b"Content-Length: 100\r\n" + END_OF_HEAD))
        assert (await answer(reader)).startswith(b"HTTP/1.1 503"), "past its share, counted as open: no room"
        ts = await harness.mention("order-service 5xx at 12%")
        await harness.ended(ts)


async def test_with_a_request_in_progress_on_every_connection_the_next_is_refused_then_served_again(
    harness,
) -> None:
    async with contextlib.AsyncExitStack() as held:
        for n in range(2, 6):
            await hold(held, harness, f"127.0.0.{n}", SLOW_BODY)
        for n in (7, 7, 8, 8):  # signed requests (by their head) in progress: the reserve
            await hold(held, harness, f"127.0.0.{n}", forged(b"Content-Length: 100\r\n" + END_OF_HEAD))
        async with raw_socket(harness.url, "127.0.0.9") as (reader, _):
            assert (await answer(reader)).startswith(b"HTTP/1.1 503")
    async with asyncio.timeout(15):
        while True:  # the held sockets are gone: the server takes new connections again
            if await fresh_probe(harness) == 200:
                break
            await asyncio.sleep(0.05)


@pytest.mark.parametrize("app_options", [BURSTY], indirect=True)
async def test_a_burst_of_connections_from_one_address_is_served(harness) -> None:
    statuses = await asyncio.gather(*(fresh_probe(harness) for _ in range(20)))
    assert statuses == [200] * 20
