"""De-dup keys (`bot.store.sql.dedupe`) on SQLite and a real PostgreSQL: once until they expire, one winner of a race."""

from __future__ import annotations

import asyncio

from bot.store.protocol import RunStore
from samples.store_records import RACES
from testkit.fakes.clock import ManualClock


async def test_remember_is_true_once_until_it_expires(store: RunStore, clock: ManualClock) -> None:
    assert await store.dedupe.remember("Ev1", ttl_s=600)
    assert not await store.dedupe.remember("Ev1", ttl_s=600)
    assert await store.dedupe.remember("Ev2", ttl_s=600)
    clock.advance(599)
    assert not await store.dedupe.remember("Ev1", ttl_s=600)
    clock.advance(1)
    assert await store.dedupe.remember("Ev1", ttl_s=600)
    assert not await store.dedupe.remember("Ev1", ttl_s=600)


async def test_remember_races_have_one_winner(store: RunStore, replica: RunStore) -> None:
    for n in range(RACES):
        firsts = await asyncio.gather(
            store.dedupe.remember(f"Ev{n}", ttl_s=600), replica.dedupe.remember(f"Ev{n}", ttl_s=600)
        )
        assert sorted(firsts) == [False, True]
