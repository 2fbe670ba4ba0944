"""Tests for the Anthropic Messages adapter over real HTTP: alternating turns, tool_use parsing, retries."""

from __future__ import annotations

import json

import pytest

from kernel.adapters.anthropic import AnthropicLLM, alternating_messages
from kernel.calls import ToolCall
from kernel.llm import ChatRequest, LLMError, LLMErrorKind, Message, NativeToolCall, TokenUsage, ToolSpec
from kernel.text_protocol import render_text_protocol
from testkit.fakes.model_server import (
    Reply,
    anthropic_error,
    anthropic_message,
    anthropic_text,
    anthropic_tool_use,
    fast_policy,
)

METRICS = ToolSpec(
    name="query_metrics",
    description="Query a service's latency and error metrics.",
    parameters={"type": "object", "properties": {"service": {"type": "string"}}, "required": ["service"]},
)
LOGS = ToolSpec(name="get_logs", description="Recent log lines of a service.")
TOOLS = (METRICS, LOGS)

HISTORY = (
    Message(role="user", content="checkout is slow"),
    Message(
        role="assistant",
        content="Known: nothing yet.",
        tool_calls=(
            ToolCall(name="query_metrics", args={"service": "checkout"}, id="toolu_1"),
            ToolCall(name="get_logs", args={"service": "checkout"}, id="toolu_2"),
        ),
    ),
    Message(role="tool", content="p99=2.1s", tool_call_id="toolu_1", tool_name="query_metrics"),
    Message(role="tool", content="ERROR pool exhausted", tool_call_id="toolu_2", tool_name="get_logs"),
    Message(role="user", content="Step budget: 3 left."),
)


def chat(messages=HISTORY, tools=TOOLS) -> ChatRequest:
    return ChatRequest(instructions="You are OpsAgent.", tools=tools, messages=messages)


@pytest.fixture
async def make_llm(server, sleeps):
    made: list[AnthropicLLM] = []

    def make(**overrides) -> AnthropicLLM:
        settings = {"model": "claude-test", "api_key": "sk-ant-test", "base_url": server.url}
        settings["retry"] = fast_policy(sleeps)
        llm = AnthropicLLM(**(settings | overrides))
        made.append(llm)
        return llm

    yield make
    for llm in made:
        await llm.aclose()


async def test_text_answer_joins_text_blocks_and_sums_cached_input(server, make_llm):
    usage = {
        "input_tokens": 10,
        "cache_read_input_tokens": 1000,
        "cache_creation_input_tokens": 200,
        "output_tokens": 42,
    }
    server.script(
        Reply(anthropic_message(anthropic_text("Root cause:"), anthropic_text("pool exhausted."), usage=usage))
    )
    response = await make_llm().complete(chat())
    assert response.text == "Root cause:\npool exhausted."
    assert response.tool_calls == ()
    assert response.usage == TokenUsage(prompt_tokens=1210, completion_tokens=42)
    assert response.model == "fake-claude"


async def test_tool_use_blocks_become_native_calls(server, make_llm):
    server.script(
        Reply(
            anthropic_message(
                anthropic_text("Checking both."),
                anthropic_tool_use("toolu_a", "query_metrics", {"service": "checkout"}),
                anthropic_tool_use("toolu_b", "get_logs", {}),
                usage={"input_tokens": 5, "output_tokens": 7},
            )
        )
    )
    response = await make_llm().complete(chat())
    assert response.text == "Checking both."
    assert response.usage == TokenUsage(prompt_tokens=5, completion_tokens=7)
    first, second = response.tool_calls
    assert first == NativeToolCall(id="toolu_a", name="query_metrics", arguments=first.arguments)
    assert json.loads(first.arguments) == {"service": "checkout"}
    assert second.id == "toolu_b"
    assert json.loads(second.arguments) == {}


async def test_usage_absent_is_none(server, make_llm):
    server.script(Reply(anthropic_message(anthropic_text("hi"))))
    assert (await make_llm().complete(chat())).usage is None


async def test_request_headers_and_body_merge_tool_results_into_one_user_turn(server, make_llm):
    server.script(Reply(anthropic_message(anthropic_text("ok"))))
    await make_llm().complete(chat())
    (request,) = server.requests
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "sk-ant-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["content-type"].startswith("application/json")
    assert "authorization" not in request.headers
    body = request.json
    assert body["model"] == "claude-test"
    assert body["max_tokens"] == 4096
    assert body["temperature"] == 0.0
    assert body["system"] == "You are OpsAgent."
    assert body["tools"] == [
        {"name": "query_metrics", "description": METRICS.description, "input_schema": METRICS.parameters},
        {"name": "get_logs", "description": LOGS.description, "input_schema": LOGS.parameters},
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "checkout is slow"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Known: nothing yet."},
                {"type": "tool_use", "id": "toolu_1", "name": "query_metrics", "input": {"service": "checkout"}},
                {"type": "tool_use", "id": "toolu_2", "name": "get_logs", "input": {"service": "checkout"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "p99=2.1s"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "ERROR pool exhausted"},
                {"type": "text", "text": "Step budget: 3 left."},
            ],
        },
    ]


def test_alternation_merges_same_roles_puts_results_first_and_drops_empty_text():
    history = [
        Message(role="user", content="one"),
        Message(role="user", content="two"),
        Message(role="assistant", content="", tool_calls=(ToolCall(name="get_logs", id="toolu_9"),)),
        Message(role="user", content="an interjection"),
        Message(role="tool", content="result", tool_call_id="toolu_9", tool_name="get_logs"),
        Message(role="assistant", content="thinking"),
        Message(role="assistant", content="more"),
    ]
    turns = alternating_messages(history)
    assert [turn["role"] for turn in turns] == ["user", "assistant", "user", "assistant"]
    assert turns[0]["content"] == [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]
    assert turns[1]["content"] == [{"type": "tool_use", "id": "toolu_9", "name": "get_logs", "input": {}}]
    assert [block["type"] for block in turns[2]["content"]] == ["tool_result", "text"]
    assert turns[3]["content"] == [{"type": "text", "text": "thinking"}, {"type": "text", "text": "more"}]


async def test_text_protocol_mode(server, make_llm):
    server.script(Reply(anthropic_message(anthropic_text('```json\n{"action": "finish", "args": {}}\n```'))))
    await make_llm(native_tools=False, temperature=None, max_tokens=1000).complete(chat())
    body = server.bodies[0]
    assert "tools" not in body
    assert "temperature" not in body
    assert body["max_tokens"] == 1000
    assert body["system"] == "You are OpsAgent.\n\n" + render_text_protocol(TOOLS)
    assert [turn["role"] for turn in body["messages"]] == ["user", "assistant", "user"]
    assert all(block["type"] == "text" for turn in body["messages"] for block in turn["content"])
    observations = [block["text"] for block in body["messages"][2]["content"]]
    assert observations == [
        "Observation (query_metrics):\np99=2.1s",
        "Observation (get_logs):\nERROR pool exhausted",
        "Step budget: 3 left.",
    ]


async def test_529_overloaded_is_retried(server, make_llm, sleeps):
    server.script(
        Reply(anthropic_error("overloaded_error", "Overloaded"), status=529),
        Reply(anthropic_error("overloaded_error", "Overloaded"), status=529, headers={"retry-after": "2"}),
        Reply(anthropic_message(anthropic_text("back"))),
    )
    assert (await make_llm().complete(chat())).text == "back"
    assert sleeps.delays == [0.5, 2.0]
    assert len(server.requests) == 3


async def test_persistent_529_reports_server_error_with_attempts(server, make_llm):
    server.script(*[Reply(anthropic_error("overloaded_error", "Overloaded"), status=529)] * 4)
    with pytest.raises(LLMError) as caught:
        await make_llm().complete(chat())
    assert caught.value.kind is LLMErrorKind.SERVER_ERROR
    assert caught.value.status == 529
    assert caught.value.attempts == 4
    assert "Overloaded" in caught.value.message


async def test_401_names_the_key_variable(server, make_llm):
    server.script(Reply(anthropic_error("authentication_error", "invalid x-api-key"), status=401))
    with pytest.raises(LLMError) as caught:
        await make_llm(api_key_env="ANTHROPIC_API_KEY").complete(chat())
    assert caught.value.kind is LLMErrorKind.AUTH
    assert "invalid x-api-key" in caught.value.message
    assert "The key in ANTHROPIC_API_KEY was refused" in caught.value.message


async def test_400_carries_the_api_message(server, make_llm):
    message = 'messages: roles must alternate between "user" and "assistant"'
    server.script(Reply(anthropic_error("invalid_request_error", message), status=400))
    with pytest.raises(LLMError) as caught:
        await make_llm().complete(chat())
    assert caught.value.kind is LLMErrorKind.BAD_REQUEST
    assert message in caught.value.message


@pytest.mark.parametrize(
    "body",
    [
        {"type": "message", "role": "assistant"},
        anthropic_message({"type": "tool_use", "name": "get_logs", "input": {}}),
    ],
)
async def test_malformed_bodies(server, make_llm, body):
    server.script(Reply(body))
    with pytest.raises(LLMError) as caught:
        await make_llm().complete(chat())
    assert caught.value.kind is LLMErrorKind.MALFORMED_RESPONSE
    assert "ANTHROPIC_BASE_URL" in caught.value.message


async def test_from_env(server):
    env = {"ANTHROPIC_API_KEY": "sk-ant-env", "OPSAGENT_LLM_MODEL": "claude-x", "ANTHROPIC_BASE_URL": server.url}
    server.script(Reply(anthropic_message(anthropic_text("ok"))))
    async with AnthropicLLM.from_env(env, max_tokens=64) as llm:
        assert llm.model == "claude-x"
        await llm.complete(chat())
    (request,) = server.requests
    assert request.headers["x-api-key"] == "sk-ant-env"
    assert request.json["model"] == "claude-x"
    assert request.json["max_tokens"] == 64
    with pytest.raises(ValueError, match="ANTHROPIC_API_KEY is not set"):
        AnthropicLLM.from_env({"OPSAGENT_LLM_MODEL": "claude-x"})
