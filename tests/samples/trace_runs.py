"""Real kernel runs for the trace viewer's tests: the strict scripted model and tests/conftest.py's tools.

One run finishes after a truncated observation, a failed call and an approved rollback; one stops on
its step budget with a partial answer. Hostile text rides along in thoughts, arguments and output.
"""

from __future__ import annotations

from kernel import (
    Agent,
    ApprovalRequest,
    Approved,
    Budget,
    ConfirmHook,
    RunResult,
    ScriptedModel,
    SideEffectMode,
    SideEffectPolicy,
    ToolRegistry,
    text_turn,
)

HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>"
TASK = "order-service 5xx went from 0.1% to 12%, find the root cause"
INCIDENT_SCRIPT = [
    text_turn("query_metrics", f"Known: nothing yet. {HOSTILE}", service="order-service"),
    text_turn("search_logs", "The logs around the jump.", service="order-service", query="huge"),
    text_turn("search_logs", "A narrower query.", service="order-service", query="bad"),
    text_turn("search_logs", "Which upstream?", service=HOSTILE),
    text_turn(
        "rollback_deployment", "v2.14.0 broke checkout: roll back.", service="order-service", to_version="v2.13.2"
    ),
    text_turn("finish", "Known: all.", answer="**Root cause**: v2.14.0 (steps 1-2); rolled back in step 5."),
]
FAILING_SCRIPT = [
    text_turn("query_metrics", "Start with the metrics.", service="order-service"),
    text_turn("search_logs", "Then the logs.", service="order-service", query="bad"),
    "5xx jumped at t-10m; the logs were not readable, so the cause is unchecked.",
]


async def approve(request: ApprovalRequest) -> Approved:
    """The approver of these runs: alice approves the exact call she is shown."""
    return Approved(by="U0ALICE", args_hash=request.args_hash)


async def incident_run(tools: ToolRegistry) -> RunResult:
    """The finished run: every kind of step the page has to show."""
    model = ScriptedModel(INCIDENT_SCRIPT)
    policy = SideEffectPolicy(mode=SideEffectMode.FULL)
    result = await Agent(llm=model, tools=tools, policy=policy, confirm=approve).run(TASK)
    model.assert_complete()
    return result


async def failed_run(tools: ToolRegistry) -> RunResult:
    """The run that runs out of steps and says what it knew: a failure stop with a partial answer."""
    model = ScriptedModel(FAILING_SCRIPT)
    result = await Agent(llm=model, tools=tools, budget=Budget(max_steps=2)).run(TASK)
    model.assert_complete()
    return result


ROLLBACK_SCRIPT = [
    text_turn("query_metrics", "Known: the report.", service="order-service"),
    text_turn(
        "rollback_deployment", "v2.14.0 broke checkout: roll back.", service="order-service", to_version="v2.13.2"
    ),
    text_turn("finish", "Known: all.", answer="**Root cause**: v2.14.0 (step 1)."),
]
"""A run that reads, proposes one rollback, and answers: what came of the rollback is the policy's and the
approver's (`rollback_run`)."""


async def rollback_run(tools: ToolRegistry, mode: SideEffectMode, confirm: ConfirmHook | None = None) -> RunResult:
    """`ROLLBACK_SCRIPT` run by the kernel under `mode`, the approver deciding with `confirm`: a real trace of each
    outcome of a side effect (done, denied, expired, dry run, refused by policy, waiting)."""
    model = ScriptedModel(ROLLBACK_SCRIPT)
    return await Agent(llm=model, tools=tools, policy=SideEffectPolicy(mode=mode), confirm=confirm).run(TASK)
