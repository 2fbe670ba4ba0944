"""Side effects: refused by default, run only with a matching human approval, paused and resumed."""

from __future__ import annotations

import asyncio

import pytest

from kernel import (
    Agent,
    Approved,
    Budget,
    Deferred,
    Denied,
    ErrorKind,
    RunResult,
    ScriptedModel,
    SideEffectMode,
    SideEffectPolicy,
    StopReason,
    ToolRegistry,
    native_turn,
    text_turn,
)

ROLLBACK = text_turn(
    "rollback_deployment", "Why: v2.14.0 broke checkout.", service="order-service", to_version="v2.13.2"
)
FINISH = text_turn("finish", answer="Rolled back.")
FULL = SideEffectPolicy(mode=SideEffectMode.FULL)


async def run(tools, script, **options):
    model = ScriptedModel(script)
    result = await Agent(llm=model, tools=tools, **options).run("roll back order-service")
    model.assert_complete()
    return result


class Approver:
    """A confirm hook that records the requests it saw and answers with a fixed decision."""

    def __init__(self, decide):
        self.decide = decide
        self.requests = []

    async def __call__(self, request):
        self.requests.append(request)
        return self.decide(request)


async def test_read_only_by_default(tools, backend):
    result = await run(tools, [ROLLBACK, FINISH], confirm=Approver(lambda r: Approved(by="U1", args_hash=r.args_hash)))
    assert backend.rollbacks == []
    assert result.steps[0].observation == (
        "[ToolError] denied: 'rollback_deployment' was not run: side effects are disabled by policy (read_only). "
        "Use a read-only tool, or ask the user to authorise this action."
    )


async def test_no_confirm_hook_means_no_side_effect_even_in_full_mode(tools, backend):
    result = await run(tools, [ROLLBACK, FINISH], policy=FULL)
    assert backend.rollbacks == []
    assert "no approver is configured" in result.steps[0].observation


async def test_dry_run_returns_what_would_be_sent(tools, backend):
    result = await run(tools, [ROLLBACK, FINISH], policy=SideEffectPolicy(mode=SideEffectMode.DRY_RUN))
    assert backend.rollbacks == []
    assert result.steps[0].observation == (
        '[DryRun] Not executed (policy: dry_run). Would do: {"POST": "https://deploy.example/rollback", '
        '"service": "order-service", "to_version": "v2.13.2"}'
    )


async def test_allowlist_refuses_unlisted_tools(tools, backend):
    approver = Approver(lambda r: Approved(by="U1", args_hash=r.args_hash))
    policy = SideEffectPolicy(mode=SideEffectMode.ALLOWLIST, allowlist=frozenset({"restart_service"}))
    result = await run(tools, [ROLLBACK, FINISH], policy=policy, confirm=approver)
    assert backend.rollbacks == []
    assert approver.requests == []
    assert "'rollback_deployment' is not in the side-effect allowlist" in result.steps[0].observation


async def test_approved_call_runs_once_and_records_who(tools, backend):
    approver = Approver(lambda r: Approved(by="U_ALICE", args_hash=r.args_hash))
    result = await run(tools, [ROLLBACK, FINISH], policy=FULL, confirm=approver)
    assert backend.rollbacks == [("order-service", "v2.13.2")]
    request = approver.requests[0]
    assert request.call.args == {"service": "order-service", "to_version": "v2.13.2"}
    assert request.thought == "Why: v2.14.0 broke checkout."
    assert request.step == 1
    assert result.steps[0].approval.decision == "approved"
    assert result.steps[0].approval.by == "U_ALICE"


async def test_denial_reaches_the_model_with_reason(tools, backend):
    approver = Approver(lambda r: Denied(by="U_BOB", reason="not during peak traffic"))
    result = await run(tools, [ROLLBACK, FINISH], policy=FULL, confirm=approver)
    assert backend.rollbacks == []
    assert result.steps[0].error is ErrorKind.DENIED
    assert "denied by U_BOB: not during peak traffic" in result.steps[0].observation


async def test_approval_for_other_arguments_is_refused(tools, backend):
    approver = Approver(lambda r: Approved(by="U1", args_hash="0" * 64))
    result = await run(tools, [ROLLBACK, FINISH], policy=FULL, confirm=approver)
    assert backend.rollbacks == []
    assert "the approval was given for different arguments" in result.steps[0].observation


async def test_a_failing_approver_fails_closed(tools, backend):
    def broken(request):
        raise ConnectionError("slack is down")

    result = await run(tools, [ROLLBACK, FINISH], policy=FULL, confirm=Approver(broken))
    assert backend.rollbacks == []
    assert "the approval request failed (ConnectionError: slack is down)" in result.steps[0].observation


async def test_deferred_approval_pauses_then_resumes_exactly_once(tools, backend):
    approver = Approver(lambda r: Deferred(approval_id="apr-1"))
    agent = Agent(llm=ScriptedModel([ROLLBACK]), tools=tools, policy=FULL, confirm=approver)
    paused = await agent.run("roll back")
    assert paused.stop_reason is StopReason.AWAITING_APPROVAL
    assert not paused.ok
    assert [s.index for s in paused.pending_steps()] == [1]
    assert backend.rollbacks == []

    saved = RunResult.from_json(paused.to_json())
    model = ScriptedModel([FINISH])
    resumed = await Agent(llm=model, tools=tools, policy=FULL, confirm=approver).resume(
        saved, decisions={"apr-1": Approved(by="U_ALICE", args_hash=paused.steps[0].call.args_hash())}
    )
    model.assert_complete()
    assert resumed.ok
    assert backend.rollbacks == [("order-service", "v2.13.2")]
    assert resumed.steps[0].approval.by == "U_ALICE"
    assert resumed.steps[0].observation == "rolled back order-service to v2.13.2"
    assert "rolled back order-service" in model.requests[0].messages[-1].content
    assert resumed.run_id == paused.run_id
    assert len(approver.requests) == 1


async def test_resumed_denial_is_an_observation(tools, backend):
    agent = Agent(
        llm=ScriptedModel([native_turn(("rollback_deployment", {"service": "a", "to_version": "v1"}))]),
        tools=tools,
        policy=FULL,
        confirm=Approver(lambda r: Deferred(approval_id="apr-2")),
    )
    paused = await agent.run("roll back")
    model = ScriptedModel([native_turn(("finish", {"answer": "Not rolled back: denied."}), start_id=9)])
    resumed = await Agent(llm=model, tools=tools, policy=FULL).resume(paused, decisions={"apr-2": Denied(by="U_BOB")})
    assert resumed.ok
    assert backend.rollbacks == []
    assert resumed.steps[0].error is ErrorKind.DENIED
    assert model.requests[0].messages[-1].role == "tool"
    assert model.requests[0].messages[-1].tool_call_id == "call_1"


def test_a_finished_run_cannot_be_resumed(tools):
    finished = RunResult(run_id="r1", task="t", stop_reason=StopReason.FINISH, answer="a")
    with pytest.raises(ValueError, match="already finished"):
        Agent(llm=ScriptedModel([]), tools=tools).events_from(finished)


async def test_a_rate_limit_holds_across_a_resume(backend):
    registry = ToolRegistry()
    runs = []

    @registry.register(side_effect=True, max_calls_per_run=1)
    async def restart_service(service: str) -> str:
        """Restart."""
        runs.append(service)
        return "restarted"

    approve = Approver(lambda r: Approved(by="U1", args_hash=r.args_hash))
    first = Agent(
        llm=ScriptedModel([text_turn("restart_service", service="a")]),
        tools=registry,
        policy=FULL,
        confirm=approve,
        budget=Budget(max_steps=1),
        salvage=False,
    )
    stopped = await first.run("restart")
    model = ScriptedModel([text_turn("restart_service", service="b"), FINISH])
    resumed = await Agent(llm=model, tools=registry, policy=FULL, confirm=approve).resume(stopped)
    assert runs == ["a"]
    assert resumed.steps[1].error is ErrorKind.RATE_LIMITED


async def test_time_waiting_for_an_approval_is_not_counted(tools, backend):
    async def slow_human(request):
        await asyncio.sleep(1.0)
        return Approved(by="U1", args_hash=request.args_hash)

    result = await run(tools, [ROLLBACK, FINISH], policy=FULL, confirm=slow_human)
    assert result.ok
    # Accounting, not speed: the run's own work takes milliseconds; the human's second is excluded.
    assert result.usage.elapsed_s < 1.0


async def test_an_approver_timing_out_is_a_denial_not_a_cancellation(tools, backend):
    def timing_out(request):
        raise TimeoutError

    result = await run(tools, [ROLLBACK, FINISH], policy=FULL, confirm=Approver(timing_out))
    assert result.ok
    assert result.steps[0].error is ErrorKind.DENIED
    assert backend.rollbacks == []
