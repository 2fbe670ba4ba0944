"""The PostgreSQL run store across server restarts: pooled calls reconnect, LISTEN re-subscribes, a down server
gives a clear error instead of a hang.

These tests restart the session's PostgreSQL; each restores it to running before it ends.
"""

from __future__ import annotations

import asyncio
import itertools

import asyncpg
import pytest

from bot.store.factory import open_store
from bot.store.ports import Subscription
from bot.store.protocol import RunStore, StoreUnavailableError
from bot.store.records import RunStatus
from bot.store.sql.postgres import PostgresDatabase
from bot.store.sql.store import SqlRunStore
from samples.store_records import a_run
from testkit.servers.postgres import PostgresServer


@pytest.fixture
async def url(postgres: PostgresServer) -> str:
    return await postgres.new_database()


@pytest.fixture
async def store(url: str):
    opened = open_store(url)
    await opened.migrate()
    yield opened
    await opened.close()


async def next_within(subscription: Subscription, seconds: float) -> str | None:
    """The next message, or None if none came in `seconds` (a polling step, not a timing assertion)."""
    try:
        async with asyncio.timeout(seconds):
            return await anext(subscription)
    except TimeoutError:
        return None


@pytest.mark.parametrize("loop_blocked", [False, True], ids=["loop-running", "loop-blocked"])
async def test_a_store_keeps_working_after_postgres_restarts(
    store: RunStore, postgres: PostgresServer, loop_blocked: bool
) -> None:
    """Blocked, the loop has not seen the old connection close: the call meets it dead and is re-sent."""
    await store.runs.create_run(a_run("r1"))
    await store.leases.acquire_lease("r1", "replica-a", ttl_s=30)  # the pool now holds a live connection
    if loop_blocked:
        postgres.restart()
    else:
        await asyncio.to_thread(postgres.restart)
    await store.runs.checkpoint("r1", status=RunStatus.FINISHED, trace_json="{}")
    saved = await store.runs.get_run("r1")
    assert saved is not None
    assert saved.status is RunStatus.FINISHED


async def test_a_down_server_is_a_clear_error_then_the_store_recovers(
    store: RunStore, postgres: PostgresServer
) -> None:
    await store.runs.create_run(a_run("r1"))
    await asyncio.to_thread(postgres.stop)
    try:
        with pytest.raises(StoreUnavailableError, match=r"PostgreSQL at 127\.0\.0\.1:\d+/test_\w+ is unavailable"):
            await store.runs.get_run("r1")
        with pytest.raises(StoreUnavailableError, match="nothing was sent"):
            await store.dedupe.remember("Ev1", ttl_s=60)
    finally:
        await asyncio.to_thread(postgres.start)
    assert await store.dedupe.remember("Ev1", ttl_s=60)
    assert await store.runs.get_run("r1") == a_run("r1")


async def test_a_statement_that_hangs_times_out_with_a_clear_error(url: str) -> None:
    store = SqlRunStore(PostgresDatabase(url, command_timeout_s=0.5))
    await store.migrate()
    blocker = await asyncpg.connect(url)
    try:
        async with blocker.transaction():
            await blocker.execute("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE")
            with pytest.raises(StoreUnavailableError, match="is unavailable \\(TimeoutError"):
                await store.runs.get_run("r1")
        assert await store.runs.get_run("r1") is None
    finally:
        await blocker.close()
        await store.close()


@pytest.fixture
async def listener_and_sender(url: str):
    """Two stores on one database, as two replicas: one listens, the other notifies."""
    listener, sender = open_store(url), open_store(url)
    yield listener, sender
    await listener.close()
    await sender.close()


async def test_listen_survives_a_postgres_restart(listener_and_sender, postgres: PostgresServer) -> None:
    listener, sender = listener_and_sender
    subscription = listener.topics.listen("approvals")
    await subscription.subscribed.wait()
    await sender.topics.notify("approvals", "before")
    assert await anext(subscription) == "before"

    await asyncio.to_thread(postgres.restart)
    # Messages sent before LISTEN is re-established are lost (documented): send until one arrives.
    for n in itertools.count():
        await sender.topics.notify("approvals", f"after-{n}")
        if (received := await next_within(subscription, 0.2)) is not None:
            break
    assert received.startswith("after-")
    assert subscription.subscribed.is_set()
    await sender.topics.notify("approvals", "next")
    late = [payload async for payload in _until(subscription, "next")]
    assert all(payload.startswith("after-") for payload in late)  # slow deliveries of the probes, if any
    await listener.close()
    assert [payload async for payload in subscription] == []  # closed: iteration ends


async def _until(subscription: Subscription, last: str):
    async for payload in subscription:
        if payload == last:
            return
        yield payload


async def test_listen_waits_for_a_server_that_is_down_at_first(listener_and_sender, postgres: PostgresServer) -> None:
    listener, sender = listener_and_sender
    await asyncio.to_thread(postgres.stop)
    try:
        subscription = listener.topics.listen("approvals")
        await asyncio.sleep(0.3)  # let it fail to connect a few times
        assert not subscription.subscribed.is_set()
    finally:
        await asyncio.to_thread(postgres.start)
    await subscription.subscribed.wait()
    await sender.topics.notify("approvals", "a1")
    assert await anext(subscription) == "a1"
