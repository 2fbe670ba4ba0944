"""Guidance from a person reaches a running investigation: with the model's very next request, as a user message
in the person's name (not fenced as data), kept for the rest of the run and in the trace; a resumed run and a
replay give it back at the same place."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from kernel import (
    Agent,
    Approved,
    ChatRequest,
    Deferred,
    Guidance,
    GuidanceTaken,
    LLMResponse,
    RunControl,
    RunFinished,
    ScriptedModel,
    SideEffectMode,
    SideEffectPolicy,
    StepCompleted,
    StopReason,
    ToolRegistry,
    text_turn,
)

AT = datetime(2026, 12, 5, 14, 7, tzinfo=UTC)
MARIA = Guidance("Maria (on-call)", "it's not the gateway, payments deployed at 14:02", AT, ref="m1")
SAID = "Guidance from Maria (on-call) at 14:07 UTC, for this investigation: it's not the gateway, payments deployed at 14:02"
CHECK = text_turn("query_metrics", "Why: the 5xx.", service="gateway")
PAYMENTS = text_turn("query_metrics", "Why: payments, as Maria says.", service="payments")
FINISH = text_turn("finish", answer="Payments' deploy at 14:02 (step 2).")


def registry() -> ToolRegistry:
    tools = ToolRegistry()

    @tools.register
    async def query_metrics(service: str) -> str:
        """Query a service's 5xx rate."""
        return f"{service} 5xx at 12%"

    @tools.register(side_effect=True)
    async def rollback_deployment(service: str) -> str:
        """Roll back."""
        return f"rolled back {service}"

    return tools


def said(request: ChatRequest) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in request.messages]


async def test_guidance_reaches_the_very_next_request_as_the_persons_own_words():
    model, control = ScriptedModel([CHECK, PAYMENTS, FINISH]), RunControl()
    taken = []
    async for event in Agent(llm=model, tools=registry()).events("why 5xx?", control=control):
        match event:
            case StepCompleted(step=step) if step.index == 1:
                control.guide(MARIA)
            case GuidanceTaken(taken=guidance):
                taken.append(guidance)
            case RunFinished(result=result):
                pass
    assert said(model.requests[1])[-1] == ("user", SAID), "the next request ends with the guidance"
    assert "<data-" not in SAID, "not fenced: it has a person's authority"
    assert ("user", SAID) in said(model.requests[2]), "kept for the rest of the run"
    assert ("user", SAID) not in said(model.requests[0])
    assert [(t.turn, t.step) for t in taken] == [(1, 2)]
    assert result.guidance == taken


class HeldModel:
    """A model whose first call waits until released: guidance given meanwhile must wait for the next turn."""

    def __init__(self, replies: list[str]) -> None:
        self.model = "held"
        self.replies = replies
        self.requests: list[ChatRequest] = []
        self.calling = asyncio.Event()
        self.release = asyncio.Event()

    async def complete(self, request: ChatRequest) -> LLMResponse:
        self.requests.append(ChatRequest(request.instructions, request.tools, list(request.messages)))
        if len(self.requests) == 1:
            self.calling.set()
            await self.release.wait()
        return LLMResponse(text=self.replies[len(self.requests) - 1])


async def test_guidance_given_while_the_model_is_answering_waits_for_its_next_request():
    model, control = HeldModel([CHECK, FINISH]), RunControl()
    run = asyncio.ensure_future(Agent(llm=model, tools=registry()).run("why 5xx?", control=control))
    await model.calling.wait()
    control.guide(MARIA)
    model.release.set()
    result = await run
    assert ("user", SAID) not in said(model.requests[0])
    assert said(model.requests[1])[-1] == ("user", SAID)
    assert [(t.turn, t.step) for t in result.guidance] == [(1, 2)]


async def test_several_messages_before_one_turn_are_given_together_in_their_order():
    model, control = ScriptedModel([CHECK, FINISH]), RunControl()
    later = Guidance("Sam", "and check the DB pool", AT)
    async for event in Agent(llm=model, tools=registry()).events("why 5xx?", control=control):
        if isinstance(event, StepCompleted):
            control.guide(MARIA)
            control.guide(later)
    assert [content for _, content in said(model.requests[1])[-2:]] == [SAID, later.message()]


async def test_guidance_given_while_an_approval_waits_is_read_when_the_run_goes_on():
    async def defer(request):
        return Deferred(approval_id="a1")

    agent = Agent(
        llm=ScriptedModel([text_turn("rollback_deployment", service="payments"), FINISH]),
        tools=registry(),
        policy=SideEffectPolicy(mode=SideEffectMode.FULL),
        confirm=defer,
    )
    paused = await agent.run("roll back payments")
    assert paused.stop_reason is StopReason.AWAITING_APPROVAL
    model, control = ScriptedModel([FINISH]), RunControl()
    control.guide(MARIA)
    approved = Approved(by="U0SAM", args_hash=paused.steps[0].call.args_hash(), at=AT)
    resumed = await Agent(
        llm=model, tools=registry(), policy=SideEffectPolicy(mode=SideEffectMode.FULL), confirm=defer
    ).resume(paused, decisions={"a1": approved}, control=control)
    assert resumed.ok
    messages = said(model.requests[0])
    assert messages[-1] == ("user", SAID), "after the approved call's observation"
    assert [(t.turn, t.step) for t in resumed.guidance] == [(1, 2)]


async def test_a_run_resumed_from_its_checkpoint_sees_the_conversation_it_had():
    model, control = ScriptedModel([CHECK, PAYMENTS, FINISH]), RunControl()
    stream = Agent(llm=model, tools=registry()).events("why 5xx?", control=control)
    checkpoint = None
    async for event in stream:
        if isinstance(event, StepCompleted) and event.step.index == 1:
            control.guide(MARIA)
        if isinstance(event, StepCompleted) and event.step.index == 2:
            checkpoint = stream.snapshot()  # saved after step 2, as a host saves it
    assert checkpoint is not None
    assert checkpoint.stop_reason is StopReason.INTERRUPTED
    again = ScriptedModel([FINISH])
    resumed = await Agent(llm=again, tools=registry()).resume(checkpoint)
    assert said(again.requests[0]) == said(model.requests[2]), "the same messages, guidance where it was"
    assert resumed.guidance == checkpoint.guidance


async def test_a_replay_gives_guidance_back_before_the_turn_that_took_it():
    control = RunControl()
    control.guide(MARIA, before_turn=1)
    model = ScriptedModel([CHECK, FINISH])
    result = await Agent(llm=model, tools=registry()).run("why 5xx?", control=control)
    assert ("user", SAID) not in said(model.requests[0])
    assert said(model.requests[1])[-1] == ("user", SAID)
    assert [(t.turn, t.step) for t in result.guidance] == [(1, 2)]


async def test_guidance_after_the_last_request_is_not_taken_and_stays_with_the_host():
    model, control = ScriptedModel([FINISH]), RunControl()
    async for event in Agent(llm=model, tools=registry()).events("why 5xx?", control=control):
        if isinstance(event, StepCompleted):
            control.guide(MARIA)
        if isinstance(event, RunFinished):
            assert event.result.guidance == []
    assert control.take_guidance(99) == [MARIA], "the host can say it came too late"
