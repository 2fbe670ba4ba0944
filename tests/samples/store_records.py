"""Records of each kind the run store keeps, filled in as the bot fills them, dated at the fake clock's `T0`.

Shared by the store's conformance suite and its PostgreSQL restart tests; keyword arguments vary what a test varies.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from bot.approvals.store import PendingApproval
from bot.store.records import RunRecord, RunStatus, SideEffectRecord
from opsagent_tools.actions.journal import SideEffectState
from testkit.fakes.clock import T0

RACES = 40
"""How many times a race test races two stores (two replicas) for one thing: each time exactly one may win."""


def a_run(run_id: str = "r1", *, thread_ts: str = "1700000000.000100", at: datetime = T0) -> RunRecord:
    return RunRecord(
        run_id=run_id,
        channel="C1",
        thread_ts=thread_ts,
        requested_by="U1",
        team_id="T1",
        task="why is order-service failing?",
        mention_ts=thread_ts,
        status=RunStatus.RUNNING,
        created_at=at,
        updated_at=at,
    )


def an_approval(approval_id: str = "a1", run_id: str = "r1") -> PendingApproval:
    return PendingApproval(
        approval_id=approval_id,
        run_id=run_id,
        step=3,
        tool="rollback_deployment",
        args={"service": "order-service", "to_version": "v41"},
        args_hash="h1",
        thought="roll back",
        channel="C1",
        thread_ts="1700000000.000100",
        requested_by="U1",
        created_at=T0,
        expires_at=T0 + timedelta(minutes=15),
    )


def a_side_effect(key: str = "k1", *, step: int = 3, at: datetime = T0) -> SideEffectRecord:
    return SideEffectRecord(
        key=key,
        run_id="r1",
        step=step,
        tool="rollback_deployment",
        args_hash="h1",
        approval_id="a1",
        state=SideEffectState.EXECUTING,
        started_at=at,
    )
