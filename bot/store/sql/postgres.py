"""The run store's database for several replicas: PostgreSQL through an asyncpg pool, LISTEN/NOTIFY between them.

A server restart costs the next call nothing (dead connections are replaced, idempotent statements re-sent once);
a server that is down gives a `StoreUnavailableError` within the timeouts, never a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import urlsplit

import asyncpg
import structlog

from bot.store.ports import Subscription
from bot.store.protocol import SchemaVersionError, StoreUnavailableError
from bot.store.records import utc_now
from bot.store.sql.database import Database, Row
from bot.store.sql.schema import NOT_MIGRATED, Dialect, bootstrap_sql, next_migration

log = structlog.get_logger("opsagent.store")

T = TypeVar("T")

UNAVAILABLE: tuple[type[BaseException], ...] = (
    OSError,
    TimeoutError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.exceptions.CrashShutdownError,
    asyncpg.exceptions.CannotConnectNowError,
)
"""Errors that mean the server is down, restarting or unreachable, not that a statement is wrong."""

_MIGRATION_LOCK = 0x0F5A6E47
"""The advisory lock id that serialises replicas migrating at the same time."""

_RECONNECT_FIRST_S, _RECONNECT_MAX_S = 0.1, 5.0


class PostgresDatabase(Database):
    """The `Database` of a run store in PostgreSQL, which several replicas share."""

    dialect = Dialect.POSTGRES

    def __init__(
        self,
        dsn: str,
        *,
        clock: Callable[[], datetime] = utc_now,
        command_timeout_s: float = 10.0,
        connect_timeout_s: float = 5.0,
        max_connections: int = 10,
        keepalive_s: float = 10.0,
    ) -> None:
        super().__init__(clock)
        self._dsn = dsn
        self._command_timeout_s = command_timeout_s
        self._connect_timeout_s = connect_timeout_s
        self._max_connections = max_connections
        self._keepalive_s = keepalive_s
        """How often an idle LISTEN connection is pinged, so a silently dropped one is noticed."""
        self._pool: asyncpg.Pool | None = None
        self._pool_lock = asyncio.Lock()
        self._listeners: dict[Subscription, asyncio.Task[None]] = {}
        self._closed = False
        parts = urlsplit(dsn)
        self.where = f"{parts.hostname or 'localhost'}:{parts.port or 5432}{parts.path}"
        """Host, port and database, without credentials: for messages."""

    async def _get_pool(self) -> asyncpg.Pool:
        async with self._pool_lock:
            if self._closed:
                raise RuntimeError(f"the run store on {self.where} is closed")
            if self._pool is None:
                self._pool = await asyncpg.create_pool(
                    self._dsn,
                    min_size=0,
                    max_size=self._max_connections,
                    command_timeout=self._command_timeout_s,
                    timeout=self._connect_timeout_s,
                )
            return self._pool

    async def _with_connection(self, work: Callable[[asyncpg.Connection], Awaitable[T]], *, idempotent: bool) -> T:
        """Run `work` on a pooled connection; once more on a fresh one if the server dropped it and that is safe."""
        pool = await self._get_pool()
        for attempt in (1, 2):
            acquired = False
            try:
                async with pool.acquire(timeout=self._connect_timeout_s + self._command_timeout_s) as connection:
                    acquired = True
                    return await work(connection)
            except asyncpg.UndefinedTableError as error:
                raise SchemaVersionError(f"{NOT_MIGRATED} ({self.where}: {error})") from error
            except UNAVAILABLE as error:
                if not acquired:
                    what = "nothing was sent"
                elif idempotent:
                    what = "the call was safe to repeat"
                else:
                    what = "the outcome of this write is unknown: read the state back before retrying"
                if attempt == 2 or (acquired and not idempotent):
                    raise StoreUnavailableError(
                        f"PostgreSQL at {self.where} is unavailable ({type(error).__name__}: {error}); {what}"
                    ) from error
        raise AssertionError("unreachable: the second attempt returns or raises")

    async def fetch(self, sql: str, *args: Any, idempotent: bool = True, urgent: bool = False) -> list[Row]:
        rows = await self._with_connection(lambda con: con.fetch(sql, *args), idempotent=idempotent)
        return [dict(row) for row in rows]

    async def execute(
        self, sql: str, *args: Any, idempotent: bool = True, durable: bool = False, urgent: bool = False
    ) -> int:
        # Every commit is durable (`synchronous_commit` on) and a pool serves statements side by side: neither
        # `durable` nor `urgent` asks for more.
        status = await self._with_connection(lambda con: con.execute(sql, *args), idempotent=idempotent)
        return int(status.rsplit(" ", 1)[-1])

    async def migrate(self) -> None:
        """Apply the missing migrations, each in its own transaction under an advisory lock; a no-op when current."""
        await self._with_connection(self._migrate, idempotent=True)

    async def _migrate(self, connection: asyncpg.Connection) -> None:
        while True:
            async with connection.transaction():
                await connection.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
                await connection.execute(bootstrap_sql(self.dialect))
                versions: Iterable[int] = [
                    row[0] for row in await connection.fetch("SELECT version FROM schema_migrations")
                ]
                migration = next_migration(versions)
                if migration is None:
                    return
                for statement in migration.statements(self.dialect):
                    await connection.execute(statement)
                await connection.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
                    migration.version,
                    migration.name,
                    self.now(),
                )

    async def close(self) -> None:
        """Stop the subscriptions, then close the pool (connections still busy after the timeout are cut)."""
        self._closed = True
        for subscription in list(self._listeners):
            await subscription.aclose()
        if self._pool is not None:
            pool, self._pool = self._pool, None
            try:
                await asyncio.wait_for(pool.close(), self._command_timeout_s)
            except TimeoutError:
                pool.terminate()

    async def notify(self, topic: str, payload: str) -> None:
        """NOTIFY every replica listening on the topic (payload under 8000 bytes); after a reconnect, maybe twice."""
        await self.execute("SELECT pg_notify($1, $2)", topic, payload)

    def listen(self, topic: str) -> Subscription:
        """LISTEN on the topic on a connection of its own, re-subscribing whenever the server comes back."""
        subscription = Subscription(self._unsubscribe)
        task = asyncio.get_running_loop().create_task(self._keep_listening(topic, subscription), name=f"listen:{topic}")
        self._listeners[subscription] = task
        return subscription

    async def _unsubscribe(self, subscription: Subscription) -> None:
        task = self._listeners.pop(subscription)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def _keep_listening(self, topic: str, subscription: Subscription) -> None:
        delay = _RECONNECT_FIRST_S
        while True:
            try:
                await self._listen_until_lost(topic, subscription)
                delay = _RECONNECT_FIRST_S
                log.warning("store.listen_lost", topic=topic, where=self.where)
            except UNAVAILABLE as error:
                log.warning("store.listen_unavailable", topic=topic, where=self.where, error=str(error))
            except Exception as error:
                log.error("store.listen_failed", topic=topic, where=self.where, error=repr(error))
            await asyncio.sleep(delay)
            delay = min(delay * 2, _RECONNECT_MAX_S)

    async def _listen_until_lost(self, topic: str, subscription: Subscription) -> None:
        """Subscribe on a new connection; return when the server closes it, raise if a keepalive ping fails."""
        connection = await asyncpg.connect(
            self._dsn, timeout=self._connect_timeout_s, command_timeout=self._command_timeout_s
        )
        lost = asyncio.Event()
        connection.add_termination_listener(lambda _connection: lost.set())
        try:
            await connection.add_listener(topic, lambda _con, _pid, _channel, payload: subscription.deliver(payload))
            subscription.subscribed.set()
            while not lost.is_set():
                try:
                    async with asyncio.timeout(self._keepalive_s):
                        await lost.wait()
                except TimeoutError:
                    await connection.execute("SELECT 1")
        finally:
            subscription.subscribed.clear()
            connection.terminate()
