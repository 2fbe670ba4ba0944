"""What both databases (`bot.store.sql.database`) share: aware UTC times, topics between two stores, a clear
error for a SQLite file that cannot be opened.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from bot.store.factory import open_store
from bot.store.protocol import RunStore, StoreUnavailableError
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
