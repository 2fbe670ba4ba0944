"""Stops the other loop tests do not reach, each through a whole run with the strict scripted model.

The loop decides every stop; these pin the less common paths: which steps ran, the reason, its detail.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from kernel import (
    Agent,
    ApprovalRequest,
    Budget,
    ChatRequest,
    Deferred,
    ErrorKind,
    LLMResponse,
    RunControl,
    ScriptedModel,
    SideEffectMode,
    SideEffectPolicy,
    StepCompleted,
    StopReason,
    native_turn,
    react,
    text_turn,
)

FULL = SideEffectPolicy(mode=SideEffectMode.FULL)
ROLLBACK = ("rollback_deployment", {"service": "order-service", "to_version": "v2.13.2"})


def trail(result):
    """The run as (tool, error kind) pairs: the shape tests compare whole."""
    return [(s.call.name if s.call else None, s.error) for s in result.steps]


async def run(tools, script, **options):
    model = ScriptedModel(script)
    result = await react("order-service 5xx jumped to 12%", tools, llm=model, **options)
    model.assert_complete()
    return result


class Deferring:
    """A confirm hook that defers every side effect to a later decision, and records what it was asked."""

    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Deferred:
        self.requests.append(request)
        return Deferred(approval_id="apr-1")


class HangingModel:
    """A model whose call never returns on its own; `asked` is set once the loop is waiting on it."""

    model = "hanging"

    def __init__(self) -> None:
        self.asked = asyncio.Event()

    async def complete(self, request: ChatRequest) -> LLMResponse:
        self.asked.set()
        await asyncio.sleep(60)
        raise AssertionError("the cancel should have cut this model call short")


async def test_a_run_cancelled_before_it_starts_asks_the_model_nothing(tools):
    control = RunControl()
    control.cancel("stopped by @alice")
    result = await run(tools, [], control=control)
    assert (result.stop_reason, result.detail, result.steps, result.usage.turns) == (
        StopReason.CANCELLED,
        "stopped by @alice",
        [],
        0,
    )


async def test_a_cancel_during_a_model_call_names_who_cancelled(tools):
    control, model = RunControl(), HangingModel()
    task = asyncio.create_task(Agent(llm=model, tools=tools).run("t", control=control))
    await model.asked.wait()
    control.cancel("stopped by @alice")
    result = await task
    assert (result.stop_reason, result.detail, result.steps, result.turns) == (
        StopReason.CANCELLED,
        "stopped by @alice",
        [],
        [],
    )


async def test_a_resumed_run_past_its_deadline_stops_before_asking_the_model(tools, backend):
    first = ScriptedModel([text_turn("query_metrics", service="a")])
    stopped = await Agent(llm=first, tools=tools, budget=Budget(max_steps=1), salvage=False).run("t")
    spent = stopped.model_copy(update={"usage": replace(stopped.usage, elapsed_s=300.0)})
    model = ScriptedModel([])
    resumed = await Agent(llm=model, tools=tools, budget=Budget(max_seconds=300.0)).resume(spent)
    assert (resumed.stop_reason, trail(resumed), resumed.usage.turns) == (
        StopReason.DEADLINE,
        [("query_metrics", None)],
        1,
    )
    assert model.requests == []
    assert backend.metric_queries == [("a", "http_5xx_rate")]


async def test_varied_replies_without_an_action_exhaust_as_unparsable(tools):
    result = await run(
        tools, ["hmm", "let me think", "checking", "one moment"], budget=Budget(max_consecutive_errors=4), salvage=False
    )
    assert trail(result) == [(None, ErrorKind.FORMAT)] * 4
    assert result.stop_reason is StopReason.UNPARSABLE_EXHAUSTED
    assert result.detail == f"stuck after step 4: {result.steps[3].said}", "the words for people, not the hint"


async def test_calls_after_the_stopping_step_in_its_turn_are_not_run(tools, backend):
    """A side effect after the step that stops the run is not run. (A read there would have run already, in
    parallel with the turn's other reads: `test_parallel_reads` pins that.)"""
    stuck = ("query_metrics", {"window": "1h"})
    result = await run(tools, [native_turn(stuck, stuck, stuck, ROLLBACK)], policy=FULL, salvage=False)
    assert trail(result) == [("query_metrics", ErrorKind.BAD_ARGS)] * 3 + [("rollback_deployment", ErrorKind.NOT_RUN)]
    assert result.stop_reason is StopReason.TOOL_ERROR_EXHAUSTED
    assert result.detail == f"stuck after step 3: {result.steps[2].said}"
    assert result.steps[3].observation == (
        "[ToolError] not_run: 'rollback_deployment' was not run: the run is stopping (tool_error_exhausted)."
    )
    assert backend.metric_queries == []
    assert backend.rollbacks == []
    assert result.usage.steps == 3


async def test_the_step_that_confirms_a_loop_carries_the_stop_in_its_checkpoint(tools):
    a = text_turn("query_metrics", service="order-service")
    others = [text_turn("query_metrics", service=f"svc-{i}") for i in range(5)]
    model = ScriptedModel([a, a, *others, a])
    stream = Agent(llm=model, tools=tools, salvage=False).events("t")
    checkpoints = [stream.snapshot() async for event in stream if isinstance(event, StepCompleted)]
    model.assert_complete()
    assert [c.stop_reason for c in checkpoints] == [StopReason.INTERRUPTED] * 7 + [StopReason.LOOP_DETECTED]
    result = stream.snapshot()
    ok, warned = ("query_metrics", None), ("query_metrics", ErrorKind.LOOP_GUARD)
    assert trail(result) == [ok, warned] + [ok] * 6
    assert result.detail == checkpoints[-1].detail
    assert result.detail == "step 8 repeated a call the loop guard had warned about, with the same result"


async def test_a_deferred_call_lets_the_rest_of_its_turn_run_and_pauses_again_without_a_decision(tools, backend):
    defer = Deferring()
    turn = native_turn(ROLLBACK, ("query_metrics", {"service": "order-service"}))
    paused = await Agent(llm=ScriptedModel([turn]), tools=tools, policy=FULL, confirm=defer).run("roll back")
    assert trail(paused) == [("rollback_deployment", None), ("query_metrics", None)]
    assert [s.index for s in paused.pending_steps()] == [1]
    assert (paused.stop_reason, paused.detail) == (StopReason.AWAITING_APPROVAL, "")
    assert backend.metric_queries == [("order-service", "http_5xx_rate")]

    model = ScriptedModel([])
    again = await Agent(llm=model, tools=tools, policy=FULL, confirm=defer).resume(paused)
    assert (again.stop_reason, trail(again), [s.index for s in again.pending_steps()]) == (
        StopReason.AWAITING_APPROVAL,
        [("rollback_deployment", None), ("query_metrics", None)],
        [1],
    )
    assert [r.step for r in defer.requests] == [1, 1]
    assert model.requests == []
    assert backend.rollbacks == []


async def test_the_first_stop_holds_with_its_own_detail(tools):
    """Step 9 confirms a loop after step 8 paused for approval in the same turn: the pause holds, and so does its
    (empty) detail; the loop's account does not overwrite it."""
    a = ("query_metrics", {"service": "order-service"})
    others = [native_turn(("query_metrics", {"service": f"svc-{i}"}), start_id=3 + i) for i in range(5)]
    script = [native_turn(a), native_turn(a, start_id=2), *others, native_turn(ROLLBACK, a, start_id=8)]
    model = ScriptedModel(script)
    paused = await Agent(llm=model, tools=tools, policy=FULL, confirm=Deferring()).run("roll back")
    model.assert_complete()
    ok, warned = ("query_metrics", None), ("query_metrics", ErrorKind.LOOP_GUARD)
    assert trail(paused) == [ok, warned, *[ok] * 5, ("rollback_deployment", None), ok]
    assert [s.index for s in paused.pending_steps()] == [8]
    assert (paused.stop_reason, paused.detail) == (StopReason.AWAITING_APPROVAL, "")


async def test_a_cancel_ends_a_run_whose_turn_had_already_paused(tools):
    """Step 1 pauses for approval; step 2 of the same turn still runs, and someone cancels the run during it: the
    cancel is the run's end, with who cancelled it, and the paused call stays undecided."""
    control, running = RunControl(), asyncio.Event()

    @tools.register(timeout=60)
    async def hold() -> str:
        """Holds until the run is cancelled."""
        running.set()
        await asyncio.sleep(60)
        return "never"

    model = ScriptedModel([native_turn(ROLLBACK, ("hold", {}))])
    agent = Agent(llm=model, tools=tools, policy=FULL, confirm=Deferring())
    task = asyncio.create_task(agent.run("roll back", control=control))
    await running.wait()
    control.cancel("stopped by @alice")
    result = await task
    model.assert_complete()
    assert trail(result) == [("rollback_deployment", None), ("hold", ErrorKind.CANCELLED)]
    assert [s.index for s in result.pending_steps()] == [1]
    assert (result.stop_reason, result.detail) == (StopReason.CANCELLED, "stopped by @alice")


async def test_calls_past_the_step_budget_end_the_run_on_the_budget_not_as_failing_tools(tools, backend):
    """500 calls in one turn: the 480 past the budget are not run, and not run is no failure of the tools."""
    turn = native_turn(*(("query_metrics", {"service": f"svc-{n}"}) for n in range(500)))
    result = await run(tools, [turn], budget=Budget(max_steps=20), salvage=False)
    assert result.stop_reason is StopReason.MAX_STEPS
    assert trail(result) == [("query_metrics", None)] * 20 + [("query_metrics", ErrorKind.NOT_RUN)] * 480
    assert len(backend.metric_queries) == 20
