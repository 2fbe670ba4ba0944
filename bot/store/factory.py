"""Opening the run store a URL names: SQLite embedded (one process), PostgreSQL for several replicas.

The one place that knows the SQL adapter and its two databases; everything else depends on the ports only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from urllib.parse import urlsplit

from bot.store.protocol import RunStore
from bot.store.records import utc_now


def open_store(url: str, *, clock: Callable[[], datetime] = utc_now) -> RunStore:
    """The store a URL names: `sqlite:///relative.db`, `sqlite:////absolute/path.db`, or `postgresql://…`.

    Nothing is opened yet: the first call connects; call `await store.migrate()` before using it.
    """
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        from bot.store.sql.sqlite import SqliteDatabase
        from bot.store.sql.store import SqlRunStore

        return SqlRunStore(SqliteDatabase(sqlite_path(url), clock=clock))
    if scheme in ("postgresql", "postgres"):
        from bot.store.sql.postgres import PostgresDatabase
        from bot.store.sql.store import SqlRunStore

        return SqlRunStore(PostgresDatabase(url, clock=clock))
    raise ValueError(
        f"unknown run store URL scheme {scheme!r} in {url.split('@')[-1]!r}: use sqlite:///relative/path.db, "
        "sqlite:////absolute/path.db or postgresql://user@host:5432/dbname"
    )


@asynccontextmanager
async def opened_store(url: str, *, clock: Callable[[], datetime] = utc_now) -> AsyncIterator[RunStore]:
    """The store a URL names, migrated, and closed on exit."""
    store = open_store(url, clock=clock)
    try:
        await store.migrate()
        yield store
    finally:
        await store.close()


def sqlite_path(url: str) -> str:
    """The file a `sqlite:///…` URL names: three slashes then a relative path, four for an absolute one."""
    prefix = "sqlite:///"
    path = url[len(prefix) :] if url.startswith(prefix) else ""
    if not path or "?" in path or "#" in path:
        raise ValueError(
            f"bad SQLite URL {url!r}: write sqlite:///relative/path.db or sqlite:////absolute/path.db "
            "(no host, no query string)"
        )
    return path
