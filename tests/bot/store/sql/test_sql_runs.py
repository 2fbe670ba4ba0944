"""Runs and their leases (`bot.store.sql.runs`) on SQLite and a real PostgreSQL: records round trip, one
unfinished run per thread, stops and summaries kept on the run, leases taken, expired, renewed, fenced and raced.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from bot.store.protocol import LeaseLostError, RunStore, StoreConflictError
from bot.store.records import RunStatus
from samples.store_records import RACES, a_run
from testkit.fakes.clock import T0, ManualClock


async def test_runs_round_trip_and_the_latest_run_of_a_thread(store: RunStore, clock: ManualClock) -> None:
    first = a_run("r1")
    await store.runs.create_run(first)
    assert await store.runs.get_run("r1") == first
    assert await store.runs.get_run("nope") is None
    await store.runs.create_run(first)  # the same record re-sent: accepted
    with pytest.raises(StoreConflictError, match="its id is taken"):
        await store.runs.create_run(first.model_copy(update={"task": "another"}))
    second = a_run("r2", at=T0 + timedelta(minutes=5))
    with pytest.raises(StoreConflictError, match="already has an unfinished run"):
        await store.runs.create_run(second)  # one unfinished run per thread, whichever replica asks

    clock.advance(60)
    await store.runs.checkpoint("r1", status=RunStatus.AWAITING_APPROVAL, trace_json='{"steps": []}')
    saved = await store.runs.get_run("r1")
    assert saved == first.model_copy(
        update={"status": RunStatus.AWAITING_APPROVAL, "trace_json": '{"steps": []}', "updated_at": clock.now}
    )
    await store.runs.checkpoint("r1", status=RunStatus.FINISHED, trace_json='{"steps": []}')
    await store.runs.create_run(second)  # a follow-up, once the first has ended
    assert await store.runs.run_in_thread("C1", first.thread_ts) == second
    assert await store.runs.run_in_thread("C1", "other") is None
    with pytest.raises(StoreConflictError, match="does not exist"):
        await store.runs.checkpoint("nope", status=RunStatus.FINISHED, trace_json="")


async def test_the_runs_one_requester_asked_for_come_newest_first_up_to_the_limit(store: RunStore) -> None:
    for number in range(4):
        requested_by = "api:claude" if number != 2 else "U1"
        record = a_run(f"r{number}", thread_ts=f"17000000{number}0.000100", at=T0 + timedelta(minutes=number))
        await store.runs.create_run(record.model_copy(update={"requested_by": requested_by}))
    assert [r.run_id for r in await store.runs.runs_requested_by("api:claude")] == ["r3", "r1", "r0"]
    assert [r.run_id for r in await store.runs.runs_requested_by("api:claude", limit=2)] == ["r3", "r1"]
    assert [r.run_id for r in await store.runs.runs_requested_by("U1")] == ["r2"]
    assert await store.runs.runs_requested_by("api:ci") == []


async def test_a_threads_runs_come_newest_first_up_to_the_limit(store: RunStore) -> None:
    for number in range(3):
        record = a_run(f"r{number}", at=T0 + timedelta(minutes=number))
        await store.runs.create_run(record.model_copy(update={"status": RunStatus.FINISHED}))
    await store.runs.create_run(a_run("elsewhere", thread_ts="1700000999.000100", at=T0))
    thread = a_run("r0").thread_ts
    assert [r.run_id for r in await store.runs.runs_in_thread("C1", thread)] == ["r2", "r1", "r0"]
    assert [r.run_id for r in await store.runs.runs_in_thread("C1", thread, limit=2)] == ["r2", "r1"]
    assert await store.runs.runs_in_thread("C2", thread) == []


async def test_a_stop_request_is_kept_on_the_run_and_read_back_by_its_checkpoints(store: RunStore) -> None:
    await store.runs.create_run(a_run("r1"))
    assert await store.leases.acquire_lease("r1", "replica-a", 30)
    assert await store.runs.checkpoint("r1", status=RunStatus.RUNNING, trace_json="{}", owner="replica-a") == ""
    await store.runs.request_stop("r1", "<@U0BOB>")
    assert (await store.runs.get_run("r1")).stop_requested_by == "<@U0BOB>"
    assert await store.runs.checkpoint("r1", status=RunStatus.RUNNING, trace_json="{}", owner="replica-a") == "<@U0BOB>"


async def test_the_summary_message_is_kept_on_the_run_for_whoever_carries_it_on(store: RunStore) -> None:
    await store.runs.create_run(a_run("r1"))
    assert (await store.runs.get_run("r1")).summary_ts == ""
    await store.runs.remember_summary("r1", "1700000000.000200")
    assert (await store.runs.get_run("r1")).summary_ts == "1700000000.000200"
    assert (await store.runs.run_in_thread("C1", "1700000000.000100")).summary_ts == "1700000000.000200"


async def test_leases_acquire_expire_take_over_renew_release(
    store: RunStore, replica: RunStore, clock: ManualClock
) -> None:
    await store.runs.create_run(a_run("r1"))
    assert [run.run_id for run in await store.leases.claimable_runs()] == ["r1"]
    assert await store.leases.acquire_lease("r1", "replica-a", ttl_s=30)
    assert await store.leases.acquire_lease("r1", "replica-a", ttl_s=30)  # already ours
    assert not await replica.leases.acquire_lease("r1", "replica-b", ttl_s=30)
    assert await store.leases.claimable_runs() == []
    held = await store.runs.get_run("r1")
    assert held is not None
    assert (held.owner, held.lease_until) == ("replica-a", T0 + timedelta(seconds=30))

    clock.advance(20)
    assert await store.leases.renew_leases("replica-a", ttl_s=30) == ["r1"]
    clock.advance(20)  # 40 s in: the renewed lease runs to 50 s
    assert not await replica.leases.acquire_lease("r1", "replica-b", ttl_s=30)
    clock.advance(11)  # replica-a stopped renewing: expired
    assert [run.run_id for run in await replica.leases.claimable_runs()] == ["r1"]
    assert await replica.leases.acquire_lease("r1", "replica-b", ttl_s=30)
    assert await store.leases.renew_leases("replica-a", ttl_s=30) == []
    assert not await store.leases.acquire_lease("r1", "replica-a", ttl_s=30)

    await store.leases.release_lease("r1", "replica-a")  # not the owner: nothing changes
    assert (await store.runs.get_run("r1")).owner == "replica-b"  # type: ignore[union-attr]
    await replica.leases.release_lease("r1", "replica-b")
    released = await store.runs.get_run("r1")
    assert released is not None
    assert (released.owner, released.lease_until) == ("", None)

    assert await store.leases.acquire_lease("r1", "replica-a", ttl_s=30)
    with pytest.raises(LeaseLostError, match="r1 is held by replica-a, not replica-b"):
        await replica.runs.checkpoint("r1", status=RunStatus.FINISHED, trace_json="{}", owner="replica-b")
    assert (await store.runs.get_run("r1")).status is RunStatus.RUNNING  # type: ignore[union-attr]
    await store.runs.checkpoint("r1", status=RunStatus.FINISHED, trace_json="{}", owner="replica-a")
    assert not await store.leases.acquire_lease("r1", "replica-a", ttl_s=30)
    assert await store.leases.claimable_runs() == []
    assert not await store.leases.acquire_lease("nope", "replica-a", ttl_s=30)


async def test_only_one_replica_wins_a_lease(store: RunStore, replica: RunStore) -> None:
    for n in range(RACES):
        await store.runs.create_run(a_run(f"r{n}", thread_ts=f"1700000000.{n:06d}"))
        won = await asyncio.gather(
            store.leases.acquire_lease(f"r{n}", "replica-a", ttl_s=30),
            replica.leases.acquire_lease(f"r{n}", "replica-b", ttl_s=30),
        )
        assert sorted(won) == [False, True]
