"""The run store's conformance suite: every test runs on SQLite (a temporary file) and on a real PostgreSQL.

Races use two store instances on one database (two connections, as two replicas would); time is an injected clock
(the fixtures are in conftest.py).
"""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import asyncpg
import pytest

from bot.approvals.store import ApprovalState
from bot.audit.trail import AuditEvent
from bot.store.factory import open_store, sqlite_path
from bot.store.protocol import LeaseLostError, RunStore, SchemaVersionError, StoreConflictError, StoreUnavailableError
from bot.store.records import AlertThread, FeedbackRecord, Rating, RunStatus
from bot.store.sql.schema import LATEST_VERSION
from fakes.clock import T0, ManualClock
from opsagent_tools.actions.journal import SideEffectState
from samples.store_records import a_run, a_side_effect, an_approval

RACES = 40


async def raw_execute(url: str, sql: str) -> None:
    """Run SQL on the database directly, past the store."""
    if url.startswith("sqlite"):
        with sqlite3.connect(sqlite_path(url)) as db:
            db.execute(sql)
        return
    connection = await asyncpg.connect(url)
    try:
        await connection.execute(sql)
    finally:
        await connection.close()


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


async def test_approvals_round_trip_and_compare_and_set(store: RunStore, clock: ManualClock) -> None:
    pending = an_approval("a1")
    await store.approvals.add(pending)
    await store.approvals.add(an_approval("a2"))
    await store.approvals.add(an_approval("a3", run_id="r2"))
    assert await store.approvals.get("a1") == pending
    assert await store.approvals.get("nope") is None
    with pytest.raises(StoreConflictError, match="already exists"):
        await store.approvals.add(pending.model_copy(update={"tool": "other"}))
    assert [a.approval_id for a in await store.approvals.pending_for_run("r1")] == ["a1", "a2"]

    approved = pending.model_copy(
        update={"state": ApprovalState.APPROVED, "decided_by": "U2", "decided_at": T0 + timedelta(minutes=1)}
    )
    assert not await store.approvals.compare_and_set("a1", ApprovalState.DENIED, approved)  # wrong expected state
    assert not await store.approvals.compare_and_set("a2", ApprovalState.PENDING, approved)  # record of another id
    assert not await store.approvals.compare_and_set("nope", ApprovalState.PENDING, approved)
    assert await store.approvals.compare_and_set("a1", ApprovalState.PENDING, approved)
    assert not await store.approvals.compare_and_set("a1", ApprovalState.PENDING, approved)  # no longer pending
    assert await store.approvals.get("a1") == approved
    assert [a.approval_id for a in await store.approvals.pending_for_run("r1")] == ["a2"]


async def test_compare_and_set_races_have_one_winner(store: RunStore, replica: RunStore) -> None:
    for n in range(RACES):
        pending = an_approval(f"a{n}")
        await store.approvals.add(pending)
        decisions = [
            pending.model_copy(update={"state": state, "decided_by": who})
            for state, who in ((ApprovalState.APPROVED, "U2"), (ApprovalState.DENIED, "U3"))
        ]
        won = await asyncio.gather(
            store.approvals.compare_and_set(f"a{n}", ApprovalState.PENDING, decisions[0]),
            replica.approvals.compare_and_set(f"a{n}", ApprovalState.PENDING, decisions[1]),
        )
        assert sorted(won) == [False, True]
        assert await replica.approvals.get(f"a{n}") == decisions[won.index(True)]


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


async def test_feedback_is_each_persons_latest_rating_and_a_reason_survives_a_repeated_click(store: RunStore) -> None:
    down = FeedbackRecord(run_id="r1", user="U0BOB", rating=Rating.DOWN, at=T0)
    await store.feedback.record_feedback(down)
    await store.feedback.record_feedback(
        down.model_copy(update={"reason": "it was DNS; password=hunter2hunter2", "at": T0 + timedelta(1)})
    )
    await store.feedback.record_feedback(
        down.model_copy(update={"at": T0 + timedelta(2)})
    )  # the 👎 clicked again: the reason stays
    await store.feedback.record_feedback(
        FeedbackRecord(run_id="r1", user="U0ALICE", rating=Rating.UP, at=T0 + timedelta(3))
    )
    await store.feedback.record_feedback(
        FeedbackRecord(run_id="r2", user="U0BOB", rating=Rating.UP, at=T0 + timedelta(4))
    )
    bob, alice = await store.feedback.feedback_for("r1")
    assert (bob.user, bob.rating, bob.at) == ("U0BOB", Rating.DOWN, T0 + timedelta(2))
    assert bob.reason == "it was DNS; password=[REDACTED:password]"
    assert (alice.user, alice.rating, alice.reason) == ("U0ALICE", Rating.UP, "")
    await store.feedback.record_feedback(
        bob.model_copy(update={"rating": Rating.UP, "reason": "", "at": T0 + timedelta(5)})
    )
    changed = [f for f in await store.feedback.feedback_for("r1") if f.user == "U0BOB"]
    assert [(f.rating, f.reason) for f in changed] == [(Rating.UP, "")], "a changed mind drops the old reason"
    assert [(f.run_id, f.user) for f in await store.feedback.rated_runs()] == [
        ("r1", "U0BOB"),
        ("r2", "U0BOB"),
        ("r1", "U0ALICE"),
    ]
    assert await store.feedback.feedback_for("r3") == []


async def test_side_effects_begin_once_and_finish_only_from_executing(store: RunStore, clock: ManualClock) -> None:
    first = a_side_effect("k1")
    assert await store.side_effects.begin_side_effect(first) is None  # new
    resend = a_side_effect("k1", step=9, at=T0 + timedelta(minutes=3))
    assert await store.side_effects.begin_side_effect(resend) == first  # the existing record, unchanged
    assert await store.side_effects.get_side_effect("k1") == first
    assert await store.side_effects.get_side_effect("nope") is None

    clock.advance(5)
    await store.side_effects.finish_side_effect("k1", SideEffectState.DONE, "rolled back order-service to v41")
    done = first.model_copy(
        update={"state": SideEffectState.DONE, "outcome": "rolled back order-service to v41", "finished_at": clock.now}
    )
    assert await store.side_effects.get_side_effect("k1") == done
    await store.side_effects.finish_side_effect(
        "k1", SideEffectState.DONE, "rolled back order-service to v41"
    )  # re-sent: same
    with pytest.raises(StoreConflictError, match="only finish from executing, but it is done"):
        await store.side_effects.finish_side_effect("k1", SideEffectState.FAILED, "HTTP 500")
    with pytest.raises(StoreConflictError, match="no such side effect"):
        await store.side_effects.finish_side_effect("nope", SideEffectState.DONE, "")
    with pytest.raises(StoreConflictError, match="not executing"):
        await store.side_effects.finish_side_effect("k1", SideEffectState.EXECUTING, "")
    assert await store.side_effects.get_side_effect("k1") == done

    second = a_side_effect("k2", step=5, at=T0 + timedelta(minutes=1))
    assert await store.side_effects.begin_side_effect(second) is None
    await store.side_effects.finish_side_effect("k2", SideEffectState.FAILED, "HTTP 500")
    failed = await store.side_effects.get_side_effect("k2")
    assert await store.side_effects.begin_side_effect(second) == failed  # it did not run: it may be tried again
    assert (await store.side_effects.get_side_effect("k2")).state is SideEffectState.EXECUTING
    await store.side_effects.finish_side_effect("k2", SideEffectState.DONE, "HTTP 200")
    assert [e.key for e in await store.side_effects.side_effects_for_run("r1")] == ["k1", "k2"]
    assert await store.side_effects.side_effects_for_run("r2") == []


async def test_audit_log_appends_filters_and_redacts(store: RunStore) -> None:
    for n in range(5):
        await store.audit.audit(
            AuditEvent(at=T0 + timedelta(seconds=n), kind="tool_call", run_id=f"r{n % 2}", actor="U1", detail={"n": n})
        )
    secret = {"url": "postgresql://app:S3cretPw@db:5432/app", "args": ["password=hunter2hunter2"]}
    await store.audit.audit(AuditEvent(at=T0, kind="side_effect_started", run_id="r0", actor="U2", detail=secret))
    log = await store.audit.audit_log()
    assert [event.detail.get("n") for event in log] == [0, 1, 2, 3, 4, None]
    assert [event.seq for event in log] == sorted({event.seq for event in log})
    assert log[0] == AuditEvent(seq=log[0].seq, at=T0, kind="tool_call", run_id="r0", actor="U1", detail={"n": 0})
    assert [event.detail.get("n") for event in await store.audit.audit_log(run_id="r1")] == [1, 3]
    assert [event.detail.get("n") for event in await store.audit.audit_log(run_id="r0", limit=2)] == [4, None]
    stored = log[-1].detail
    assert "S3cretPw" not in str(stored)
    assert "hunter2hunter2" not in str(stored)
    assert stored["url"].startswith("postgresql://app:")


async def test_the_database_refuses_to_change_the_audit_log(store: RunStore, store_url: str) -> None:
    await store.audit.audit(AuditEvent(at=T0, kind="run_started", run_id="r1", actor="U1"))
    for sql in ("UPDATE audit_events SET actor = 'someone else'", "DELETE FROM audit_events"):
        with pytest.raises((sqlite3.IntegrityError, asyncpg.RaiseError), match="append-only"):
            await raw_execute(store_url, sql)
    if not store_url.startswith("sqlite"):
        with pytest.raises(asyncpg.RaiseError, match="append-only"):
            await raw_execute(store_url, "TRUNCATE audit_events")
    assert [event.actor for event in await store.audit.audit_log()] == ["U1"]


async def test_migrate_twice_is_a_no_op(store: RunStore, store_url: str) -> None:
    await store.runs.create_run(a_run("r1"))
    await store.migrate()
    again = open_store(store_url)
    try:
        await again.migrate()
        assert await again.runs.get_run("r1") == a_run("r1")
    finally:
        await again.close()
    newer = LATEST_VERSION + 1
    await raw_execute(
        store_url, f"INSERT INTO schema_migrations (version, name, applied_at) VALUES ({newer}, 'x', '2026-11-30')"
    )
    with pytest.raises(SchemaVersionError, match=f"schema is at version {newer}, newer than this OpsAgent knows"):
        await store.migrate()


async def test_a_database_of_an_older_version_is_brought_up_to_date_and_keeps_its_runs(
    store: RunStore, store_url: str
) -> None:
    await store.runs.create_run(a_run("r1"))
    await raw_execute(store_url, "DROP TABLE alert_groups")  # as a version-1 database has it
    await raw_execute(store_url, "DELETE FROM schema_migrations WHERE version = 2")
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


async def test_notify_reaches_a_listener_on_another_store(store: RunStore, replica: RunStore) -> None:
    async with store.topics.listen("approvals") as subscription:
        await subscription.subscribed.wait()
        await replica.topics.notify("other-topic", "not for us")
        await replica.topics.notify("approvals", "a1")
        await replica.topics.notify("approvals", "a2")
        assert [await anext(subscription), await anext(subscription)] == ["a1", "a2"]
    assert [payload async for payload in subscription] == []  # closed: iteration ends


def test_open_store_picks_by_url_and_refuses_unknown_schemes(tmp_path) -> None:
    assert sqlite_path("sqlite:///runs.db") == "runs.db"
    assert sqlite_path(f"sqlite:///{tmp_path}/runs.db") == f"{tmp_path}/runs.db"
    with pytest.raises(ValueError, match=r"sqlite:////absolute/path\.db"):
        sqlite_path("sqlite://host/runs.db")
    with pytest.raises(ValueError, match="unknown run store URL scheme 'mysql' in 'db/x'"):
        open_store("mysql://user:pw@db/x")


async def test_a_sqlite_file_in_a_missing_directory_is_a_clear_error(tmp_path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/missing/runs.db")
    try:
        with pytest.raises(StoreUnavailableError, match="check that its directory exists"):
            await store.migrate()
    finally:
        await store.close()
