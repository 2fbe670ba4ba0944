"""Fixtures of the run store's conformance suite: a database of each dialect, a store on it and a second store on
the same database (another replica), both on one injected clock, and SQL run on the database past the store."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable

import asyncpg
import pytest

from bot.store.factory import open_store, sqlite_path
from bot.store.protocol import RunStore
from testkit.fakes.clock import ManualClock


@pytest.fixture(params=["sqlite", "postgresql"])
async def store_url(request: pytest.FixtureRequest, tmp_path) -> str:
    """A new, empty database: a SQLite file, or a database of the session's real PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/runs.db"
    return await request.getfixturevalue("postgres").new_database()


@pytest.fixture
def raw_sql(store_url: str) -> Callable[[str], Awaitable[None]]:
    """Run SQL on the test's database directly, past the store."""

    async def run(sql: str) -> None:
        if store_url.startswith("sqlite"):
            with sqlite3.connect(sqlite_path(store_url)) as db:
                db.execute(sql)
            return
        connection = await asyncpg.connect(store_url)
        try:
            await connection.execute(sql)
        finally:
            await connection.close()

    return run


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def store(store_url: str, clock: ManualClock):
    opened = open_store(store_url, clock=clock)
    await opened.migrate()
    yield opened
    await opened.close()


@pytest.fixture
async def replica(store: RunStore, store_url: str, clock: ManualClock):
    """A second store on the same database: another replica."""
    opened = open_store(store_url, clock=clock)
    yield opened
    await opened.close()
