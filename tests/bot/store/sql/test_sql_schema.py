"""Migrations (`bot.store.sql.schema`) on SQLite and a real PostgreSQL: a no-op when current, an older database
brought up to date, a newer or an unmigrated one refused.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from bot.store.factory import open_store
from bot.store.protocol import RunStore, SchemaVersionError
from bot.store.records import AlertThread
from bot.store.sql.schema import LATEST_VERSION
from samples.store_records import a_run


async def test_migrate_twice_is_a_no_op(store: RunStore, store_url: str, raw_sql) -> None:
    await store.runs.create_run(a_run("r1"))
    await store.migrate()
    again = open_store(store_url)
    try:
        await again.migrate()
        assert await again.runs.get_run("r1") == a_run("r1")
    finally:
        await again.close()
    newer = LATEST_VERSION + 1
    await raw_sql(f"INSERT INTO schema_migrations (version, name, applied_at) VALUES ({newer}, 'x', '2026-11-30')")
    with pytest.raises(SchemaVersionError, match=f"schema is at version {newer}, newer than this OpsAgent knows"):
        await store.migrate()


async def test_a_database_of_an_older_version_is_brought_up_to_date_and_keeps_its_runs(
    store: RunStore, store_url: str, raw_sql
) -> None:
    await store.runs.create_run(a_run("r1"))
    await raw_sql("DROP TABLE alert_groups")  # as a version-1 database has it
    await raw_sql("DELETE FROM schema_migrations WHERE version = 2")
    older = open_store(store_url)
    try:
        await older.migrate()
        assert await older.runs.get_run("r1") == a_run("r1")
        thread = AlertThread("C1", "1.1", frozenset({"f2", "f1"}), "r1")
        await older.alert_threads.save_alert_thread("group-a", thread)
        assert await older.alert_threads.alert_thread("group-a") == thread
        await older.alert_threads.save_alert_thread("group-a", replace(thread, run_id=None))
        assert (await store.alert_threads.alert_thread("group-a")).run_id is None  # seen from another instance
        await older.alert_threads.forget_alert_thread("group-a")
        assert await older.alert_threads.alert_thread("group-a") is None
    finally:
        await older.close()


async def test_a_store_that_was_never_migrated_says_so(store_url: str) -> None:
    fresh = open_store(store_url)
    try:
        with pytest.raises(SchemaVersionError, match=r"call `await store.migrate\(\)`"):
            await fresh.runs.get_run("r1")
    finally:
        await fresh.close()
