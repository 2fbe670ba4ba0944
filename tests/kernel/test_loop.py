"""The loop end to end with a strict scripted model: whole-trace assertions for each way a run goes."""

from __future__ import annotations

import asyncio

import pytest

from kernel import (
    Agent,
    Budget,
    ErrorKind,
    LLMError,
    LLMErrorKind,
    LLMResponse,
    Pricing,
    RunControl,
    RunFinished,
    RunStarted,
    ScriptedModel,
    StepCompleted,
    StepStarted,
    StopReason,
    TokenUsage,
    ToolRegistry,
    native_turn,
    react,
    text_turn,
)

FINISH = text_turn("finish", "Known: 5xx rose at t-10m (step 1).", answer="Root cause: bad deploy v2.14.0.")


def trail(result):
    """The run as (tool, error kind) pairs: the shape tests compare whole."""
    return [(s.call.name if s.call else None, s.error) for s in result.steps]


async def run(tools, script, **options):
    model = ScriptedModel(script)
    result = await react("order-service 5xx jumped to 12%", tools, llm=model, **options)
    model.assert_complete()
    return result, model


async def test_text_protocol_investigation_finishes(tools):
    result, model = await run(
        tools, [text_turn("query_metrics", "Known: nothing yet.", service="order-service"), FINISH]
    )
    assert result.ok
    assert result.stop_reason is StopReason.FINISH
    assert result.answer == "Root cause: bad deploy v2.14.0."
    assert trail(result) == [("query_metrics", None), ("finish", None)]
    assert result.steps[0].thought == "Known: nothing yet."
    assert result.steps[0].observation == "order-service http_5xx_rate over 30m: jumped from 0.10% to 12.0% at t-10m"
    # The model saw the observation fenced as data with the run's nonce.
    shown = model.requests[1].messages[-1].content
    assert f"<data-{result.nonce}>" in shown
    assert "jumped from 0.10% to 12.0%" in shown
    assert result.usage.steps == 2  # the finish is a step too
    assert result.usage.turns == 2


async def test_native_calls_in_one_turn_each_get_a_step(tools):
    turn = native_turn(
        ("query_metrics", {"service": "order-service"}),
        ("search_logs", {"service": "order-service"}),
        text="Checking metrics and logs.",
    )
    result, model = await run(tools, [turn, native_turn(("finish", {"answer": "done"}), start_id=3)])
    assert trail(result) == [("query_metrics", None), ("search_logs", None), ("finish", None)]
    history = model.requests[1].messages
    assert [m.role for m in history] == ["user", "assistant", "tool", "tool"]
    assert [m.tool_call_id for m in history[2:]] == ["call_1", "call_2"]
    assert history[1].tool_calls[0].args == {"service": "order-service"}


async def test_invalid_json_in_native_arguments_is_a_model_visible_error(tools):
    result, model = await run(
        tools,
        [
            native_turn(("query_metrics", '{"service": "order-'), text=""),
            native_turn(("finish", {"answer": "x"}), start_id=2),
        ],
    )
    assert trail(result) == [("query_metrics", ErrorKind.BAD_ARGS), ("finish", None)]
    assert result.steps[0].observation.startswith(
        "[ToolError] bad_args: The arguments for 'query_metrics' are not valid JSON ("
    )
    assert model.requests[1].messages[-1].tool_call_id == "call_1"


async def test_unknown_tool_lists_available_tools(tools):
    result, _ = await run(tools, [text_turn("get_metrics", service="x"), FINISH])
    assert result.steps[0].observation == (
        "[ToolError] unknown_tool: Unknown tool 'get_metrics'. Available tools: 'query_metrics', 'search_logs', "
        "'rollback_deployment', 'read_output'. Call one of these, or finish."
    )


async def test_bad_arguments_name_the_field_and_the_signature(tools):
    result, _ = await run(tools, [text_turn("query_metrics", window="5m", colour="red"), FINISH])
    obs = result.steps[0].observation
    assert obs.startswith("[ToolError] bad_args: Invalid arguments for 'query_metrics':\n")
    assert "- service: Field required" in obs
    assert "- colour: Extra inputs are not permitted" in obs
    assert (
        'Expected arguments: query_metrics(service: string, metric?: string = "http_5xx_rate", window?: string = "30m")'
        in obs
    )


async def test_tool_exception_becomes_observation_and_retry_succeeds(tools, backend):
    backend.flaky_failures_left = 1
    call = text_turn("query_metrics", service="order-service")
    result, _ = await run(tools, [call, call, FINISH])
    assert trail(result) == [("query_metrics", ErrorKind.EXCEPTION), ("query_metrics", None), ("finish", None)]
    assert result.steps[0].observation == (
        "[ToolError] exception: 'query_metrics' failed: ConnectionError: prometheus: connection reset by peer"
    )


async def test_tool_failure_message_is_shown_as_written(tools):
    result, _ = await run(tools, [text_turn("search_logs", service="s", query="bad"), FINISH])
    assert result.steps[0].error is ErrorKind.EXCEPTION
    assert result.steps[0].observation == (
        "[ToolError] exception: 'search_logs' failed: LogQL parse error at char 7. Quote label values."
    )


async def test_tool_timeout_says_what_to_do(tools):
    result, _ = await run(tools, [text_turn("search_logs", service="order-service", query="slow"), FINISH])
    assert result.steps[0].error is ErrorKind.TIMEOUT
    assert result.steps[0].observation == (
        "[ToolError] timeout: 'search_logs' timed out after 0.05 s. Narrow the time window or the query, or use another tool."
    )


async def test_huge_output_is_truncated_with_marker_and_readable_by_handle(tools):
    read = text_turn("read_output", handle="o1", match="#2999")
    result, _ = await run(tools, [text_turn("search_logs", service="s", query="huge"), read, FINISH])
    obs = result.steps[0].observation
    assert "…[truncated about " in obs
    assert 'read_output(handle="o1", offset=' in obs
    assert obs.startswith("2026-11-30T03:00:00Z ERROR upstream connect error #0")
    assert obs.endswith("upstream connect error #2999")
    assert len(obs) < 1300 * 4
    assert result.steps[1].observation.startswith("[output o1: 1 of 3000 lines contain '#2999']\n3000: ")
    assert result.full_output(result.steps[0]).count("\n") == 2999


async def test_non_string_results_are_serialised_as_json(tools):
    result, _ = await run(tools, [text_turn("search_logs", service="s", query="dict"), FINISH])
    assert result.steps[0].observation == '{"count": 3, "messages": ["a", "b"]}'


async def test_secrets_are_redacted_before_the_model_sees_them(tools):
    result, model = await run(tools, [text_turn("search_logs", service="s", query="secret"), FINISH])
    assert "hunter2" not in result.steps[0].observation
    assert "hunter2" not in model.requests[1].messages[-1].content
    assert "[REDACTED" in result.steps[0].observation


async def test_prose_without_action_gets_format_error_then_recovers(tools):
    result, model = await run(tools, ["I will look at the metrics next.", FINISH])
    assert trail(result) == [(None, ErrorKind.FORMAT), ("finish", None)]
    assert result.steps[0].observation.startswith(
        "[FormatError] The model's reply had no usable action (it announced an action without making it). Make "
        "the call now. Reply with your thought"
    )
    assert model.requests[1].messages[-1].content.startswith("Observation (step 1):\n[FormatError]")


async def test_unparsable_exhausted_when_the_same_prose_repeats(tools):
    result, _ = await run(tools, ["Let me think."] * 3, salvage=False)
    assert not result.ok
    assert result.stop_reason is StopReason.UNPARSABLE_EXHAUSTED
    assert len(result.steps) == 3


async def test_varied_errors_do_not_stop_a_progressing_run(tools):
    script = [
        "hmm",
        text_turn("nope"),
        text_turn("query_metrics"),
        "still thinking",
        text_turn("query_metrics", service="order-service"),
        FINISH,
    ]
    result, _ = await run(tools, script)
    assert result.ok
    assert [e for _, e in trail(result)][:4] == [
        ErrorKind.FORMAT,
        ErrorKind.UNKNOWN_TOOL,
        ErrorKind.BAD_ARGS,
        ErrorKind.FORMAT,
    ]


async def test_consecutive_error_cap_stops_noisy_failure(tools):
    script = [text_turn(f"tool_{i}") for i in range(4)]
    result, _ = await run(tools, script, budget=Budget(max_consecutive_errors=4), salvage=False)
    assert result.stop_reason is StopReason.TOOL_ERROR_EXHAUSTED
    assert len(result.steps) == 4


async def test_the_same_failing_call_is_stopped_early(tools):
    result, _ = await run(tools, [text_turn("query_metrics", window="1h")] * 3, salvage=False)
    assert result.stop_reason is StopReason.TOOL_ERROR_EXHAUSTED
    assert "stuck after step 3" in result.detail


async def test_exact_repeat_is_not_executed_and_a_stuck_repeat_stops(tools, backend):
    call = text_turn("query_metrics", service="order-service")
    result, _ = await run(tools, [call, call, call, call], salvage=False)
    assert trail(result) == [("query_metrics", None)] + [("query_metrics", ErrorKind.LOOP_GUARD)] * 3
    assert result.stop_reason is StopReason.LOOP_DETECTED
    assert len(backend.metric_queries) == 1
    assert result.steps[1].observation.startswith(
        "[LoopGuard] The model repeated its call of step 1 exactly; it was not run again. You already made this call: "
    )


async def test_same_call_and_same_result_after_warning_is_a_loop(tools):
    a = text_turn("query_metrics", service="order-service")
    others = [text_turn("query_metrics", service=f"svc-{i}") for i in range(5)]
    result, _ = await run(tools, [a, a, *others, a], salvage=False)
    assert result.stop_reason is StopReason.LOOP_DETECTED
    assert trail(result)[-1] == ("query_metrics", None)


async def test_max_steps_with_salvage_is_explicit_failure(tools):
    calls = [text_turn("query_metrics", service=f"s{i}") for i in range(2)]
    salvage = "Known: s0 and s1 jumped at t-10m (steps 1-2). Could not check: logs."
    result, model = await run(tools, [*calls, salvage], budget=Budget(max_steps=2))
    assert not result.ok
    assert result.stop_reason is StopReason.MAX_STEPS
    assert result.answer is None
    assert result.partial_answer == salvage
    assert model.requests[-1].messages[-1].content.startswith("You must stop now: max_steps.")


async def test_calls_beyond_the_step_budget_in_one_turn_are_not_run(tools, backend):
    turn = native_turn(("query_metrics", {"service": "a"}), ("query_metrics", {"service": "b"}))
    result, _ = await run(tools, [turn], budget=Budget(max_steps=1), salvage=False)
    assert trail(result) == [("query_metrics", None), ("query_metrics", ErrorKind.NOT_RUN)]
    assert backend.metric_queries == [("a", "http_5xx_rate")]
    assert result.usage.steps == 1


async def test_token_budget_uses_reported_usage(tools):
    turn = LLMResponse(
        text=text_turn("query_metrics", service="a"), usage=TokenUsage(prompt_tokens=900, completion_tokens=10)
    )
    result, _ = await run(tools, [turn], budget=Budget(max_prompt_tokens=900))
    assert result.stop_reason is StopReason.TOKEN_BUDGET
    assert result.usage.prompt_tokens == 900
    assert result.usage.estimated_turns == 0


async def test_cost_budget_from_price_table(tools):
    usage = TokenUsage(prompt_tokens=100_000, completion_tokens=1_000)
    turn = LLMResponse(text=text_turn("query_metrics", service="a"), usage=usage)
    model = ScriptedModel([turn], model="gpt-x")
    prices = {"gpt-x": Pricing(input_per_mtok=10, output_per_mtok=30)}
    result = await react("t", tools, llm=model, budget=Budget(max_cost_usd=1.0), prices=prices)
    assert result.stop_reason is StopReason.COST_BUDGET
    assert result.usage.cost_usd == pytest.approx(1.03)


def test_cost_budget_without_a_price_is_refused_at_configuration(tools):
    with pytest.raises(ValueError, match="needs a price for model 'scripted'"):
        Agent(llm=ScriptedModel([]), tools=tools, budget=Budget(max_cost_usd=1.0))


async def test_deadline_cuts_a_hanging_model_call(tools):
    model = ScriptedModel([text_turn("query_metrics", service="a")], latency=5)
    result = await react("t", tools, llm=model, budget=Budget(max_seconds=0.05))
    assert result.stop_reason is StopReason.DEADLINE
    assert result.steps == []


async def test_llm_error_stops_with_its_message(tools):
    error = LLMError(LLMErrorKind.RATE_LIMITED, "slow down", status=429, attempts=4)
    result, _ = await run(tools, [error])
    assert result.stop_reason is StopReason.LLM_ERROR
    assert result.detail == "model call failed: rate_limited (HTTP 429) after 4 attempts: slow down"


async def test_an_adapter_bug_still_ends_the_run_explicitly(tools):
    def broken(request):
        raise KeyError("choices")

    result, _ = await run(tools, [broken])
    assert result.stop_reason is StopReason.LLM_ERROR
    assert result.detail == "model adapter raised KeyError: 'choices'"


async def test_cancel_during_a_tool_call(tools):
    control = RunControl()
    model = ScriptedModel([text_turn("search_logs", service="s", query="slow")])
    agent = Agent(llm=model, tools=tools)
    task = asyncio.create_task(agent.run("t", control=control))
    await asyncio.sleep(0.01)
    control.cancel("stopped by @alice")
    result = await task
    assert result.stop_reason is StopReason.CANCELLED
    assert result.detail == "stopped by @alice"
    assert result.steps[0].error is ErrorKind.CANCELLED


async def test_finish_needs_an_answer_and_must_come_alone(tools):
    both = native_turn(("query_metrics", {"service": "a"}), ("finish", {"answer": "early"}))
    result, _ = await run(tools, [text_turn("finish"), both, FINISH])
    assert trail(result) == [
        ("finish", ErrorKind.BAD_ARGS),
        ("query_metrics", None),
        ("finish", ErrorKind.BAD_ARGS),
        ("finish", None),
    ]
    assert result.answer == "Root cause: bad deploy v2.14.0."


async def test_event_stream_reports_each_step_as_it_ends(tools):
    model = ScriptedModel([text_turn("query_metrics", service="a"), FINISH])
    events = [e async for e in Agent(llm=model, tools=tools).events("t")]
    assert [type(e) for e in events] == [
        RunStarted,
        StepStarted,
        StepCompleted,
        StepStarted,
        StepCompleted,
        RunFinished,
    ]
    assert events[1].call.name == "query_metrics"
    assert events[2].step.observation.startswith("a http_5xx_rate")
    assert events[-1].result.ok


async def test_absurdly_deep_native_arguments_are_a_model_visible_error(tools):
    deep = '{"service": ' + "[" * 100_000 + "]" * 100_000 + "}"
    result, _ = await run(
        tools, [native_turn(("query_metrics", deep)), native_turn(("finish", {"answer": "x"}), start_id=2)]
    )
    assert trail(result) == [("query_metrics", ErrorKind.BAD_ARGS), ("finish", None)]


async def test_a_failing_summary_turn_keeps_the_stop_reason(tools):
    def broken(request):
        raise KeyError("choices")

    result, _ = await run(tools, [text_turn("query_metrics", service="a"), broken], budget=Budget(max_steps=1))
    assert result.stop_reason is StopReason.MAX_STEPS
    assert result.partial_answer is None
    assert result.detail.endswith("the summary turn failed (KeyError)")


async def test_a_native_finish_in_the_summary_turn_is_the_partial_answer(tools):
    summary = native_turn(("finish", {"answer": "Known: a jumped (step 1)."}), start_id=5)
    result, _ = await run(tools, [text_turn("query_metrics", service="a"), summary], budget=Budget(max_steps=1))
    assert result.partial_answer == "Known: a jumped (step 1)."


async def test_cancel_while_a_timed_out_tool_is_still_unwinding(tools):
    registry = ToolRegistry()
    unwinding = asyncio.Event()
    control = RunControl()

    @registry.register(timeout=0.01)
    async def stubborn() -> str:
        """Times out, then takes a while to clean up."""
        try:
            await asyncio.sleep(5)
        finally:
            unwinding.set()
            await asyncio.sleep(0.05)
        return "never"

    async def stop_during_cleanup():
        await unwinding.wait()
        control.cancel("stopped by @alice")

    model = ScriptedModel([text_turn("stubborn")])
    stopper = asyncio.create_task(stop_during_cleanup())
    result = await Agent(llm=model, tools=registry).run("t", control=control)
    await stopper
    assert result.stop_reason is StopReason.CANCELLED
