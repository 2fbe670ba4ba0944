"""The Slack approval broker: only a timely, single click on the right message lets a call run.

Who may click at all (an approver of the installing workspace) is the gate's: tests/bot/access/test_identity.py."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from structlog.testing import capture_logs

from bot.access.identity import Approvers
from bot.approvals import broker as broker_module
from bot.approvals.broker import ApprovalBroker, ApproverPolicy
from bot.approvals.outcomes import ApprovalRefusal, ApprovalRefused, Decided
from bot.approvals.store import ApprovalState, InMemoryApprovalStore, PendingApproval
from bot.audit.trail import AuditEvent, AuditTrail
from bot.words import expiry_reason
from kernel import (
    Agent,
    ApprovalRequest,
    Approved,
    Deferred,
    Denied,
    ErrorKind,
    RunControl,
    ScriptedModel,
    SideEffectMode,
    SideEffectPolicy,
    StopReason,
    ToolCall,
    ToolRegistry,
    text_turn,
)
from testkit.fakes.clock import T0, ManualClock

POLICY = ApproverPolicy(approvers=Approvers(frozenset({"U_ALICE", "U_BOB"}), frozenset({"S_ONCALL"})))
ARGS = {"service": "order-service", "to_version": "v2.13.2"}
ROLLBACK = text_turn("rollback_deployment", "Why: v2.14.0 broke checkout.", **ARGS)
FINISH = text_turn("finish", answer="done")
FULL = SideEffectPolicy(mode=SideEffectMode.FULL)


class FakeUI:
    """Records what would be posted and updated in Slack; `posted` yields each request with its message ts."""

    def __init__(self) -> None:
        self.requests: list[PendingApproval] = []
        self.posted: asyncio.Queue[PendingApproval] = asyncio.Queue()
        self.shown: list[PendingApproval] = []
        self.post_error: Exception | None = None
        self.show_error: Exception | None = None
        self.while_posting = None
        """A coroutine function run inside `post_request`, before it returns the message ts."""

    async def post_request(self, approval: PendingApproval) -> str:
        self.requests.append(approval)
        if self.post_error:
            raise self.post_error
        ts = f"1796007600.{len(self.requests):06d}"
        if self.while_posting:
            await self.while_posting()
        self.posted.put_nowait(approval.model_copy(update={"message_ts": ts}))
        return ts

    async def show_decision(self, approval: PendingApproval) -> None:
        self.shown.append(approval)
        if self.show_error:
            raise self.show_error


class HeldStore(InMemoryApprovalStore):
    """The in-memory approval store, whose reads can be held until released: concurrent clicks meet there."""

    def __init__(self) -> None:
        super().__init__()
        self.hold: asyncio.Event | None = None
        self.arrivals: asyncio.Queue[str] = asyncio.Queue()
        """The approvals whose reads reached the hold, in order."""

    async def get(self, approval_id: str) -> PendingApproval | None:
        if self.hold is not None:
            self.arrivals.put_nowait(approval_id)
            await self.hold.wait()
        return await super().get(approval_id)


class Harness:
    """A broker with fakes, and the hook tasks it started (cancelled at teardown)."""

    def __init__(
        self, policy: ApproverPolicy = POLICY, *, recheck_s: float = 5.0, audit: AuditTrail | None = None
    ) -> None:
        self.ui = FakeUI()
        self.clock = ManualClock()
        self.store = HeldStore()
        self.broker = ApprovalBroker(
            policy=policy, ui=self.ui, store=self.store, clock=self.clock, recheck_s=recheck_s, audit=audit
        )
        self.tasks: list[asyncio.Task[Approved | Denied]] = []

    async def ask(self, run_id: str = "run-1", requested_by: str = "U_REQ", step: int = 1):
        """The kernel's side of one approval: the hook posts it and defers; the task waits for its decision."""
        call = ToolCall("rollback_deployment", dict(ARGS))
        request = ApprovalRequest(
            run_id="kernel-run",
            step=step,
            call=call,
            args_hash=call.args_hash(),
            thought="v2.14.0 broke checkout",
            summary="Roll a service back.",
        )
        hook = self.broker.confirm_hook(run_id, "C_INCIDENT", "1796007000.000100", requested_by)
        deferred = await hook(request)
        assert isinstance(deferred, Deferred)
        task = asyncio.create_task(self.broker.decision(deferred.approval_id))
        self.tasks.append(task)
        approval = await asyncio.wait_for(self.ui.posted.get(), 5)
        assert approval.approval_id == deferred.approval_id
        return task, approval

    async def click(self, approval: PendingApproval, user: str = "U_BOB", *, approve: bool = True, **overrides):
        fields = {"channel": approval.channel, "message_ts": approval.message_ts} | overrides
        return await self.broker.decide(approval.approval_id, user_id=user, approve=approve, **fields)

    async def state(self, approval: PendingApproval) -> ApprovalState:
        stored = await self.store.get(approval.approval_id)
        assert stored is not None
        return stored.state


@pytest.fixture
async def h():
    harness = Harness()
    yield harness
    for task in harness.tasks:
        task.cancel()
    await asyncio.gather(*harness.tasks, return_exceptions=True)


def counting_registry() -> tuple[ToolRegistry, list[dict[str, str]]]:
    registry = ToolRegistry()
    executions: list[dict[str, str]] = []

    @registry.register(side_effect=True)
    async def rollback_deployment(service: str, to_version: str) -> str:
        """Roll a service back to an earlier version."""
        executions.append({"service": service, "to_version": to_version})
        return f"rolled back {service} to {to_version}"

    return registry, executions


async def run_agent(h: Harness, clicker, *, control: RunControl | None = None):
    """Run an agent whose side-effect call pauses on the broker, with `clicker` acting in Slack meanwhile;
    the run resumes with the broker's decision, as the Slack bot resumes it."""
    registry, executions = counting_registry()
    model = ScriptedModel([ROLLBACK, FINISH])
    hook = h.broker.confirm_hook("run-1", "C_INCIDENT", "1796007000.000100", "U_REQ")
    agent = Agent(llm=model, tools=registry, policy=FULL, confirm=hook)
    paused = await agent.run("roll back order-service", control=control)
    assert paused.stop_reason is StopReason.AWAITING_APPROVAL
    assert executions == []  # nothing runs before a decision
    (pending,) = paused.pending_steps()
    waiting = asyncio.create_task(h.broker.decision(pending.approval.approval_id))
    clicked = await clicker(await asyncio.wait_for(h.ui.posted.get(), 5))
    decision = await asyncio.wait_for(waiting, 5)
    result = await agent.resume(paused, decisions={pending.approval.approval_id: decision}, control=control)
    model.assert_complete()
    return result, clicked, executions


# --- through the kernel -----------------------------------------------------------------------------------


async def test_approval_runs_the_tool_exactly_once_with_the_stored_arguments(h):
    result, outcome, executions = await run_agent(h, lambda approval: h.click(approval, "U_BOB"))
    assert isinstance(outcome, Decided)
    assert (outcome.approval.state, outcome.approval.decided_by) == (ApprovalState.APPROVED, "U_BOB")
    assert executions == [ARGS]
    assert result.ok
    assert result.steps[0].approval.decision == "approved"
    assert result.steps[0].approval.by == "U_BOB"
    assert result.steps[0].observation == "rolled back order-service to v2.13.2"
    posted = h.ui.requests[0]
    assert (posted.tool, posted.args, posted.args_hash) == (
        "rollback_deployment",
        ARGS,
        result.steps[0].call.args_hash(),
    )
    assert (posted.run_id, posted.channel, posted.thread_ts, posted.requested_by) == (
        "run-1",
        "C_INCIDENT",
        "1796007000.000100",
        "U_REQ",
    )
    assert posted.thought == "Why: v2.14.0 broke checkout."
    assert posted.expires_at - posted.created_at == timedelta(seconds=900)
    assert [(a.state, a.decided_by) for a in h.ui.shown] == [(ApprovalState.APPROVED, "U_BOB")]


async def test_denial_reaches_the_model_with_its_reason_and_nothing_runs(h):
    result, outcome, executions = await run_agent(
        h, lambda approval: h.click(approval, "U_BOB", approve=False, reason="not during peak traffic")
    )
    assert isinstance(outcome, Decided)
    assert (outcome.approval.state, outcome.approval.reason) == (ApprovalState.DENIED, "not during peak traffic")
    assert executions == []
    assert result.steps[0].error is ErrorKind.DENIED
    assert "denied by U_BOB: not during peak traffic" in result.steps[0].observation
    assert [a.state for a in h.ui.shown] == [ApprovalState.DENIED]


async def test_a_denial_without_a_reason_says_it_was_denied_in_slack(h):
    task, approval = await h.ask()
    await h.click(approval, "U_BOB", approve=False)
    assert await task == Denied(by="U_BOB", reason="denied in Slack", at=T0)


async def test_a_request_that_cannot_be_posted_fails_closed(h):
    h.ui.post_error = ConnectionError("slack is down")
    registry, executions = counting_registry()
    hook = h.broker.confirm_hook("run-1", "C_INCIDENT", "1796007000.000100", "U_REQ")
    model = ScriptedModel([ROLLBACK, FINISH])
    result = await Agent(llm=model, tools=registry, policy=FULL, confirm=hook).run("roll back")
    assert executions == []
    assert "the approval request failed (ConnectionError: slack is down)" in result.steps[0].observation
    stored = await h.store.get(h.ui.requests[0].approval_id)
    assert stored.state is ApprovalState.VOIDED
    assert stored.reason == "the approval request failed (ConnectionError: slack is down)"
    assert h.ui.shown == []  # there is no message to update


async def test_stop_voids_the_pending_approval_as_a_denial(h):
    async def stop(approval):
        voided = await h.broker.void_run("run-1", "stopped by <@U_BOB>", by="U_BOB")
        return voided, await h.click(approval, "U_BOB")

    result, (voided, late), executions = await run_agent(h, stop)
    assert [a.state for a in voided] == [ApprovalState.VOIDED]
    assert executions == []
    assert "denied by U_BOB: stopped by <@U_BOB>" in result.steps[0].observation
    assert isinstance(late, ApprovalRefused)
    assert (late.refusal, late.approval.state, late.approval.decided_by) == (
        ApprovalRefusal.VOIDED,
        ApprovalState.VOIDED,
        "U_BOB",
    )
    assert [a.state for a in h.ui.shown] == [ApprovalState.VOIDED]


async def test_a_cancelled_wait_leaves_the_approval_pending_for_whoever_resumes_the_run(h):
    task, approval = await h.ask()
    task.cancel()  # a shutdown: the run is checkpointed, its approval must survive
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await h.state(approval) is ApprovalState.PENDING
    assert h.ui.shown == []
    assert isinstance(await h.click(approval, "U_BOB"), Decided)  # clicked while nobody waits
    assert await h.broker.decision(approval.approval_id) == Approved(by="U_BOB", args_hash=approval.args_hash, at=T0)


async def test_a_decision_for_an_unknown_approval_is_a_denial_that_says_why(h):
    assert await h.broker.decision("lost-id") == Denied(
        by="opsagent", reason="the approval record is missing (lost with an in-memory store); ask again", at=T0
    )


async def test_a_click_on_another_process_wakes_the_run_waiting_here(h):
    """Two brokers on one store stand for two replicas: B's click is announced, A's waiting run wakes."""
    announced: list[str] = []

    async def announce(approval_id: str) -> None:
        announced.append(approval_id)
        await h.broker.wake(approval_id)  # what the store's notification does on replica A

    other = ApprovalBroker(policy=POLICY, ui=h.ui, store=h.store, clock=h.clock, announce=announce)
    task, approval = await h.ask()
    outcome = await other.decide(
        approval.approval_id,
        user_id="U_BOB",
        channel="C_INCIDENT",
        message_ts=approval.message_ts,
        approve=True,
    )
    assert isinstance(outcome, Decided)
    assert announced == [approval.approval_id]
    assert await asyncio.wait_for(task, 5) == Approved(by="U_BOB", args_hash=approval.args_hash, at=T0)


async def test_a_lost_announcement_is_caught_by_rereading_the_store():
    h = Harness(recheck_s=0.01)
    other = ApprovalBroker(policy=POLICY, ui=h.ui, store=h.store, clock=h.clock)
    task, approval = await h.ask()
    await other.decide(
        approval.approval_id,
        user_id="U_BOB",
        channel="C_INCIDENT",
        message_ts=approval.message_ts,
        approve=False,
    )
    assert await asyncio.wait_for(task, 5) == Denied(by="U_BOB", reason="denied in Slack", at=T0)


async def test_a_stop_while_the_request_is_being_posted_still_updates_the_message(h):
    h.ui.while_posting = lambda: h.broker.void_run("run-1", "stopped by <@U_BOB>", by="U_BOB")
    task, approval = await h.ask()
    assert await task == Denied(by="U_BOB", reason="stopped by <@U_BOB>", at=T0)
    assert [(a.state, a.message_ts) for a in h.ui.shown] == [(ApprovalState.VOIDED, approval.message_ts)]


async def test_a_click_that_beats_the_write_of_its_message_ts_is_decided_as_soon_as_it_is_written(h, monkeypatch):
    """Slack shows the buttons before the broker records the message's ts: the click waits for that write, woken by
    it in this process, not by the next re-read of the store (a minute here: the test would time out)."""
    monkeypatch.setattr(broker_module, "POSTING_RECHECK_S", 60.0)
    clicked: list[asyncio.Task] = []

    async def click_while_posting() -> None:  # the message is in Slack; its ts is not stored yet
        ts = f"1796007600.{len(h.ui.requests):06d}"
        approval_id = h.ui.requests[-1].approval_id
        decide = h.broker.decide(approval_id, user_id="U_BOB", channel="C_INCIDENT", message_ts=ts, approve=True)
        clicked.append(asyncio.create_task(decide))
        await asyncio.sleep(0)  # the click reads the approval before the post returns

    h.ui.while_posting = click_while_posting
    task, approval = await h.ask()
    outcome = await asyncio.wait_for(clicked[0], 5)
    assert isinstance(outcome, Decided)
    assert outcome.approval.decided_by == "U_BOB"
    assert await asyncio.wait_for(task, 5) == Approved(by="U_BOB", args_hash=approval.args_hash, at=T0)


async def test_the_message_shows_the_decision_before_the_run_is_woken():
    """The run's line for the action it takes replaces the decision line on the approval message: a decision line
    written after the run woke (the audit line before it may yield) would hide what the action did."""
    events: list[str] = []
    h = Harness(audit=AuditTrail(YieldingSink(events), names=yielding_name))
    task, approval = await h.ask()
    woke = asyncio.ensure_future(_after(task, lambda: events.append(f"run woken, {len(h.ui.shown)} shown")))
    await h.click(approval)
    await woke
    assert events == ["approval_requested", "run woken, 1 shown", "approval_decided"], "shown, woken, then audited"
    assert [a.state for a in h.ui.shown] == [ApprovalState.APPROVED]


class YieldingSink:
    """An audit sink that yields to the loop before keeping each event, as a store's write may."""

    def __init__(self, events: list[str]) -> None:
        self.events = events

    async def audit(self, event: AuditEvent, *, urgent: bool = False) -> None:
        await asyncio.sleep(0)
        self.events.append(event.kind)


async def yielding_name(user_id: str) -> str:
    await asyncio.sleep(0)
    return f"name of {user_id}"


async def _after(task: asyncio.Task, then) -> None:
    await task
    then()


# --- who may click, and which click counts ----------------------------------------------------------------


async def test_a_forged_approval_id_is_refused_and_audited(h):
    await h.ask()
    with capture_logs() as logs:
        outcome = await h.broker.decide(
            "forged-id", user_id="U_BOB", channel="C_INCIDENT", message_ts="1.2", approve=True
        )
    assert outcome == ApprovalRefused(ApprovalRefusal.UNKNOWN_APPROVAL)
    assert logs == [
        {
            "event": "approval_refused",
            "log_level": "warning",
            "approval_id": "forged-id",
            "user": "U_BOB",
            "reason": "unknown_approval",
        }
    ]


@pytest.mark.parametrize(
    "overrides",
    [{"channel": "C_OTHER"}, {"message_ts": "1796007600.999999"}],
    ids=["another channel", "another message"],
)
async def test_a_click_carried_to_another_message_is_refused(h, overrides):
    task, approval = await h.ask()
    outcome = await h.click(approval, **overrides)
    assert isinstance(outcome, ApprovalRefused)
    assert outcome == ApprovalRefused(ApprovalRefusal.WRONG_MESSAGE, approval)
    assert await h.state(approval) is ApprovalState.PENDING
    assert not task.done()


async def test_a_double_click_decides_once(h):
    task, approval = await h.ask()
    first = await h.click(approval, "U_BOB")
    second = await h.click(approval, "U_BOB", approve=False)
    assert isinstance(first, Decided)
    assert second == ApprovalRefused(ApprovalRefusal.ALREADY_DECIDED, first.approval)
    assert (first.approval.state, first.approval.decided_by, first.approval.decided_at) == (
        ApprovalState.APPROVED,
        "U_BOB",
        T0,
    )
    assert await task == Approved(by="U_BOB", args_hash=approval.args_hash, at=T0)
    assert len(h.ui.shown) == 1


@pytest.mark.parametrize("clickers", [("U_ALICE", "U_BOB"), ("U_BOB", "U_BOB")], ids=["two approvers", "one, twice"])
async def test_concurrent_clicks_have_exactly_one_winner(h, clickers):
    task, approval = await h.ask()
    h.store.hold = asyncio.Event()
    clicks = [
        asyncio.create_task(h.click(approval, clickers[0], approve=True)),
        asyncio.create_task(h.click(approval, clickers[1], approve=False)),
    ]
    for _ in clicks:  # both clicks are reading the approval, held there: both will find it pending
        await asyncio.wait_for(h.store.arrivals.get(), 5)
    h.store.hold.set()
    outcomes = await asyncio.gather(*clicks)
    winners = [o for o in outcomes if isinstance(o, Decided)]
    losers = [o for o in outcomes if isinstance(o, ApprovalRefused)]
    assert len(winners) == 1
    assert len(losers) == 1
    won = winners[0].approval
    assert losers[0] == ApprovalRefused(ApprovalRefusal.ALREADY_DECIDED, won)
    decision = await task
    assert decision.by == won.decided_by
    assert isinstance(decision, Approved) == (won.state is ApprovalState.APPROVED)
    assert [a.state for a in h.ui.shown] == [won.state]


async def test_expiry_is_a_denial_and_the_message_says_so():
    h = Harness(POLICY.model_copy(update={"ttl_s": 0.05}))
    task, approval = await h.ask()
    decision = await asyncio.wait_for(task, 5)
    assert decision == Denied(by="opsagent", reason="not approved within 0.05 s; treated as a denial", at=T0)
    assert [(a.state, a.decided_by) for a in h.ui.shown] == [(ApprovalState.EXPIRED, "opsagent")]
    late = await h.click(approval)
    assert (late.refusal, late.approval.state) == (ApprovalRefusal.EXPIRED, ApprovalState.EXPIRED)
    assert late.approval.expires_at == T0 + timedelta(seconds=0.05)


async def test_expiry_is_checked_at_click_time_before_the_timer_fires(h):
    task, approval = await h.ask()
    h.clock.now = T0 + timedelta(minutes=15)
    late = await h.click(approval)
    assert late == ApprovalRefused(ApprovalRefusal.EXPIRED, await h.store.get(approval.approval_id))
    assert late.approval.expires_at == T0 + timedelta(minutes=15)
    assert await task == Denied(
        by="opsagent", reason="not approved within 15 min; treated as a denial", at=T0 + timedelta(minutes=15)
    )
    assert [a.state for a in h.ui.shown] == [ApprovalState.EXPIRED]


def test_expiry_reason_names_the_ttl():
    assert expiry_reason(900) == "not approved within 15 min; treated as a denial"
    assert expiry_reason(90) == "not approved within 1.5 min; treated as a denial"
    assert expiry_reason(30) == "not approved within 30 s; treated as a denial"


async def test_self_approval_is_refused_but_self_denial_is_allowed(h):
    task, approval = await h.ask(requested_by="U_ALICE")
    refused = await h.click(approval, "U_ALICE", approve=True)
    assert refused == ApprovalRefused(ApprovalRefusal.SELF_APPROVAL, approval)
    assert await h.state(approval) is ApprovalState.PENDING
    assert isinstance(await h.click(approval, "U_ALICE", approve=False), Decided)
    assert await task == Denied(by="U_ALICE", reason="denied in Slack", at=T0)


async def test_self_approval_when_the_policy_allows_it():
    h = Harness(POLICY.model_copy(update={"allow_self_approval": True}))
    task, approval = await h.ask(requested_by="U_ALICE")
    assert isinstance(await h.click(approval, "U_ALICE"), Decided)
    assert await task == Approved(by="U_ALICE", args_hash=approval.args_hash, at=T0)


async def test_a_failing_message_update_does_not_undo_the_decision(h):
    h.ui.show_error = ConnectionError("chat.update failed")
    task, approval = await h.ask()
    assert isinstance(await h.click(approval, "U_BOB"), Decided)
    assert await task == Approved(by="U_BOB", args_hash=approval.args_hash, at=T0)
    assert await h.state(approval) is ApprovalState.APPROVED


async def test_void_run_touches_only_that_runs_pending_approvals(h):
    first, one = await h.ask(run_id="run-1")
    other, two = await h.ask(run_id="run-2")
    voided = await h.broker.void_run("run-1", "stopped by <@U_BOB>", by="U_BOB")
    assert [a.approval_id for a in voided] == [one.approval_id]
    assert await first == Denied(by="U_BOB", reason="stopped by <@U_BOB>", at=T0)
    assert await h.state(two) is ApprovalState.PENDING
    assert not other.done()


# --- the store ------------------------------------------------------------------------------


async def test_store_compare_and_set_moves_only_from_the_expected_state(h):
    _, approval = await h.ask()
    approved = approval.model_copy(update={"state": ApprovalState.APPROVED, "decided_by": "U_BOB"})
    denied = approval.model_copy(update={"state": ApprovalState.DENIED, "decided_by": "U_ALICE"})
    assert await h.store.compare_and_set(approval.approval_id, ApprovalState.PENDING, approved)
    assert not await h.store.compare_and_set(approval.approval_id, ApprovalState.PENDING, denied)
    assert not await h.store.compare_and_set("missing", ApprovalState.PENDING, denied)
    assert (await h.store.get(approval.approval_id)).decided_by == "U_BOB"
    assert await h.store.pending_for_run("run-1") == []
    with pytest.raises(ValueError, match="already exists"):
        await h.store.add(approval)
