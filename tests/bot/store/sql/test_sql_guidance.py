"""Guidance (`bot.store.sql.guidance`) on SQLite and a real PostgreSQL: numbered in the run's order, redacted, and
never more than the limit per run, however many replicas add at once."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from bot.store.protocol import RunStore
from bot.store.records import GuidanceRecord
from testkit.fakes.clock import T0


def said(run_id: str, text: str, n: int = 0) -> GuidanceRecord:
    return GuidanceRecord(run_id=run_id, user="U0MARIA", name="maria", text=text, message_ts=f"1.{n}", at=T0)


async def test_guidance_is_numbered_per_run_in_order_and_redacted(store: RunStore) -> None:
    log = store.guidance
    first = await log.add_guidance(said("r1", "it's payments"), limit=10)
    second = await log.add_guidance(said("r1", "db password=hunter2hunter2 leaked?", 2), limit=10)
    other = await log.add_guidance(said("r2", "another run"), limit=10)
    assert (first.seq, second.seq, other.seq) == (1, 2, 1)
    assert second.text == "db password=[REDACTED:password] leaked?"
    kept = await log.guidance_for("r1")
    assert [(g.seq, g.text, g.message_ts, g.name) for g in kept] == [
        (1, "it's payments", "1.0", "maria"),
        (2, "db password=[REDACTED:password] leaked?", "1.2", "maria"),
    ]
    assert kept[0].at == T0
    assert await log.guidance_for("r3") == []


async def test_a_run_takes_no_more_than_its_limit(store: RunStore) -> None:
    for n in range(3):
        assert await store.guidance.add_guidance(said("r1", f"message {n}", n), limit=3) is not None
    assert await store.guidance.add_guidance(said("r1", "one too many"), limit=3) is None
    assert [g.text for g in await store.guidance.guidance_for("r1")] == ["message 0", "message 1", "message 2"]


async def test_two_replicas_adding_at_once_keep_exactly_the_limit(store: RunStore, replica: RunStore) -> None:
    adds = [
        (store if n % 2 else replica).guidance.add_guidance(
            said("r1", f"message {n}", n).model_copy(update={"at": T0 + timedelta(seconds=n)}), limit=10
        )
        for n in range(50)
    ]
    kept = [g for g in await asyncio.gather(*adds) if g is not None]
    assert len(kept) == 10
    assert sorted(g.seq for g in kept) == list(range(1, 11))
    assert [g.seq for g in await store.guidance.guidance_for("r1")] == list(range(1, 11))
