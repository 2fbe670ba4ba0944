"""The checks of approved actions (`bot.store.sql.checks`) on SQLite and a real PostgreSQL: each is taken by one
replica once due, held by a lease that a dead replica's successor outlives, and its result waits for its run to finish
to be written into the trace, where two checks written at once both stay."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from bot.store.protocol import RunStore
from bot.store.records import RunRecord, RunStatus, ScheduledCheck
from kernel import RunResult, StopReason, Verification, VerificationOutcome
from testkit.fakes.clock import T0, ManualClock

AFTER_S = 120


def due(run_id: str = "r1", check: int = 1, *, after_s: float = AFTER_S) -> ScheduledCheck:
    return ScheduledCheck(
        run_id=run_id,
        step=6,
        check=check,
        due_at=T0 + timedelta(seconds=after_s),
        action_at=T0,
        approval_ts="1700000000.000600",
        approver="U0SAM",
    )


def found(check: int, outcome: VerificationOutcome = VerificationOutcome.HELD) -> Verification:
    at = T0 + timedelta(seconds=AFTER_S * check)
    return Verification(6, check, at, outcome, 1, "http_5xx_rate", "12.0%", "0.20%", "0.10%", "▁▇▁")


async def saved_run(store: RunStore, run_id: str = "r1", status: RunStatus = RunStatus.FINISHED) -> None:
    trace = RunResult(run_id=run_id, task="order-service 5xx", stop_reason=StopReason.FINISH)
    await store.runs.create_run(
        RunRecord(
            run_id=run_id,
            channel="C1",
            thread_ts="1.0",
            requested_by="U0BOB",
            task=trace.task,
            status=status,
            trace_json=trace.to_json(indent=None),
            created_at=T0,
            updated_at=T0,
        )
    )


async def test_a_check_is_taken_once_due_and_kept_once_however_often_scheduled(store, clock: ManualClock) -> None:
    await store.checks.schedule_check(due())
    await store.checks.schedule_check(due().model_copy(update={"approver": "U0OTHER"}))
    assert await store.checks.claim_check("replica-a", 30) is None, "not due yet"
    clock.advance(AFTER_S)
    taken = await store.checks.claim_check("replica-a", 30)
    assert taken == due(), "as first scheduled, with no result yet"
    assert await store.checks.claim_check("replica-b", 30) is None, "held by replica-a"


async def test_of_two_replicas_claiming_at_once_one_takes_each_check(store, replica, clock: ManualClock) -> None:
    for run_id in ("r1", "r2", "r3"):
        await store.checks.schedule_check(due(run_id))
    clock.advance(AFTER_S)
    claims = [(store if n % 2 else replica).checks.claim_check(f"replica-{n % 2}", 30) for n in range(8)]
    taken = [check.run_id for check in await asyncio.gather(*claims) if check is not None]
    assert sorted(taken) == ["r1", "r2", "r3"]


async def test_a_dead_replicas_check_is_taken_over_and_its_late_result_refused(store, clock: ManualClock) -> None:
    await saved_run(store)
    await store.checks.schedule_check(due())
    clock.advance(AFTER_S)
    dead = await store.checks.claim_check("replica-dead", 30)
    clock.advance(29)
    assert await store.checks.claim_check("replica-b", 30) is None
    clock.advance(2)
    taken = await store.checks.claim_check("replica-b", 30)
    assert taken is not None, "its lease ran out"
    assert taken.run_id == "r1"
    assert not await store.checks.check_ran(dead, found(1), "replica-dead"), "the dead replica no longer holds it"
    assert await store.checks.check_ran(taken, found(1), "replica-b")
    recorded = await store.checks.claim_check("replica-b", 30)
    assert recorded.result == found(1), "kept, and the run has finished: its result is to be written in the trace"


async def test_a_result_waits_for_its_run_to_finish_then_is_written_into_the_trace(store, clock: ManualClock) -> None:
    await saved_run(store, status=RunStatus.RUNNING)
    await store.checks.schedule_check(due())
    clock.advance(AFTER_S)
    check = await store.checks.claim_check("replica-a", 30)
    assert await store.checks.check_ran(check, found(1), "replica-a")
    assert await store.runs.record_verification("r1", found(1)) is False, "the run's carrier owns its trace"
    assert await store.checks.claim_check("replica-a", 30) is None, "nothing to do until the run finishes"
    record = await store.runs.get_run("r1")
    await store.runs.checkpoint("r1", status=RunStatus.FINISHED, trace_json=record.trace_json)
    ready = await store.checks.claim_check("replica-a", 30)
    assert (ready.check, ready.result) == (1, found(1))
    assert await store.runs.record_verification("r1", ready.result)
    await store.checks.check_done(ready)
    assert await store.checks.claim_check("replica-a", 30) is None, "done for good"
    trace = RunResult.from_json((await store.runs.get_run("r1")).trace_json)
    assert trace.verifications == [found(1)]


async def test_two_checks_written_into_one_trace_at_once_both_stay(store, replica) -> None:
    await saved_run(store)
    writes = [
        (store if n % 2 else replica).runs.record_verification("r1", found(n % 2 + 1, VerificationOutcome(outcome)))
        for n, outcome in enumerate(["held", "did_not_hold", "held", "did_not_hold"])
    ]
    assert all(await asyncio.gather(*writes))
    trace = RunResult.from_json((await store.runs.get_run("r1")).trace_json)
    assert sorted(v.check for v in trace.verifications) == [1, 2]
    assert await store.runs.record_verification("unknown", found(1)) is False
