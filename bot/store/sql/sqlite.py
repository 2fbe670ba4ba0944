"""The embedded run store's database: one SQLite file, the default for a single replica.

A statement runs on the event loop's own thread, on a connection that never waits for a lock: it takes tens of
microseconds, where a hop to a thread and back took tens of milliseconds once the loop was busy (bench suite r: a
click waited ~0.4 s for its run to take the decision, behind every run's checkpoints on the one thread they shared).
What may wait goes to the store's worker thread, whose connection waits up to `busy_timeout_s` for the lock: a
statement that met the file locked (another process writes to it, or the worker holds it), the migrations, the WAL's
syncs and checkpoints. There what a person waits on (`urgent`) goes before routine statements. A large read (a
long trace, a page of the audit log) holds the loop while SQLite answers it, about as long as decoding the same rows
from PostgreSQL would.

SQLite's own locking (WAL, a busy timeout) keeps two stores on one file atomic; notify reaches this process only.
Every commit survives a crash of the process (WAL, `synchronous = NORMAL`); a `durable` write (the side-effect
journal) also waits for the WAL to be synced to disk, one sync for every durable write committed before it (a group
commit).
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

import structlog

from bot.store.ports import Subscription
from bot.store.protocol import SchemaVersionError, StoreUnavailableError
from bot.store.records import utc_now
from bot.store.sql.database import Database, Row, as_utc
from bot.store.sql.schema import NOT_MIGRATED, Dialect, bootstrap_sql, next_migration

T = TypeVar("T")
log = structlog.get_logger("opsagent.store")

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
    """The thread where a store's statements wait (for the file's lock, for the disk), with two lanes: what a person
    waits on (a click's approval) goes before the routine statements queued, each lane in order."""

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


def _is_locked(error: sqlite3.OperationalError) -> bool:
    return "locked" in str(error) or "busy" in str(error)


def _checkpoint_wal(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()


class _Locked(Exception):
    """The file was locked when a statement on the loop's connection asked for it: nothing was done, and the worker's
    connection, which waits for the lock, runs it instead."""


CHECKPOINT_EVERY = 200
"""Statements between two WAL checkpoints on the worker's connection (a checkpoint copies the WAL into the database
file and syncs it: disk work the event loop must not wait on)."""


class SqliteDatabase(Database):
    """The `Database` of a run store in one SQLite file: the default, for a single replica."""

    dialect = Dialect.SQLITE

    def __init__(self, path: str, *, clock: Callable[[], datetime] = utc_now, busy_timeout_s: float = 10.0) -> None:
        super().__init__(clock)
        self.path = path
        self._busy_timeout_s = busy_timeout_s
        self._worker = _Worker(f"sqlite-run-store:{os.path.basename(path)}")
        self._here: sqlite3.Connection | None = None
        """The event loop thread's connection: never waits for a lock (`_Locked` instead)."""
        self._patient: sqlite3.Connection | None = None
        """The worker thread's connection: waits up to `busy_timeout_s` for a lock."""
        self._closed = False
        self._subscriptions: dict[Subscription, tuple[str, str]] = {}
        self._counting = threading.Lock()
        """Guards the durable-write counts: a durable write commits on either thread."""
        self._durable_writes = 0
        """Durable writes committed."""
        self._synced_through = 0
        """The durable writes a sync has put on disk (the count when the last sync began)."""
        self._sync: asyncio.Future[None] | None = None
        self._writes_since_checkpoint = 0
        self._checkpoint: asyncio.Future[None] | None = None

    async def _call(self, work: Callable[[sqlite3.Connection], T], *, urgent: bool = False) -> T:
        """Run `work` with a connection: on this thread if the file's lock is free, else on the worker thread once it
        is (`urgent`: before the routine statements queued there); SQLite's errors made clear."""
        if self._closed:
            raise RuntimeError(f"the run store on {self.path} is closed")
        try:
            return self._explained(work, here=True)
        except _Locked:
            return await self._on_worker(work, urgent=urgent)

    async def _on_worker(self, work: Callable[[sqlite3.Connection], T], *, urgent: bool) -> T:
        """Run `work` on the worker thread with its connection, which waits for the file's lock."""
        if self._closed:
            raise RuntimeError(f"the run store on {self.path} is closed")
        future = self._worker.submit(functools.partial(self._explained, work, here=False), urgent=urgent)
        return await asyncio.wrap_future(future)

    def _explained(self, work: Callable[[sqlite3.Connection], T], *, here: bool) -> T:
        """`work` on the loop's connection (`here`: `_Locked` if the file is locked) or the worker's."""
        try:
            return work(self._connection_here() if here else self._connection_patient())
        except sqlite3.OperationalError as error:
            if "no such table" in str(error):
                raise SchemaVersionError(f"{NOT_MIGRATED} ({self.path}: {error})") from error
            if not _is_locked(error):
                raise
            if here:
                raise _Locked() from error
            raise StoreUnavailableError(
                f"SQLite database {self.path} stayed locked for {self._busy_timeout_s:g} s: another process "
                "holds it; nothing was written, retry later"
            ) from error

    def _connection_here(self) -> sqlite3.Connection:
        if self._here is None:
            self._here = self._connect(busy_timeout_s=0.0)
        return self._here

    def _connection_patient(self) -> sqlite3.Connection:
        if self._patient is None:
            self._patient = self._connect(busy_timeout_s=self._busy_timeout_s, check_same_thread=False)
        return self._patient

    def _connect(self, *, busy_timeout_s: float, check_same_thread: bool = True) -> sqlite3.Connection:
        """A connection in WAL mode; a file locked while it is set up raises as a statement would."""
        connection: sqlite3.Connection | None = None
        try:
            connection = sqlite3.connect(
                self.path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=check_same_thread
            )
            connection.execute("PRAGMA journal_mode = WAL")  # a new file takes the lock once, to become WAL
            connection.execute("PRAGMA synchronous = NORMAL")  # durable through a process crash
            connection.execute("PRAGMA wal_autocheckpoint = 0")  # checkpoints are the worker's (`_wrote`)
        except sqlite3.OperationalError as error:
            if connection is not None:
                connection.close()
            if _is_locked(error):
                raise
            raise StoreUnavailableError(
                f"cannot open SQLite database {self.path} ({error}): check that its directory exists and is writable"
            ) from error
        connection.row_factory = sqlite3.Row
        return connection

    async def fetch(self, sql: str, *args: Any, idempotent: bool = True, urgent: bool = False) -> list[Row]:
        params = [_param(arg) for arg in args]
        rows = await self._call(
            lambda db: [dict(row) for row in db.execute(_qmark(sql), params).fetchall()], urgent=urgent
        )
        self._wrote()  # a fetch may write too (`UPDATE … RETURNING`)
        return rows

    async def execute(
        self, sql: str, *args: Any, idempotent: bool = True, durable: bool = False, urgent: bool = False
    ) -> int:
        params = [_param(arg) for arg in args]
        if not durable:
            changed = await self._call(lambda db: db.execute(_qmark(sql), params).rowcount, urgent=urgent)
            self._wrote()
            return changed
        changed, write = await self._call(
            lambda db: (db.execute(_qmark(sql), params).rowcount, self._count_durable()), urgent=urgent
        )
        self._wrote()
        await self._synced(write)
        return changed

    def _count_durable(self) -> int:
        with self._counting:
            self._durable_writes += 1
            return self._durable_writes

    async def _synced(self, write: int) -> None:
        """Wait until a sync that began after durable write number `write` committed has ended: every durable write
        waiting at once shares one sync."""
        while self._synced_through < write:
            if self._sync is None or self._sync.done():  # few writes are durable, and an action waits on each
                self._sync = asyncio.ensure_future(self._on_worker(self._sync_wal, urgent=True))
            await asyncio.shield(self._sync)

    def _sync_wal(self, db: sqlite3.Connection) -> None:
        """Sync the WAL, and with it every commit before, of either connection: a one-page commit with
        `synchronous = FULL` (the schema's `user_version`, which nothing reads, is the page)."""
        with self._counting:
            covered = self._durable_writes
        db.execute("PRAGMA synchronous = FULL")
        try:
            db.execute(f"PRAGMA user_version = {covered % 2**31}")
        finally:
            db.execute("PRAGMA synchronous = NORMAL")
        self._synced_through = covered

    def _wrote(self) -> None:
        """Count a statement; every `CHECKPOINT_EVERY`, copy the WAL into the database on the worker thread (a
        passive checkpoint: writers and readers go on meanwhile). Its failure is logged; the next one retries."""
        self._writes_since_checkpoint += 1
        if self._writes_since_checkpoint < CHECKPOINT_EVERY or not (
            self._checkpoint is None or self._checkpoint.done()
        ):
            return
        self._writes_since_checkpoint = 0
        self._checkpoint = asyncio.ensure_future(self._on_worker(_checkpoint_wal, urgent=False))
        self._checkpoint.add_done_callback(self._checkpoint_failed)

    def _checkpoint_failed(self, checkpoint: asyncio.Future[None]) -> None:
        if not checkpoint.cancelled() and (error := checkpoint.exception()) is not None:
            log.warning("sqlite_checkpoint_failed", path=self.path, error=repr(error)[:300])

    async def migrate(self) -> None:
        """Apply the missing migrations, each in its own `BEGIN IMMEDIATE` transaction; a no-op when current."""
        await self._on_worker(self._migrate, urgent=False)

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
        """Close subscriptions, then the loop's connection, then the worker's once what is queued there has run (the
        last connection to close checkpoints the WAL), then the worker thread."""
        for subscription in list(self._subscriptions):
            await subscription.aclose()
        if self._closed:
            return
        if self._checkpoint is not None:  # begun before the close: it ends first, not on a closed store
            await asyncio.wait([self._checkpoint])
        if self._here is not None:
            self._here.close()
        await asyncio.wrap_future(self._worker.submit(self._close_patient, urgent=False))
        self._closed = True
        self._worker.shutdown()

    def _close_patient(self) -> None:
        if self._patient is not None:
            self._patient.close()

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
