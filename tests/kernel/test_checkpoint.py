"""Checkpoints: a snapshot taken between events resumes to the same end as a run that was never stopped."""

from __future__ import annotations

from kernel import Agent, RunResult, ScriptedModel, StepCompleted, StopReason, text_turn

SCRIPT = [
    text_turn("query_metrics", "Known: nothing yet.", service="order-service"),
    text_turn("search_logs", "5xx rose at t-10m (step 1).", service="order-service"),
    text_turn("finish", "Logs name payment-service (step 2).", answer="Root cause: payment-service upstream errors."),
]


def shape(result: RunResult):
    """What must match between an uninterrupted run and a resumed one (timing differs)."""
    return (
        result.stop_reason,
        result.answer,
        [(s.index, s.call.name if s.call else None, s.observation, s.error) for s in result.steps],
        result.usage.steps,
        result.usage.turns,
    )


async def test_a_snapshot_between_steps_is_an_interrupted_checkpoint_that_resumes_to_the_same_end(tools):
    whole = await Agent(llm=ScriptedModel(SCRIPT), tools=tools).run("order-service 5xx", run_id="r1")

    stream = Agent(llm=ScriptedModel(SCRIPT[:1]), tools=tools).events("order-service 5xx", run_id="r1")
    checkpoint = None
    async for event in stream:
        if isinstance(event, StepCompleted):
            checkpoint = stream.snapshot()
            break  # the process "dies" here: the rest of the script is never asked for
    await stream.events.aclose()
    assert checkpoint is not None
    assert checkpoint.stop_reason is StopReason.INTERRUPTED
    assert not checkpoint.ok
    assert [s.call.name for s in checkpoint.steps if s.call] == ["query_metrics"]

    saved = RunResult.from_json(checkpoint.to_json())  # what a store keeps
    model = ScriptedModel(SCRIPT[1:])
    resumed = await Agent(llm=model, tools=tools).resume(saved)
    model.assert_complete()
    assert shape(resumed) == shape(whole)
    assert resumed.nonce == checkpoint.nonce
    # The resumed model was shown the first step's observation, as the uninterrupted one was.
    assert "jumped from 0.10% to 12.0%" in model.requests[0].messages[-1].content
