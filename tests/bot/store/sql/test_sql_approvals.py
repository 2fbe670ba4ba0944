"""Approvals (`bot.store.sql.approvals`) on SQLite and a real PostgreSQL: round trip, compare-and-set, one winner
of a race.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from bot.approvals.store import ApprovalState
from bot.store.protocol import RunStore, StoreConflictError
from samples.store_records import RACES, an_approval
from testkit.fakes.clock import T0, ManualClock


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
