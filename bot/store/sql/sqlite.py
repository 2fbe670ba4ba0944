"""The embedded run store's database: one SQLite file, its statements run on one worker thread per store.

SQLite's own locking (WAL, a busy timeout) keeps two stores on one file atomic; notify reaches this process only.
Every commit survives a crash of the process (WAL, `synchronous = NORMAL`); a `durable` write (the side-effect
journal) also waits for the WAL to be synced to disk, one sync for every durable write committed before it (a group
commit). An fsync per commit, on the one worker every run's checkpoint queues on, made a click wait ~0.6 s behind
150 runs' writes (bench suite r).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import os
import queue
import re
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future
from datetime import datetime
from enum import Enum
from typing import Any, TypeVar

from bot.store.ports import Subscription
from bot.store.protocol import SchemaVersionError, StoreUnavailableError
from bot.store.records import utc_now
from bot.store.sql.database import Database, Row, as_utc
from bot.store.sql.schema import NOT_MIGRATED, Dialect, bootstrap_sql, next_migration

T = TypeVar("T")

_LOCAL_TOPICS: dict[tuple[str, str], set[Subscription]] = {}
"""Subscriptions by (database file, topic): stores on one file in one process hear each other."""


@functools.lru_cache(maxsize=256)
def _qmark(sql: str) -> str:
    """`$1` parameters as SQLite's `?1`."""
    return re.sub(r"\$(\d+)", r"?\1", sql)


def _param(value: Any) -> Any:
    """A value as SQLite stores it: times as fixed-width ISO-8601 UTC text (so they sort), enums as text."""
    if isinstance(value, datetime):
        return as_utc(value).isoformat(timespec="microseconds")
    if isinstance(value, Enum):
        return value.value
    return value


class _Worker:
    """The one thread a store's statements run on, with two lanes: what a person waits on (a click's approval)
    goes before the routine statements queued (every run's checkpoints), each lane in order."""

    _STOP = 2

    def __init__(self, name: str) -> None:
        self._queue: queue.PriorityQueue[tuple[int, int, Callable[[], Any] | None, Future[Any] | None]] = (
            queue.PriorityQueue()
        )
        self._order = itertools.count()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, work: Callable[[], T], *, urgent: bool) -> Future[T]:
        """Queue `work`; its future."""
        future: Future[T] = Future()
        self._queue.put((0 if urgent else 1, next(self._order), work, future))
        return future

    def shutdown(self) -> None:
        """Stop after the work queued before this."""
        self._queue.put((self._STOP, next(self._order), None, None))

    def _run(self) -> None:
        while True:
            _, _, work, future = self._queue.get()
            if work is None or future is None:
                return
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(work())
            except BaseException as error:
                future.set_exception(error)


class SqliteDatabase(Database):
    """The `Database` of a run store in one SQLite file: the default, for a single replica."""

    dialect = Dialect.SQLITE

    def __init__(self, path: str, *, clock: Callable[[], datetime] = utc_now, busy_timeout_s: float = 10.0) -> None:
        super().__init__(clock)
        self.path = path
        self._busy_timeout_s = busy_timeout_s
        self._worker = _Worker(f"sqlite-run-store:{os.path.basename(path)}")
        self._connection: sqlite3.Connection | None = None
        """Opened and used only on the worker thread."""
        self._closed = False
        self._subscriptions: dict[Subscription, tuple[str, str]] = {}
        self._durable_writes = 0
        """Durable writes committed (counted on the worker thread)."""
        self._synced_through = 0
        """The durable writes a sync has put on disk (the count when the last sync began)."""
        self._sync: asyncio.Future[None] | None = None

    async def _call(self, work: Callable[[sqlite3.Connection], T], *, urgent: bool = False) -> T:
        """Run `work` on the worker thread with the connection (`urgent`: before the queued routine statements);
        SQLite's errors made clear."""
        if self._closed:
            raise RuntimeError(f"the run store on {self.path} is closed")
        return await asyncio.wrap_future(self._worker.submit(functools.partial(self._on_worker, work), urgent=urgent))

    def _on_worker(self, work: Callable[[sqlite3.Connection], T]) -> T:
        try:
            return work(self._open())
        except sqlite3.OperationalError as error:
            if "no such table" in str(error):
                raise SchemaVersionError(f"{NOT_MIGRATED} ({self.path}: {error})") from error
            if "locked" in str(error) or "busy" in str(error):
                raise StoreUnavailableError(
                    f"SQLite database {self.path} stayed locked for {self._busy_timeout_s:g} s: another process "
                    "holds it; nothing was written, retry later"
                ) from error
            raise

    def _open(self) -> sqlite3.Connection:
        if self._connection is None:
            try:
                connection = sqlite3.connect(
                    self.path, timeout=self._busy_timeout_s, isolation_level=None, check_same_thread=False
                )
                connection.execute("PRAGMA journal_mode = WAL")
                connection.execute("PRAGMA synchronous = NORMAL")  # durable through a process crash
            except sqlite3.OperationalError as error:
                raise StoreUnavailableError(
                    f"cannot open SQLite database {self.path} ({error}): check that its directory exists and "
                    "is writable"
                ) from error
            connection.row_factory = sqlite3.Row
            self._connection = connection
        return self._connection

    async def fetch(self, sql: str, *args: Any, idempotent: bool = True, urgent: bool = False) -> list[Row]:
        params = [_param(arg) for arg in args]
        return await self._call(
            lambda db: [dict(row) for row in db.execute(_qmark(sql), params).fetchall()], urgent=urgent
        )

    async def execute(
        self, sql: str, *args: Any, idempotent: bool = True, durable: bool = False, urgent: bool = False
    ) -> int:
        params = [_param(arg) for arg in args]
        if not durable:
            return await self._call(lambda db: db.execute(_qmark(sql), params).rowcount, urgent=urgent)
        changed, write = await self._call(
            lambda db: (db.execute(_qmark(sql), params).rowcount, self._count_durable()), urgent=urgent
        )
        await self._synced(write)
        return changed

    def _count_durable(self) -> int:
        self._durable_writes += 1
        return self._durable_writes

    async def _synced(self, write: int) -> None:
        """Wait until a sync that began after durable write number `write` committed has ended: every durable write
        waiting at once shares one sync."""
        while self._synced_through < write:
            if self._sync is None or self._sync.done():  # few writes are durable, and an action waits on each
                self._sync = asyncio.ensure_future(self._call(self._sync_wal, urgent=True))
            await asyncio.shield(self._sync)

    def _sync_wal(self, db: sqlite3.Connection) -> None:
        """Sync the WAL, and with it every commit before: a one-page commit with `synchronous = FULL` (the schema's
        `user_version`, which nothing reads, is the page)."""
        covered = self._durable_writes
        db.execute("PRAGMA synchronous = FULL")
        try:
            db.execute(f"PRAGMA user_version = {covered % 2**31}")
        finally:
            db.execute("PRAGMA synchronous = NORMAL")
        self._synced_through = covered

    async def migrate(self) -> None:
        """Apply the missing migrations, each in its own `BEGIN IMMEDIATE` transaction; a no-op when current."""
        await self._call(self._migrate)

    def _migrate(self, db: sqlite3.Connection) -> None:
        while True:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(bootstrap_sql(self.dialect))
                migration = next_migration(row[0] for row in db.execute("SELECT version FROM schema_migrations"))
                if migration is not None:
                    for statement in migration.statements(self.dialect):
                        db.execute(statement)
                    db.execute(
                        "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                        (migration.version, migration.name, _param(self.now())),
                    )
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            if migration is None:
                return

    async def close(self) -> None:
        """Close subscriptions, then the connection, then the worker thread."""
        for subscription in list(self._subscriptions):
            await subscription.aclose()
        if self._closed:
            return
        if self._connection is not None:
            await self._call(lambda db: db.close())
        self._closed = True
        self._worker.shutdown()

    async def notify(self, topic: str, payload: str) -> None:
        """Deliver to this process's subscribers of the topic on this database file."""
        for subscription in list(_LOCAL_TOPICS.get(self._topic_key(topic), ())):
            subscription.deliver(payload)

    def listen(self, topic: str) -> Subscription:
        """Subscribe to the topic in this process; subscribed at once."""
        subscription = Subscription(self._unsubscribe)
        key = self._topic_key(topic)
        _LOCAL_TOPICS.setdefault(key, set()).add(subscription)
        self._subscriptions[subscription] = key
        subscription.subscribed.set()
        return subscription

    async def _unsubscribe(self, subscription: Subscription) -> None:
        key = self._subscriptions.pop(subscription)
        listeners = _LOCAL_TOPICS[key]
        listeners.discard(subscription)
        if not listeners:
            del _LOCAL_TOPICS[key]

    def _topic_key(self, topic: str) -> tuple[str, str]:
        return os.path.realpath(self.path), topic
