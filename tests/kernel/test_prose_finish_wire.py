"""Finishing in prose over the real OpenAI and Anthropic wire formats, against a fake model server on 127.0.0.1.

The same five cases as with the scripted model: native and text-protocol answers, a glitch, an announcement, empty.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from kernel import Agent, AnthropicLLM, ErrorKind, FinishedBy, OpenAICompatibleLLM, RunResult, StopReason
from kernel.tool_errors import PROSE_REMINDER
from testkit.fakes.model_server import (
    Reply,
    anthropic_message,
    anthropic_text,
    anthropic_tool_use,
    fast_policy,
    openai_completion,
    openai_tool_call,
)

ANSWER = "Root cause: v2.14.0 cut the payment pool to 4 connections (step 1). Confidence: likely."
CALL_TEXT = '```json\n{"action": "query_metrics", "args": {"service": "order-service"}}\n```'


@dataclass(frozen=True)
class Wire:
    """One provider's reply shapes and how its requests carry the last message."""

    name: str
    make: Callable[..., Any]
    prose: Callable[[str], dict[str, Any]]
    call: Callable[[str, str, dict[str, Any]], dict[str, Any]]
    last_text: Callable[[dict[str, Any]], str]


def _openai_last(body: dict[str, Any]) -> str:
    return body["messages"][-1]["content"]


def _anthropic_last(body: dict[str, Any]) -> str:
    return body["messages"][-1]["content"][-1]["text"]


WIRES = [
    Wire(
        "openai",
        lambda url, **kw: OpenAICompatibleLLM(model="gpt-test", base_url=f"{url}/v1", api_key="sk-test", **kw),
        lambda text: openai_completion(text or None),
        lambda id_, name, args: openai_completion(None, tool_calls=[openai_tool_call(id_, name, json.dumps(args))]),
        _openai_last,
    ),
    Wire(
        "anthropic",
        lambda url, **kw: AnthropicLLM(model="claude-test", api_key="sk-ant-test", base_url=url, **kw),
        lambda text: anthropic_message(*([anthropic_text(text)] if text else [])),
        lambda id_, name, args: anthropic_message(anthropic_tool_use(id_, name, args)),
        _anthropic_last,
    ),
]


@pytest.fixture(params=WIRES, ids=lambda w: w.name)
def wire(request) -> Wire:
    return request.param


async def investigate(server, sleeps, tools, wire: Wire, replies: list[dict[str, Any]], **options) -> RunResult:
    server.script(*(Reply(body) for body in replies))
    llm = wire.make(server.url, retry=fast_policy(sleeps), **options)
    try:
        return await Agent(llm=llm, tools=tools, salvage=False).run("order-service 5xx jumped to 12%")
    finally:
        await llm.aclose()


def shape(result: RunResult) -> list[tuple[str | None, ErrorKind | None]]:
    return [(s.call.name if s.call else None, s.error) for s in result.steps]


async def test_a_native_prose_answer_finishes(server, sleeps, tools, wire):
    metrics = wire.call("call_1", "query_metrics", {"service": "order-service"})
    result = await investigate(server, sleeps, tools, wire, [metrics, wire.prose(ANSWER), wire.prose(ANSWER)])
    assert result.ok
    assert result.stop_reason is StopReason.FINISH
    assert result.finished_by is FinishedBy.PROSE
    assert result.answer == ANSWER
    assert shape(result) == [("query_metrics", None), (None, None), ("finish", None)]
    assert len(server.requests) == 3
    assert wire.last_text(server.bodies[2]) == f"Observation (step 2):\n{PROSE_REMINDER}"
    assert "tools" in server.bodies[2], "the confirming turn still offers the tools: the model may go on"
    assert result.evidence_check is not None
    assert result.evidence_check.passed


async def test_a_text_protocol_prose_answer_finishes(server, sleeps, tools, wire):
    replies = [wire.prose(f"Known: nothing yet.\n{CALL_TEXT}"), wire.prose(ANSWER), wire.prose(ANSWER)]
    result = await investigate(server, sleeps, tools, wire, replies, native_tools=False)
    assert result.ok
    assert result.finished_by is FinishedBy.PROSE
    assert shape(result) == [("query_metrics", None), (None, None), ("finish", None)]
    assert all("tools" not in body for body in server.bodies)
    assert wire.last_text(server.bodies[2]) == f"Observation (step 2):\n{PROSE_REMINDER}"


async def test_a_glitch_mid_run_continues(server, sleeps, tools, wire):
    replies = [
        wire.call("call_1", "query_metrics", {"service": "order-service"}),
        wire.prose("The 5xx rate jumped at t-10m, right after the deploy."),
        wire.call("call_2", "search_logs", {"service": "order-service"}),
        wire.call("call_3", "finish", {"summary": "v2.14.0 broke checkout.", "confidence": "likely"}),
    ]
    result = await investigate(server, sleeps, tools, wire, replies)
    assert result.ok
    assert result.finished_by is FinishedBy.FINISH
    assert shape(result) == [("query_metrics", None), (None, None), ("search_logs", None), ("finish", None)]
    assert result.findings is not None
    assert result.findings.summary == "v2.14.0 broke checkout."


async def test_let_me_check_stays_an_error(server, sleeps, tools, wire):
    replies = [
        wire.call("call_1", "query_metrics", {"service": "order-service"}),
        wire.prose("Let me check the logs."),
        wire.call("call_2", "finish", {"answer": ANSWER}),
    ]
    result = await investigate(server, sleeps, tools, wire, replies)
    assert result.ok
    assert result.finished_by is FinishedBy.FINISH
    assert shape(result) == [("query_metrics", None), (None, ErrorKind.FORMAT), ("finish", None)]
    assert "announced an action without making it" in wire.last_text(server.bodies[2])


async def test_an_empty_reply_stays_an_error(server, sleeps, tools, wire):
    replies = [
        wire.call("call_1", "query_metrics", {"service": "order-service"}),
        wire.prose(""),
        wire.call("call_2", "finish", {"answer": ANSWER}),
    ]
    result = await investigate(server, sleeps, tools, wire, replies)
    assert result.ok
    assert shape(result) == [("query_metrics", None), (None, ErrorKind.FORMAT), ("finish", None)]
    assert "(the reply was empty)" in wire.last_text(server.bodies[2])
