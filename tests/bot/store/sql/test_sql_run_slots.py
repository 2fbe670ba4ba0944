"""The concurrency cap in the run store, on SQLite and PostgreSQL: many runs created at once through two stores on
one database (two replicas) leave exactly as many unfinished as there are slots, and a finished run frees its slot."""

from __future__ import annotations

import asyncio

import pytest

from bot.store.protocol import RunStore, StoreAtCapacityError, StoreConflictError
from bot.store.records import RunStatus
from samples.store_records import a_run

SLOTS = 3
RACERS = 40


async def created(store: RunStore, n: int) -> bool:
    """Whether run `n` (in a thread of its own) was stored under the cap; a refusal must be the cap's."""
    try:
        await store.runs.create_run(a_run(f"r{n}", thread_ts=f"1700000000.{n:06d}"), slots=SLOTS)
    except StoreAtCapacityError:
        return False
    return True


async def test_runs_created_at_once_on_two_replicas_fill_exactly_the_slots(store: RunStore, replica: RunStore) -> None:
    outcomes = await asyncio.gather(*(created(store if n % 2 else replica, n) for n in range(RACERS)))
    assert sum(outcomes) == SLOTS
    unfinished = [run for run in await store.leases.claimable_runs() if run.status is not RunStatus.FINISHED]
    assert len(unfinished) == SLOTS


async def test_a_finished_run_frees_its_slot_and_a_refusal_says_why(store: RunStore) -> None:
    for n in range(SLOTS):
        assert await created(store, n)
    with pytest.raises(StoreAtCapacityError, match="3 runs are unfinished"):
        await store.runs.create_run(a_run("late", thread_ts="1700000001.000000"), slots=SLOTS)
    assert await store.runs.get_run("late") is None
    await store.runs.checkpoint("r1", status=RunStatus.AWAITING_APPROVAL, trace_json="{}")
    assert not await created(store, 10), "a run paused for approval still holds its slot"
    await store.runs.checkpoint("r1", status=RunStatus.FINISHED, trace_json="{}")
    assert await created(store, 11)
    assert not await created(store, 12)


async def test_the_cap_does_not_hide_a_busy_thread_nor_refuse_a_re_sent_record(store: RunStore) -> None:
    first = a_run("r1")
    await store.runs.create_run(first, slots=SLOTS)
    await store.runs.create_run(first, slots=SLOTS)  # re-sent after a dropped connection: accepted, one slot still
    with pytest.raises(StoreConflictError, match="already has an unfinished run") as refused:
        await store.runs.create_run(a_run("r2"), slots=SLOTS)
    assert not isinstance(refused.value, StoreAtCapacityError)
    assert await created(store, 5)
    assert await created(store, 6)
    assert not await created(store, 7)
