"""Every side effect a run proposed is in its verdict with what came of it, from real kernel traces of each
outcome: done, denied (by whom, why), expired, a dry run, refused by policy, waiting, and not run because the run
was stopped while it waited. One that did not happen is a next step for a person, by hand, once per call."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from bot.verdict import verdict_of
from bot.verdict_actions import ActionState, actions_of, by_hand
from bot.words import BROKER_USER, RUN_STOPPED_REASON, expiry_reason
from kernel import (
    Agent,
    ApprovalRecord,
    ApprovalRequest,
    Approved,
    Budget,
    Deferred,
    Denied,
    ErrorKind,
    ScriptedModel,
    SideEffectMode,
    SideEffectPolicy,
    Step,
    StopReason,
    ToolCall,
    native_turn,
)
from samples.trace_runs import rollback_run

AT = datetime(2026, 11, 30, 19, 16, tzinfo=UTC)
CALL = "rollback_deployment order-service v2.13.2"


def deciding(decision: Approved | Denied | Deferred | None = None, *, approve_as: str = "") -> object:
    async def confirm(request: ApprovalRequest) -> Approved | Denied | Deferred:
        if approve_as:
            return Approved(by=approve_as, args_hash=request.args_hash, at=AT)
        assert decision is not None
        return decision

    return confirm


async def test_an_approved_rollback_that_ran_is_done_with_who_approved_it_when_and_what_came_of_it(tools, backend):
    result = await rollback_run(tools, SideEffectMode.FULL, deciding(approve_as="U0BOB"))
    [action] = verdict_of(result).actions
    assert (action.step, action.call, action.state, action.approved_by, action.ok) == (
        2,
        CALL,
        ActionState.DONE,
        "U0BOB",
        True,
    )
    assert action.said() == "done, approved by U0BOB at 19:16 UTC: rolled back order-service to v2.13.2"
    assert backend.rollbacks == [("order-service", "v2.13.2")]
    assert verdict_of(result).by_hand == (), "it ran: nothing to do by hand"


async def test_a_denied_rollback_says_by_whom_and_why_and_is_a_next_step_by_hand(tools, backend):
    denied = Denied(by="U0BOB", reason="not during peak traffic", at=AT)
    verdict = verdict_of(await rollback_run(tools, SideEffectMode.FULL, deciding(denied)))
    [action] = verdict.actions
    assert action.state is ActionState.DENIED
    assert action.said(person=lambda who: f"@{who}") == "denied by @U0BOB at 19:16 UTC: not during peak traffic"
    assert (action.approved_by, action.ok) == ("", False)
    assert [a.by_hand() for a in verdict.by_hand] == [f"{CALL} by hand, if you agree (step 2 was denied)"]
    assert backend.rollbacks == []


async def test_an_approval_nobody_decided_in_time_is_expired_not_denied_by_a_person(tools):
    expired = Denied(by=BROKER_USER, reason=expiry_reason(900), at=AT)
    verdict = verdict_of(await rollback_run(tools, SideEffectMode.FULL, deciding(expired)))
    [action] = verdict.actions
    assert action.state is ActionState.EXPIRED
    assert action.said() == "expired: not approved within 15 min; treated as a denial"
    assert [a.step for a in verdict.by_hand] == [2]


async def test_a_dry_run_says_what_it_would_do_and_that_it_was_not_done(tools, backend):
    verdict = verdict_of(await rollback_run(tools, SideEffectMode.DRY_RUN))
    [action] = verdict.actions
    assert action.state is ActionState.DRY_RUN
    assert action.said().startswith("dry run, not done: would do {")
    assert "https://deploy.example/rollback" in action.outcome, "the preview's words, not the model's"
    assert "[DryRun]" not in action.said(), "the kernel's prefix is for the model"
    assert verdict.by_hand[0].by_hand() == f"{CALL} by hand, if you agree (step 2 was a dry run)"
    assert backend.rollbacks == []


async def test_a_side_effect_refused_by_the_read_only_policy_says_so_in_words_for_people(tools):
    verdict = verdict_of(await rollback_run(tools, SideEffectMode.READ_ONLY))
    [action] = verdict.actions
    assert action.state is ActionState.REFUSED
    assert action.said() == "refused: side effects are disabled by policy (read_only)"
    assert "read-only tool" not in action.said(), "the model's hint stays in the model's observation"
    assert [a.state for a in verdict.by_hand] == [ActionState.REFUSED]


async def test_a_rollback_waiting_at_a_pause_waits_and_one_the_stop_left_waiting_did_not_run(tools):
    paused = await rollback_run(tools, SideEffectMode.FULL, deciding(Deferred(approval_id="a1")))
    assert paused.stop_reason is StopReason.AWAITING_APPROVAL
    [waiting] = verdict_of(paused).actions
    assert (waiting.state, waiting.said()) == (ActionState.WAITING, "waiting for approval")
    assert verdict_of(paused).by_hand == (), "still up to its approver"
    ended = paused.model_copy(update={"stop_reason": StopReason.CANCELLED, "detail": "stopped by U0BOB"})
    [left] = verdict_of(ended).actions
    assert left.state is ActionState.NOT_RUN
    assert left.said() == "not run: the run was stopped while it waited for approval"
    failed = paused.model_copy(update={"stop_reason": StopReason.INTERNAL_ERROR})
    assert verdict_of(failed).actions[0].said() == (
        "not run: the run ended while it waited for approval (Stopped: OpsAgent itself failed (not the model, a tool "
        "or a person))"
    )
    assert [a.step for a in verdict_of(failed).by_hand] == [2]


async def test_a_rollback_the_stop_voided_did_not_run_and_names_who_stopped_the_run(tools):
    stopped = Denied(by="U0BOB", reason=RUN_STOPPED_REASON, at=AT)
    [action] = verdict_of(await rollback_run(tools, SideEffectMode.FULL, deciding(stopped))).actions
    assert action.state is ActionState.NOT_RUN
    assert action.said() == "not run: the run was stopped while it waited for approval (stopped by U0BOB at 19:16 UTC)"


async def test_a_rollback_asked_for_past_the_step_budget_did_not_run_and_is_a_next_step_by_hand(tools, backend):
    """The model asks for a check and the rollback in its last turn: only the check fits the budget. The rollback
    reached no gate and nobody, and still it was proposed: the verdict lists it as not run, to be done by hand."""
    rollback = {"service": "order-service", "to_version": "v2.13.2"}
    model = ScriptedModel(
        [
            native_turn(("query_metrics", {"service": "order-service"}), ("rollback_deployment", rollback)),
            "5xx jumped at the deploy; rolling back v2.14.0 is the next step.",  # the partial answer it is asked for
        ]
    )
    policy = SideEffectPolicy(mode=SideEffectMode.FULL)
    result = await Agent(llm=model, tools=tools, budget=Budget(max_steps=1), policy=policy).run("order-service 5xx")
    assert [(s.call.name, s.error, s.side_effect) for s in result.steps] == [
        ("query_metrics", None, False),
        ("rollback_deployment", ErrorKind.NOT_RUN, True),
    ]
    verdict = verdict_of(result)
    [action] = verdict.actions
    assert (action.step, action.call, action.state) == (2, CALL, ActionState.NOT_RUN)
    assert action.said() == "not run: the run ended before it ran"
    assert [a.by_hand() for a in verdict.by_hand] == [f"{CALL} by hand, if you agree (step 2 did not run)"]
    assert backend.rollbacks == []
    older = result.model_copy(update={"steps": [replace(s, side_effect=False) for s in result.steps]})
    assert verdict_of(older).actions == (), "a trace from before the mark cannot tell it from a read"


def test_a_call_denied_then_approved_in_another_step_is_not_a_next_step_and_each_call_is_listed_once():
    call = ToolCall(name="rollback_deployment", args={"service": "checkout", "to_version": "v3.7.2"})
    other = ToolCall(name="restart_pods", args={"service": "gateway"})
    denied = ApprovalRecord(decision="denied", by="U0BOB", at=AT, reason="not yet")
    steps = [
        Step(
            index=1,
            turn=0,
            call=call,
            observation="'rollback_deployment' was not run",
            error=ErrorKind.DENIED,
            approval=denied,
        ),
        Step(index=2, turn=1, call=other, observation="not run", error=ErrorKind.DENIED, approval=denied),
        Step(index=3, turn=2, call=other, observation="not run", error=ErrorKind.DENIED, approval=denied),
        Step(
            index=4,
            turn=3,
            call=call,
            observation="rolled back",
            approval=ApprovalRecord(decision="approved", by="U0ALICE", at=AT),
        ),
    ]
    actions = actions_of(steps, StopReason.FINISH)
    assert [a.state for a in actions] == [ActionState.DENIED] * 3 + [ActionState.DONE]
    assert [a.step for a in by_hand(actions)] == [2], "the rollback ran at step 4; the restart is asked once"


def test_reads_prose_and_the_finish_are_no_side_effects():
    steps = [
        Step(index=1, turn=0, call=ToolCall(name="query_metrics", args={}), observation="ok"),
        Step(index=2, turn=1, call=ToolCall(name="search_logs", args={}), error=ErrorKind.TIMEOUT, observation="x"),
        Step(index=3, turn=2, observation="Reply with a finish call"),
        Step(index=4, turn=3, call=ToolCall(name="finish", args={"answer": "x"})),
    ]
    assert actions_of(steps, StopReason.FINISH) == ()
