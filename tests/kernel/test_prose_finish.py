"""A model that ends in prose finishes after one confirming turn; a glitch mid-run goes on; non-answers stay errors.

Whole-trace assertions with the strict scripted model, in native mode and in the text protocol.
"""

from __future__ import annotations

from kernel import (
    Agent,
    Budget,
    Confidence,
    ErrorKind,
    FinishedBy,
    LLMResponse,
    RunResult,
    ScriptedModel,
    StopReason,
    TokenUsage,
    native_turn,
    text_turn,
)
from kernel.tool_errors import PROSE_REMINDER

ANSWER = (
    "Root cause: the v2.14.0 deploy cut the payment pool from 64 to 4 connections (step 1). "
    "Confidence: likely.\n\nNext steps:\n- Roll back order-service to v2.13.2."
)
METRICS = native_turn(("query_metrics", {"service": "order-service"}))


def trail(result: RunResult) -> list[tuple[str | None, ErrorKind | None, str]]:
    """Each step as (tool, error kind, the start of its observation)."""
    return [(s.call.name if s.call else None, s.error, s.observation[:40]) for s in result.steps]


async def run(tools, script, **options) -> tuple[RunResult, ScriptedModel]:
    model = ScriptedModel(script)
    result = await Agent(llm=model, tools=tools, **options).run("order-service 5xx jumped to 12%")
    model.assert_complete()
    return result, model


async def test_a_native_prose_answer_finishes_after_one_reminder(tools):
    result, model = await run(tools, [METRICS, LLMResponse(text=ANSWER), LLMResponse(text=ANSWER)])
    assert result.ok
    assert result.stop_reason is StopReason.FINISH
    assert result.finished_by is FinishedBy.PROSE
    assert result.answer == ANSWER
    assert trail(result) == [
        ("query_metrics", None, "order-service http_5xx_rate over 30m: ju"),
        (None, None, PROSE_REMINDER[:40]),
        ("finish", None, ""),
    ]
    assert result.steps[1].prose
    assert result.steps[1].thought == ANSWER
    assert result.steps[2].call.args == {"answer": ANSWER}
    assert result.steps[2].call.id is None
    # The reminder went to the model once, right after the prose; the confirming turn is a real, counted turn.
    assert model.requests[2].messages[-1].content == f"Observation (step 2):\n{PROSE_REMINDER}"
    assert result.usage.turns == 3
    assert result.usage.steps == 2, "the reminder is not work: it does not spend the step budget"
    assert result.findings is not None
    assert result.findings.root_cause == "the v2.14.0 deploy cut the payment pool from 64 to 4 connections."
    assert result.findings.confidence is Confidence.LIKELY
    assert result.findings.next_steps == ("Roll back order-service to v2.13.2.",)
    assert result.evidence_check is not None
    assert result.evidence_check.passed


async def test_finish_after_the_reminder_is_the_answer(tools):
    finish = native_turn(("finish", {"summary": "v2.14.0 broke checkout.", "confidence": "likely"}), start_id=9)
    result, _ = await run(tools, [METRICS, LLMResponse(text=ANSWER), finish])
    assert result.ok
    assert result.finished_by is FinishedBy.FINISH
    assert [s.call.name if s.call else None for s in result.steps] == ["query_metrics", None, "finish"]
    assert result.findings.summary == "v2.14.0 broke checkout."
    assert result.answer == "v2.14.0 broke checkout.\n**Confidence:** likely"


async def test_a_short_confirmation_keeps_the_answer_it_confirms(tools):
    result, _ = await run(tools, [METRICS, LLMResponse(text=ANSWER), LLMResponse(text="Yes.")])
    assert result.ok
    assert result.finished_by is FinishedBy.PROSE
    assert result.answer == ANSWER
    assert result.steps[-1].thought == "Yes."


async def test_a_prose_glitch_mid_run_goes_on_with_the_next_call(tools):
    glitch = "The 5xx rate jumped at t-10m, right after the deploy of v2.14.0."
    logs = native_turn(("search_logs", {"service": "order-service"}), start_id=2)
    finish = native_turn(("finish", {"answer": "Root cause: v2.14.0 (steps 1, 3)."}), start_id=3)
    result, model = await run(tools, [METRICS, LLMResponse(text=glitch), logs, finish])
    assert result.ok
    assert result.finished_by is FinishedBy.FINISH
    assert trail(result) == [
        ("query_metrics", None, "order-service http_5xx_rate over 30m: ju"),
        (None, None, PROSE_REMINDER[:40]),
        ("search_logs", None, "3 errors in order-service: upstream conn"),
        ("finish", None, ""),
    ]
    assert result.answer == "Root cause: v2.14.0 (steps 1, 3)."
    assert model.requests[2].messages[-1].content.endswith(PROSE_REMINDER)


async def test_a_text_protocol_prose_answer_finishes(tools):
    first = text_turn("query_metrics", "Known: nothing yet.", service="order-service")
    result, model = await run(tools, [first, ANSWER, ANSWER])
    assert result.ok
    assert result.finished_by is FinishedBy.PROSE
    assert trail(result) == [
        ("query_metrics", None, "order-service http_5xx_rate over 30m: ju"),
        (None, None, PROSE_REMINDER[:40]),
        ("finish", None, ""),
    ]
    assert model.requests[2].messages[-1].content == f"Observation (step 2):\n{PROSE_REMINDER}"


async def test_an_announced_action_stays_a_format_error(tools):
    script = [METRICS, LLMResponse(text="Let me check the logs."), LLMResponse(text=ANSWER), LLMResponse(text=ANSWER)]
    result, _ = await run(tools, script)
    assert result.ok
    assert result.finished_by is FinishedBy.PROSE
    assert trail(result) == [
        ("query_metrics", None, "order-service http_5xx_rate over 30m: ju"),
        (None, ErrorKind.FORMAT, "[FormatError] The model's reply had no u"),
        (None, None, PROSE_REMINDER[:40]),
        ("finish", None, ""),
    ]
    assert "(it announced an action without making it)" in result.steps[1].observation


async def test_an_empty_reply_stays_a_format_error_and_counts_in_the_streak(tools):
    result, _ = await run(tools, [LLMResponse(text="")] * 3, salvage=False)
    assert result.stop_reason is StopReason.UNPARSABLE_EXHAUSTED
    assert [(s.call, s.error) for s in result.steps] == [(None, ErrorKind.FORMAT)] * 3
    assert "(the reply was empty)" in result.steps[0].observation


async def test_an_announcement_after_the_reminder_drops_the_unconfirmed_answer(tools):
    script = [LLMResponse(text=ANSWER), LLMResponse(text="I'll query the metrics next."), METRICS]
    script.append(native_turn(("finish", {"summary": "Confirmed by step 3."}), start_id=2))
    result, _ = await run(tools, script)
    assert [(s.call.name if s.call else None, s.error) for s in result.steps] == [
        (None, None),
        (None, ErrorKind.FORMAT),
        ("query_metrics", None),
        ("finish", None),
    ]
    assert result.finished_by is FinishedBy.FINISH


def counted(turn: LLMResponse) -> LLMResponse:
    """The turn with reported usage: 1,000 prompt tokens."""
    return turn.model_copy(update={"usage": TokenUsage(prompt_tokens=1000, completion_tokens=10)})


async def test_a_budget_stop_before_the_confirming_turn_keeps_the_prose_as_partial(tools):
    model = ScriptedModel([counted(METRICS), counted(LLMResponse(text=ANSWER))])
    result = await Agent(llm=model, tools=tools, budget=Budget(max_prompt_tokens=1500)).run("t")
    model.assert_complete()
    assert result.stop_reason is StopReason.TOKEN_BUDGET
    assert not result.ok
    assert result.answer is None
    assert result.findings is None
    assert result.partial_answer == ANSWER
    assert result.detail == "the model's prose answer was not confirmed"


async def test_a_run_resumed_after_the_reminder_takes_the_prose_as_its_answer(tools):
    first = ScriptedModel([counted(METRICS), counted(LLMResponse(text=ANSWER))])
    stopped = await Agent(llm=first, tools=tools, budget=Budget(max_prompt_tokens=1500)).run("t")
    checkpoint = RunResult.from_json(stopped.to_json())
    second = ScriptedModel([LLMResponse(text=ANSWER)])
    resumed = await Agent(llm=second, tools=tools).resume(checkpoint)
    second.assert_complete()
    assert resumed.ok
    assert resumed.finished_by is FinishedBy.PROSE
    assert [s.call.name if s.call else None for s in resumed.steps] == ["query_metrics", None, "finish"]
    assert second.requests[0].messages[-1].content.endswith(PROSE_REMINDER)
    assert (resumed.partial_answer, resumed.detail) == (None, ""), "a finished run has an answer, not a partial one"
