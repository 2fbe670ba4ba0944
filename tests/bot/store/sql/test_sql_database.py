"""What both databases (`bot.store.sql.database`) share: aware UTC times, topics between two stores, a clear
error for a SQLite file that cannot be opened; and how SQLite waits for a lock, syncs and checkpoints.
"""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from bot.store.factory import open_store
from bot.store.protocol import RunStore, StoreUnavailableError
from bot.store.sql import sqlite as sqlite_module
from bot.store.sql.sqlite import SqliteDatabase
from samples.store_records import a_run, an_approval


async def test_timestamps_come_back_aware_utc_and_naive_ones_are_refused(store: RunStore) -> None:
    plus_two = datetime(2026, 11, 30, 5, 0, tzinfo=timezone(timedelta(hours=2)))
    await store.runs.create_run(a_run("r1", at=plus_two))
    saved = await store.runs.get_run("r1")
    assert saved is not None
    assert saved.created_at == plus_two
    assert saved.created_at.utcoffset() == timedelta(0)
    naive = an_approval().model_copy(update={"expires_at": datetime(2026, 11, 30, 3, 15)})
    with pytest.raises(ValueError, match="naive datetime"):
        await store.approvals.add(naive)


async def test_notify_reaches_a_listener_on_another_store(store: RunStore, replica: RunStore) -> None:
    async with store.topics.listen("approvals") as subscription:
        await subscription.subscribed.wait()
        await replica.topics.notify("other-topic", "not for us")
        await replica.topics.notify("approvals", "a1")
        await replica.topics.notify("approvals", "a2")
        assert [await anext(subscription), await anext(subscription)] == ["a1", "a2"]
    assert [payload async for payload in subscription] == []  # closed: iteration ends


async def test_a_sqlite_file_in_a_missing_directory_is_a_clear_error(tmp_path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/missing/runs.db")
    try:
        with pytest.raises(StoreUnavailableError, match="check that its directory exists"):
            await store.migrate()
    finally:
        await store.close()


async def test_sqlite_runs_a_statement_a_person_waits_on_before_the_queued_routine_ones(tmp_path) -> None:
    path = str(tmp_path / "lanes.db")
    database = SqliteDatabase(path)
    other = sqlite3.connect(path, isolation_level=None)  # another process's write holds the file
    try:
        await database.execute("CREATE TABLE t (n INTEGER)")
        order: list[str] = []

        async def statement(name: str, *, urgent: bool) -> None:
            await database.execute("INSERT INTO t VALUES (1)", urgent=urgent)
            order.append(name)

        other.execute("BEGIN IMMEDIATE")
        routine = [asyncio.ensure_future(statement(f"checkpoint {n}", urgent=False)) for n in range(20)]
        await asyncio.sleep(0.05)  # the first waits on the lock, the other nineteen queue behind it
        click = asyncio.ensure_future(statement("click", urgent=True))
        await asyncio.sleep(0.05)
        other.execute("COMMIT")
        await asyncio.gather(click, *routine)
    finally:
        other.close()
        await database.close()
    assert order[:2] == ["checkpoint 0", "click"], "the click goes before every statement still queued"
    assert order[2:] == [f"checkpoint {n}" for n in range(1, 20)], "each lane keeps its order"


async def test_sqlite_waits_for_a_lock_off_the_event_loop_and_says_so_when_it_stays_held(tmp_path) -> None:
    """A statement that meets the file locked waits on the worker thread: the loop goes on meanwhile; a lock held
    past the busy timeout is a clear error, and nothing was written."""
    path = str(tmp_path / "locked.db")
    database = SqliteDatabase(path, busy_timeout_s=0.5)
    other = sqlite3.connect(path, isolation_level=None)  # another process's write holds the file
    try:
        await database.execute("CREATE TABLE t (n INTEGER)")
        other.execute("BEGIN IMMEDIATE")
        write = asyncio.ensure_future(database.execute("INSERT INTO t VALUES (1)"))
        turns = 0
        while not write.done():
            turns += 1
            await asyncio.sleep(0.01)
        assert turns > 10, "the loop ran on while the write waited for the lock"
        with pytest.raises(StoreUnavailableError, match=r"stayed locked for 0.5 s: another process holds it"):
            await write
        other.execute("ROLLBACK")
        assert await database.fetch("SELECT count(*) AS n FROM t") == [{"n": 0}]
        await database.execute("INSERT INTO t VALUES (2)")  # the lock is free: written at once
        assert await database.fetch("SELECT n FROM t") == [{"n": 2}]
    finally:
        other.close()
        await database.close()


async def test_a_sqlite_file_locked_while_the_store_first_opens_it_is_waited_for(tmp_path) -> None:
    """Another process made the file and holds it exclusively (not yet in WAL mode): the store's first statement
    waits for it on the worker rather than calling the file unopenable."""
    path = str(tmp_path / "theirs.db")
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("CREATE TABLE t (n INTEGER)")
    other.execute("BEGIN EXCLUSIVE")
    database = SqliteDatabase(path)
    try:
        count = asyncio.ensure_future(database.fetch("SELECT count(*) AS n FROM t"))
        await asyncio.sleep(0.1)
        assert not count.done(), "it waits for the lock"
        other.execute("INSERT INTO t VALUES (1)")
        other.execute("COMMIT")
        assert await count == [{"n": 1}]
    finally:
        other.close()
        await database.close()


async def test_sqlite_checkpoints_the_wal_into_the_database_file_as_it_goes(tmp_path, monkeypatch) -> None:
    """The connections never checkpoint as they commit (that is disk work on the event loop): the worker copies
    the WAL into the database file every `CHECKPOINT_EVERY` statements."""
    monkeypatch.setattr(sqlite_module, "CHECKPOINT_EVERY", 10)
    path = tmp_path / "wal.db"
    database = SqliteDatabase(str(path))
    try:
        await database.execute("CREATE TABLE t (blob TEXT)")
        empty = path.stat().st_size
        for _ in range(20):
            await database.execute("INSERT INTO t VALUES ($1)", "x" * 20_000)
        for _ in range(500):
            if path.stat().st_size > empty + 200_000:
                break
            await asyncio.sleep(0.01)
        assert path.stat().st_size > empty + 200_000, "the rows reached the database file before the store closed"
    finally:
        await database.close()


async def test_sqlite_durable_writes_return_once_a_sync_covers_them(tmp_path) -> None:
    database = SqliteDatabase(str(tmp_path / "durable.db"))
    try:
        await database.execute("CREATE TABLE t (n INTEGER)")
        await asyncio.gather(*(database.execute("INSERT INTO t VALUES ($1)", n, durable=True) for n in range(30)))
        [synced] = await database.fetch("PRAGMA user_version")
        [routine] = await database.fetch("PRAGMA synchronous")
    finally:
        await database.close()
    assert synced["user_version"] == 30, "the last sync began after all thirty were committed"
    assert routine["synchronous"] == 1, "routine commits are back to NORMAL (durable through a process crash)"
