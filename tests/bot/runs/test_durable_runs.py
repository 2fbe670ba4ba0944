"""Runs survive a restart: saved after every step and at every pause, resumed by the next process.

Two app instances on one run store and one fake Slack stand for the bot before and after a restart
(in-process, stopped gracefully); tests/e2e/test_faults.py kills real processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from bot.access.settings import AccessSettings
from bot.approvals.store import ApprovalState
from bot.slack.action_ids import APPROVE
from bot.slack.settings import SlackSettings
from bot.store.protocol import RunStore
from bot.store.records import RunStatus, utc_now
from kernel import Agent, RunResult, ScriptedModel, StepCompleted, StopReason, text_turn
from testkit.fakes.slack_api import SlackFake
from testkit.slack_bot import (
    ALICE,
    CHANNEL,
    FINISH,
    ROLLBACK,
    USERS,
    HttpHarness,
    IncidentBot,
    running_app,
    save_run,
    start_through_the_gate,
)

QUERY = text_turn("query_metrics", "Known: nothing yet.", service="order-service")
SLOW = text_turn("slow", "5xx rose at t-10m (step 1); waiting on a slow check.", seconds=30)
NO_LIMITS = AccessSettings(max_concurrent_runs=25, runs_per_user_per_hour=None, runs_per_channel_per_hour=None)


@contextlib.asynccontextmanager
async def process(
    slack: SlackFake,
    store: RunStore,
    incident: IncidentBot,
    *,
    start: bool = True,
    ttl_s: float = 900,
    access: AccessSettings = NO_LIMITS,
) -> AsyncIterator[HttpHarness]:
    """One life of the bot: the app on its own port over the shared store; leaving the block shuts it down."""
    settings = SlackSettings(approvers=[ALICE], post_interval_s=0, step_batch_s=0, approval_ttl_s=ttl_s)
    async with running_app(slack, incident, store, settings=settings, start=start, access=access) as harness:
        yield harness


def texts(harness: HttpHarness, ts: str) -> list[str]:
    return [m.text for m in harness.thread(ts)]


def uploaded_trace(slack: SlackFake, ts: str) -> RunResult:
    return RunResult.from_json(next(f for f in slack.files.values() if f.thread_ts == ts).content)


async def audit_kinds(store: RunStore, run_id: str) -> list[str]:
    return [event.kind for event in await store.audit.audit_log(run_id=run_id)]


async def test_a_run_interrupted_by_a_shutdown_continues_after_the_restart(run_store):
    incident = IncidentBot([[QUERY, SLOW], [FINISH]])
    async with SlackFake(users=USERS) as slack:
        async with process(slack, run_store, incident) as before:
            ts = await before.mention("order-service 5xx jumped, find the root cause")
            await before.until(lambda: incident.models and incident.models[0].calls == 2, "the slow call started")
        saved = await run_store.runs.run_in_thread(CHANNEL, ts)
        assert (saved.status, saved.owner) == (RunStatus.RUNNING, "")
        assert [s.call.name for s in RunResult.from_json(saved.trace_json).steps] == ["query_metrics"]
        assert texts(before, ts)[-1] == (
            "⏸ OpsAgent is restarting; this investigation is saved and continues after step 1 when it is back."
        )

        interrupted = slack.message(CHANNEL, saved.summary_ts)
        assert "restarting; this run is saved and continues after step 1" in json.dumps(interrupted.blocks), (
            "the summary says so too, written before the process went"
        )
        async with process(slack, run_store, incident) as after:
            verdict = await after.ended(ts)
        assert (
            "♻️ This investigation continues after step 1 (OpsAgent restarted, or another replica took it over)."
            in texts(after, ts)
        )
        assert verdict.ts == saved.summary_ts, "the resumed run kept updating the one summary"
        summaries = [m for m in after.thread(ts) if m.edits and "Investigating" in m.edits[0]["text"]]
        assert summaries == [verdict]
        result = uploaded_trace(slack, ts)
        assert (result.stop_reason, [s.call.name for s in result.steps]) == (
            StopReason.FINISH,
            ["query_metrics", "finish"],
        )
        assert result.run_id == saved.run_id
        # The model of the resumed run was shown step 1's observation: it continued, it did not start over.
        assert "jumped from 0.10% to 12.0%" in json.dumps([m.content for m in incident.models[1].requests[0].messages])
        assert (await run_store.runs.get_run(saved.run_id)).status is RunStatus.FINISHED
        assert await audit_kinds(run_store, saved.run_id) == [
            "run_started",
            "tool_call",
            "run_interrupted",
            "run_resumed",
            "tool_call",
            "run_finished",
        ]


async def saved_status(store: RunStore, ts: str) -> RunStatus | None:
    record = await store.runs.run_in_thread(CHANNEL, ts)
    return record.status if record is not None else None


@pytest.mark.parametrize("saved_as", ["paused", "asked, not yet paused"])
async def test_an_approval_clicked_while_the_bot_was_down_is_honoured_when_its_run_resumes(run_store, saved_as):
    incident = IncidentBot([[ROLLBACK], [FINISH]])
    async with SlackFake(users=USERS) as slack:
        async with process(slack, run_store, incident) as before:
            ts = await before.mention("roll back order-service")
            message, approval_id = await paused_for_approval(before, run_store, ts)
        saved = await run_store.runs.run_in_thread(CHANNEL, ts)
        assert (
            await run_store.approvals.get(approval_id)
        ).state is ApprovalState.PENDING  # a shutdown does not void it
        if saved_as == "asked, not yet paused":  # the process died after the step's checkpoint, before the pause's
            trace = RunResult.from_json(saved.trace_json).model_copy(update={"stop_reason": StopReason.INTERRUPTED})
            await run_store.runs.checkpoint(saved.run_id, status=RunStatus.RUNNING, trace_json=trace.to_json())

        async with process(slack, run_store, incident, start=False) as after:
            assert await after.click(APPROVE, approval_id, message.ts, ts) == 200  # lands before the run resumes
            await after.until(
                lambda: "approved by" in json.dumps(slack.message(CHANNEL, message.ts).blocks), "the decision"
            )
            assert incident.executed == []
            await after.services.start()
            await after.until(lambda: after.reacted(ts, "white_check_mark"), "the resumed run ends")
        assert incident.executed == [("order-service", "v2.13.2")]
        assert any("It is waiting for the approval above." in t for t in texts(after, ts))
        approvals = [m for m in after.thread(ts)[2:] if "rollback_deployment" in json.dumps(m.blocks)]
        assert [m.ts for m in approvals] == [message.ts]  # asked once, not again after the restart
        result = uploaded_trace(slack, ts)
        assert (result.steps[0].approval.decision, result.steps[0].approval.by) == ("approved", ALICE)
        audit = await run_store.audit.audit_log(run_id=result.run_id)
        assert [(e.kind, e.actor) for e in audit if e.kind.startswith(("approval", "side_effect"))] == [
            ("approval_requested", "U0BOB"),
            ("approval_decided", ALICE),
        ]
        assert next(e for e in audit if e.kind == "approval_decided").detail["decision"] == "approved"


async def paused_for_approval(harness: HttpHarness, store: RunStore, ts: str) -> tuple[Any, str]:
    """The approval message and id once the run's pause is saved (so that a shutdown now is not mid-step)."""
    message, approval_id = await harness.until(lambda: harness.approval_message(ts), "an approval message")
    for _ in range(500):
        if await saved_status(store, ts) is RunStatus.AWAITING_APPROVAL:
            break
        await asyncio.sleep(0.01)
    assert await saved_status(store, ts) is RunStatus.AWAITING_APPROVAL
    return message, approval_id


async def test_an_approval_that_expired_while_the_bot_was_down_is_a_denial(run_store):
    incident = IncidentBot([[ROLLBACK], [FINISH]])
    async with SlackFake(users=USERS) as slack:
        async with process(slack, run_store, incident, ttl_s=0.2) as before:
            ts = await before.mention("roll back order-service")
            message, approval_id = await paused_for_approval(before, run_store, ts)
        await asyncio.sleep(0.3)  # the approval's 0.2 s run out while no process carries the run
        async with process(slack, run_store, incident, ttl_s=0.2) as after:
            await after.until(lambda: after.reacted(ts, "white_check_mark"), "the resumed run ends")
            assert await after.click(APPROVE, approval_id, message.ts, ts) == 200
            await after.until(lambda: slack.responses, "the late click's answer")
        assert incident.executed == []
        assert "expired" in json.dumps([r.body for r in slack.responses])
        assert (await run_store.approvals.get(approval_id)).state is ApprovalState.EXPIRED
        assert uploaded_trace(slack, ts).steps[0].approval.decision == "denied"


async def test_an_approval_asked_after_the_last_checkpoint_is_voided_when_the_run_resumes(run_store):
    """The process died after posting the approval, before saving the step: the model is asked again, and
    the old buttons must approve nothing."""
    incident = IncidentBot([[ROLLBACK], [FINISH]])
    async with SlackFake(users=USERS) as slack:
        async with process(slack, run_store, incident) as before:
            ts = await before.mention("roll back order-service")
            message, approval_id = await paused_for_approval(before, run_store, ts)
        saved = await run_store.runs.run_in_thread(CHANNEL, ts)
        lost = RunResult.from_json(saved.trace_json).model_copy(update={"steps": [], "turns": []})
        await run_store.runs.checkpoint(saved.run_id, status=RunStatus.RUNNING, trace_json=lost.to_json())
        async with process(slack, run_store, incident) as after:
            await after.until(lambda: after.reacted(ts, "white_check_mark"), "the resumed run ends")
            assert await after.click(APPROVE, approval_id, message.ts, ts) == 200
            await after.until(lambda: slack.responses, "the late click's answer")
        assert (await run_store.approvals.get(approval_id)).state is ApprovalState.VOIDED
        assert "nothing will run" in json.dumps([r.body for r in slack.responses])
        assert incident.executed == []
        assert "void" in json.dumps(slack.message(CHANNEL, message.ts).blocks).lower()


async def test_a_stop_for_a_run_no_process_carries_ends_it_for_good(run_store):
    incident = IncidentBot([[QUERY, SLOW]])
    async with SlackFake(users=USERS) as slack:
        async with process(slack, run_store, incident) as before:
            ts = await before.mention("order-service 5xx")
            await before.until(lambda: incident.models and incident.models[0].calls == 2, "the slow call started")
        async with process(slack, run_store, incident, start=False) as after:
            await after.mention("stop", thread_ts=ts)
            await after.until(lambda: after.reacted(ts, "x"), "the run ends with ❌")
            await after.services.start()  # nothing is left to resume
            assert after.services.investigations.active == {}
        saved = await run_store.runs.run_in_thread(CHANNEL, ts)
        assert saved.status is RunStatus.FINISHED
        assert uploaded_trace(slack, ts).stop_reason is StopReason.CANCELLED
        assert len(incident.models) == 1  # the model was never asked again


async def test_a_run_whose_replica_died_is_taken_over_once_its_lease_expires(run_store):
    """A record as a dead replica leaves it: a checkpoint after step 1, a lease that ran out."""
    stream = Agent(llm=ScriptedModel([QUERY]), tools=IncidentBot([]).tools).events("order-service 5xx", run_id="r-dead")
    async for event in stream:
        if isinstance(event, StepCompleted):
            break
    await stream.events.aclose()
    checkpoint = stream.snapshot()
    await save_run(
        run_store,
        checkpoint,
        status=RunStatus.RUNNING,
        owner="replica-that-died",
        lease_until=utc_now() - timedelta(seconds=1),
    )
    incident = IncidentBot([[FINISH]])
    async with SlackFake(users=USERS) as slack, process(slack, run_store, incident) as live:
        await live.until(lambda: slack.files, "the taken-over run ends with its trace")
    assert [s.call.name for s in uploaded_trace(slack, "1700000000.000100").steps] == ["query_metrics", "finish"]
    assert (await run_store.runs.get_run("r-dead")).status is RunStatus.FINISHED


@pytest.mark.parametrize("same_process", [True, False], ids=["same process", "after a restart"])
async def test_a_redelivered_event_starts_one_run(run_store, same_process):
    incident = IncidentBot([[FINISH]])
    async with SlackFake(users=USERS) as slack:
        async with process(slack, run_store, incident) as first:
            ts = await first.mention("order-service 5xx", event_id="Ev0DUP")
            await first.until(lambda: first.reacted(ts, "white_check_mark"), "the run ends")
            if same_process:
                await first.mention("order-service 5xx", event_id="Ev0DUP", ts=ts, retry_num=1)
        if not same_process:
            async with process(slack, run_store, incident) as second:
                await second.mention("order-service 5xx", event_id="Ev0DUP", ts=ts, retry_num=1)
    assert len(incident.models) == 1


async def test_a_run_that_fails_inside_opsagent_ends_for_good_and_says_so(run_store):
    """A bug of ours (here the agent cannot be built) ends the run explicitly; a restart does not loop on it."""

    class BrokenBot(IncidentBot):
        def agent_for(self, confirm):
            raise RuntimeError("agent wiring bug")

    incident = BrokenBot([])
    async with SlackFake(users=USERS) as slack:
        async with process(slack, run_store, incident) as first:
            ts = await first.mention("order-service 5xx")
            await first.ended(ts)
        result = uploaded_trace(slack, ts)
        assert result.stop_reason is StopReason.INTERNAL_ERROR
        assert result.detail == "the run failed inside OpsAgent (RuntimeError); the logs have details"
        said = json.dumps([m.blocks for m in first.thread(ts)])
        assert "failed inside OpsAgent (RuntimeError)" in said
        assert "stopped by" not in said, "nobody stopped it: OpsAgent failed"
        assert (await run_store.runs.run_in_thread(CHANNEL, ts)).status is RunStatus.FINISHED
        async with process(slack, run_store, incident) as second:
            assert second.services.investigations.active == {}  # nothing to resume


async def test_a_run_saved_after_its_answer_but_before_it_was_marked_finished_ends_with_that_answer(run_store):
    """The process died between the `finish` step's checkpoint and the run's last save: no model call is
    needed, the thread gets the answer it never got."""
    done = await Agent(llm=ScriptedModel([QUERY, FINISH]), tools=IncidentBot([]).tools).run("order-service 5xx")
    assert done.ok
    await save_run(run_store, done, status=RunStatus.RUNNING)
    incident = IncidentBot([[]])  # an empty strict script: any model call would fail the run
    async with SlackFake(users=USERS) as slack, process(slack, run_store, incident) as live:
        await live.until(lambda: live.reacted("1700000000.000100", "white_check_mark") or slack.files, "the end")
        await live.until(lambda: slack.files, "the trace in the thread")
    result = uploaded_trace(slack, "1700000000.000100")
    assert (result.stop_reason, result.answer) == (StopReason.FINISH, done.answer)
    assert incident.models[0].calls == 0
    assert any("*v2.14.0.*" in json.dumps(m.blocks) for m in live.thread("1700000000.000100")), "its answer"
    assert (await run_store.runs.get_run(done.run_id)).status is RunStatus.FINISHED


async def test_the_heartbeat_gives_up_a_lease_its_replica_holds_but_does_not_carry(run_store):
    """A release that failed while the store was down leaves the lease with a replica that is not running the
    run: the next heartbeat gives it up, so the run can be resumed."""
    incident = IncidentBot([[FINISH]])
    async with SlackFake(users=USERS) as slack, process(slack, run_store, incident, start=False) as live:
        replica = live.services.investigations.supervisor.replica
        await save_run(
            run_store,
            RunResult(run_id="r-held", task="t", stop_reason=StopReason.INTERRUPTED),
            status=RunStatus.RUNNING,
            save_trace=False,
            owner=replica,
            lease_until=utc_now() + timedelta(minutes=5),
        )
        assert [r.run_id for r in await run_store.leases.claimable_runs()] == []
        await live.services.duties.heartbeat()
        assert [r.run_id for r in await run_store.leases.claimable_runs()] == ["r-held"]


async def test_a_stop_recorded_on_a_saved_run_ends_it_when_it_is_resumed(run_store):
    """A Stop is kept on the run, not only relayed: whichever process carries the run next ends it."""
    incident = IncidentBot([[QUERY, SLOW], []])
    async with SlackFake(users=USERS) as slack:
        async with process(slack, run_store, incident) as before:
            ts = await before.mention("order-service 5xx")
            await before.until(lambda: incident.models and incident.models[0].calls == 2, "the slow call started")
        saved = await run_store.runs.run_in_thread(CHANNEL, ts)
        await run_store.runs.request_stop(saved.run_id, "<@U0ALICE>")  # e.g. its relay was lost in a reconnect
        async with process(slack, run_store, incident) as after:
            await after.until(lambda: after.reacted(ts, "x"), "the resumed run ends with ❌")
    result = uploaded_trace(slack, ts)
    assert (result.stop_reason, result.detail) == (StopReason.CANCELLED, "stopped by <@U0ALICE>")
    assert incident.models[1].calls == 0  # the resumed run was not asked to go on


async def test_a_replica_takes_over_only_as_many_runs_as_it_has_room_for(run_store):
    for n in (1, 2):
        await save_run(
            run_store,
            RunResult(run_id=f"r-orphan-{n}", task="t", stop_reason=StopReason.INTERRUPTED),
            status=RunStatus.RUNNING,
            save_trace=False,
            thread_ts=f"1700000000.00010{n}",
        )
    one_at_a_time = NO_LIMITS.model_copy(update={"max_concurrent_runs": 1})
    incident = IncidentBot([[SLOW]])
    async with SlackFake(users=USERS) as slack, process(slack, run_store, incident, access=one_at_a_time) as live:
        assert list(live.services.investigations.active) == ["r-orphan-1"]
        assert [r.run_id for r in await run_store.leases.claimable_runs()] == ["r-orphan-2"]


async def test_two_replicas_starting_a_run_in_one_thread_at_once_start_one(run_store):
    incident = IncidentBot([[SLOW], [SLOW]])
    async with (
        SlackFake(users=USERS) as slack,
        process(slack, run_store, incident) as one,
        process(slack, run_store, incident) as two,
    ):
        thread = slack.add_message(CHANNEL, "order-service 5xx", user="U0BOB").ts
        started = await asyncio.gather(
            *(start_through_the_gate(replica.services, thread, "order-service 5xx") for replica in (one, two))
        )
        assert sum(run is not None for run in started) == 1
        await one.until(
            lambda: any(t.startswith("An investigation is still running") for t in texts(one, thread)),
            "the second start is told the thread is taken",
        )
