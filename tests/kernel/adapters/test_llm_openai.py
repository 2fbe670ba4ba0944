"""Tests for the OpenAI-compatible adapter over real HTTP: wire shapes, parsing, errors, text fallback."""

from __future__ import annotations

import json

import pytest

from kernel.adapters.openai_compat import OpenAICompatibleLLM, tools_rejected
from kernel.calls import ToolCall
from kernel.llm import ChatRequest, LLMError, LLMErrorKind, Message, NativeToolCall, TokenUsage, ToolSpec
from kernel.text_protocol import render_text_protocol
from testkit.fakes.model_server import (
    Reply,
    closed_port_url,
    fast_policy,
    openai_completion,
    openai_error,
    openai_tool_call,
)

METRICS = ToolSpec(
    name="query_metrics",
    description="Query a service's latency and error metrics.",
    parameters={
        "type": "object",
        "properties": {"service": {"type": "string"}, "window": {"type": "string", "default": "30m"}},
        "required": ["service"],
    },
)
LOGS = ToolSpec(name="get_logs", description="Recent log lines of a service.")
TOOLS = (METRICS, LOGS)

HISTORY = (
    Message(role="user", content="checkout is slow"),
    Message(
        role="assistant",
        content="Known: nothing yet.",
        tool_calls=(
            ToolCall(name="query_metrics", args={"service": "checkout"}, id="call_1"),
            ToolCall(name="get_logs", args={"service": "checkout", "lines": 50}, id="call_2"),
        ),
    ),
    Message(role="tool", content="p99=2.1s", tool_call_id="call_1", tool_name="query_metrics"),
    Message(role="tool", content="ERROR pool exhausted", tool_call_id="call_2", tool_name="get_logs"),
)


def chat(messages=HISTORY, tools=TOOLS) -> ChatRequest:
    return ChatRequest(instructions="You are OpsAgent.", tools=tools, messages=messages)


@pytest.fixture
async def make_llm(server, sleeps):
    made: list[OpenAICompatibleLLM] = []

    def make(**overrides) -> OpenAICompatibleLLM:
        settings = {"model": "gpt-test", "base_url": f"{server.url}/v1", "api_key": "sk-test"}
        settings["retry"] = fast_policy(sleeps)
        llm = OpenAICompatibleLLM(**(settings | overrides))
        made.append(llm)
        return llm

    yield make
    for llm in made:
        await llm.aclose()


async def test_plain_text_answer(server, make_llm):
    server.script(
        Reply(openai_completion("The pool is exhausted.", usage={"prompt_tokens": 120, "completion_tokens": 9}))
    )
    response = await make_llm().complete(chat())
    assert response.text == "The pool is exhausted."
    assert response.tool_calls == ()
    assert response.usage == TokenUsage(prompt_tokens=120, completion_tokens=9)
    assert response.model == "fake-gpt"


async def test_two_native_tool_calls_with_null_content(server, make_llm):
    calls = [
        openai_tool_call("call_a", "query_metrics", '{"service": "checkout"}'),
        openai_tool_call("call_b", "get_logs", '{"service": "payments"}'),
    ]
    server.script(Reply(openai_completion(None, tool_calls=calls)))
    response = await make_llm().complete(chat())
    assert response.text == ""
    assert response.tool_calls == (
        NativeToolCall(id="call_a", name="query_metrics", arguments='{"service": "checkout"}'),
        NativeToolCall(id="call_b", name="get_logs", arguments='{"service": "payments"}'),
    )


async def test_invalid_json_arguments_are_kept_raw(server, make_llm):
    broken = '{"service": "checkout",'
    server.script(Reply(openai_completion(None, tool_calls=[openai_tool_call("call_x", "query_metrics", broken)])))
    (call,) = (await make_llm().complete(chat())).tool_calls
    assert call.arguments == broken


async def test_arguments_sent_as_an_object_are_serialised(server, make_llm):
    args = {"service": "checkout", "window": "1h"}
    server.script(Reply(openai_completion("", tool_calls=[openai_tool_call("call_o", "query_metrics", args)])))
    (call,) = (await make_llm().complete(chat())).tool_calls
    assert isinstance(call.arguments, str)
    assert json.loads(call.arguments) == args


async def test_empty_arguments_and_missing_id_are_normalised(server, make_llm):
    raw = {"type": "function", "function": {"name": "get_logs", "arguments": ""}}
    server.script(Reply(openai_completion(None, tool_calls=[raw])))
    (call,) = (await make_llm().complete(chat())).tool_calls
    assert call.arguments == "{}"
    assert call.id.startswith("call_")
    assert len(call.id) > len("call_")


async def test_usage_absent_is_none(server, make_llm):
    server.script(Reply(openai_completion("hi")))
    assert (await make_llm().complete(chat())).usage is None


async def test_request_body_and_headers(server, make_llm):
    server.script(Reply(openai_completion("ok")))
    await make_llm().complete(chat())
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.headers["content-type"].startswith("application/json")
    body = request.json
    assert body["model"] == "gpt-test"
    assert body["temperature"] == 0.0
    assert "max_tokens" not in body
    assert body["messages"] == [
        {"role": "system", "content": "You are OpsAgent."},
        {"role": "user", "content": "checkout is slow"},
        {
            "role": "assistant",
            "content": "Known: nothing yet.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "query_metrics", "arguments": '{"service": "checkout"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "get_logs", "arguments": '{"service": "checkout", "lines": 50}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "p99=2.1s"},
        {"role": "tool", "tool_call_id": "call_2", "content": "ERROR pool exhausted"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "query_metrics", "description": METRICS.description, "parameters": METRICS.parameters},
        },
        {
            "type": "function",
            "function": {"name": "get_logs", "description": LOGS.description, "parameters": LOGS.parameters},
        },
    ]


async def test_assistant_without_text_sends_null_content(server, make_llm):
    call = ToolCall(name="get_logs", args={}, id="call_9")
    messages = (Message(role="user", content="go"), Message(role="assistant", tool_calls=(call,)))
    server.script(Reply(openai_completion("ok")))
    await make_llm().complete(chat(messages))
    assert server.bodies[0]["messages"][2]["content"] is None


async def test_optional_settings_change_the_body(server, make_llm):
    server.script(Reply(openai_completion("ok")))
    await make_llm(max_tokens=256, temperature=None, api_key=None).complete(chat(tools=()))
    (request,) = server.requests
    assert request.json["max_tokens"] == 256
    assert "temperature" not in request.json
    assert "tools" not in request.json
    assert "authorization" not in request.headers


async def test_azure_style_auth_and_api_version(server, make_llm):
    server.script(Reply(openai_completion("ok")))
    llm = make_llm(base_url=f"{server.url}/openai/deployments/gpt4o", api_version="2024-10-21", auth_header="api-key")
    await llm.complete(chat())
    (request,) = server.requests
    assert request.path == "/openai/deployments/gpt4o/chat/completions"
    assert request.query == {"api-version": "2024-10-21"}
    assert request.headers["api-key"] == "sk-test"
    assert "authorization" not in request.headers


async def test_id_less_calls_in_history_are_sent_as_text(server, make_llm):
    messages = (
        Message(role="user", content="go"),
        Message(role="assistant", content="Checking.", tool_calls=(ToolCall(name="get_logs", args={"n": 1}),)),
        Message(role="tool", content="log line", tool_name="get_logs"),
    )
    server.script(Reply(openai_completion("ok")))
    await make_llm().complete(chat(messages))
    sent = server.bodies[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert "tool_calls" not in sent[2]
    assert '"action": "get_logs"' in sent[2]["content"]
    assert sent[3]["content"] == "Observation (get_logs):\nlog line"


async def test_429_with_retry_after_then_success(server, make_llm, sleeps):
    server.script(
        Reply(
            openai_error("Rate limit reached for gpt-test", error_type="requests"),
            status=429,
            headers={"Retry-After": "1"},
        ),
        Reply(openai_completion("done")),
    )
    assert (await make_llm().complete(chat())).text == "done"
    assert sleeps.delays == [1.0]
    assert server.bodies[0] == server.bodies[1]


async def test_missing_choices_is_malformed(server, make_llm):
    server.script(Reply({"id": "x", "object": "chat.completion", "model": "m"}))
    with pytest.raises(LLMError) as caught:
        await make_llm().complete(chat())
    assert caught.value.kind is LLMErrorKind.MALFORMED_RESPONSE
    assert "choices" in caught.value.message


async def test_tool_call_without_name_is_malformed(server, make_llm):
    server.script(Reply(openai_completion(None, tool_calls=[{"id": "c", "type": "function", "function": {}}])))
    with pytest.raises(LLMError) as caught:
        await make_llm().complete(chat())
    assert caught.value.kind is LLMErrorKind.MALFORMED_RESPONSE


async def test_401_is_auth_and_names_the_variable_the_key_came_from(server, make_llm, sleeps):
    refused = Reply(openai_error("Incorrect API key provided: sk-test.", code="invalid_api_key"), status=401)
    server.script(refused, refused, refused)
    with pytest.raises(LLMError) as caught:
        await make_llm(api_key_env="PROD_OPENAI_KEY").complete(chat())
    assert caught.value.kind is LLMErrorKind.AUTH
    assert "Incorrect API key provided" in caught.value.message
    assert caught.value.message.endswith(
        "The key in PROD_OPENAI_KEY was refused: check that variable (a typo, a revoked key, another endpoint's key)."
    )
    env = {"OPSAGENT_LLM_MODEL": "m", "OPSAGENT_LLM_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": "sk-x"}
    async with OpenAICompatibleLLM.from_env(env, retry=fast_policy(sleeps)) as llm:
        with pytest.raises(LLMError, match="The key in OPENAI_API_KEY was refused"):
            await llm.complete(chat())
    with pytest.raises(LLMError) as caught:
        await make_llm(api_key=None).complete(chat())
    assert caught.value.message.endswith("No API key was sent: set OPSAGENT_LLM_API_KEY or OPENAI_API_KEY.")


async def test_connection_refused(make_llm):
    llm = make_llm(base_url=f"{closed_port_url()}/v1")
    with pytest.raises(LLMError) as caught:
        await llm.complete(chat())
    assert caught.value.kind is LLMErrorKind.CONNECTION
    assert caught.value.attempts == 4


VLLM_REJECTION = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
OLLAMA_REJECTION = "registry.ollama.ai/library/gemma:2b does not support tools"


@pytest.mark.parametrize(
    "rejection",
    [
        Reply({"object": "error", "message": VLLM_REJECTION, "type": "BadRequestError", "code": 400}, status=400),
        Reply({"error": OLLAMA_REJECTION}, status=400),
    ],
)
async def test_rejected_tools_fall_back_to_the_text_protocol_for_good(server, make_llm, rejection):
    server.script(rejection, Reply(openai_completion('Thought.\n```json\n{"action": "get_logs", "args": {}}\n```')))
    server.script(Reply(openai_completion("later")))
    llm = make_llm()
    response = await llm.complete(chat())
    assert response.text.startswith("Thought.")
    assert llm.native_tools is False

    first, second = server.bodies
    assert "tools" in first
    assert "tools" not in second
    system = second["messages"][0]
    assert system["role"] == "system"
    assert system["content"] == "You are OpsAgent.\n\n" + render_text_protocol(TOOLS)
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "user", "user"]
    assert all("tool_calls" not in m for m in second["messages"])
    assert second["messages"][3]["content"] == "Observation (query_metrics):\np99=2.1s"

    assert (await llm.complete(chat())).text == "later"
    third = server.bodies[2]
    assert "tools" not in third
    assert third["messages"] == second["messages"]
    assert len(server.requests) == 3


async def test_unrelated_400_does_not_fall_back(server, make_llm):
    message = "Invalid 'tools[0].function.name': string does not match pattern."
    server.script(Reply(openai_error(message), status=400), Reply(openai_completion("never sent")))
    llm = make_llm()
    with pytest.raises(LLMError) as caught:
        await llm.complete(chat())
    assert caught.value.kind is LLMErrorKind.BAD_REQUEST
    assert message in caught.value.message
    assert llm.native_tools is True
    assert len(server.requests) == 1


async def test_text_mode_from_the_start(server, make_llm):
    server.script(Reply(openai_completion("ok")))
    llm = make_llm(native_tools=False)
    await llm.complete(chat())
    body = server.bodies[0]
    assert "tools" not in body
    assert body["messages"][0]["content"].endswith(render_text_protocol(TOOLS))
    assert body["messages"][2]["content"].startswith("Known: nothing yet.\n```json")


def test_tools_rejected_classification():
    def bad(message, status=400, kind=LLMErrorKind.BAD_REQUEST):
        return LLMError(kind, f"HTTP {status} from http://x/v1/chat/completions: {message}", status=status)

    assert tools_rejected(bad(VLLM_REJECTION))
    assert tools_rejected(bad(OLLAMA_REJECTION))
    assert tools_rejected(bad("litellm.UnsupportedParamsError: model does not support parameters: ['tools']"))
    assert tools_rejected(bad("tools\n  Extra inputs are not permitted", status=422))
    assert not tools_rejected(bad("Invalid 'tools[0].function.name': string does not match pattern."))
    assert not tools_rejected(bad("This model's maximum context length is 8192 tokens."))
    assert not tools_rejected(bad(OLLAMA_REJECTION, status=401, kind=LLMErrorKind.AUTH))


async def test_from_env_reads_settings_and_falls_back_to_openai_key(server, sleeps):
    env = {"OPSAGENT_LLM_MODEL": "llama3.1", "OPENAI_API_KEY": "sk-env", "OPSAGENT_LLM_BASE_URL": f"{server.url}/v1/"}
    server.script(Reply(openai_completion("one")), Reply(openai_completion("two")))
    async with OpenAICompatibleLLM.from_env(env, retry=fast_policy(sleeps)) as llm:
        assert llm.model == "llama3.1"
        await llm.complete(chat())
    async with OpenAICompatibleLLM.from_env(env | {"OPSAGENT_LLM_API_KEY": "sk-ops"}, temperature=0.3) as llm:
        await llm.complete(chat())
    first, second = server.requests
    assert first.path == "/v1/chat/completions"
    assert first.json["model"] == "llama3.1"
    assert first.headers["authorization"] == "Bearer sk-env"
    assert second.headers["authorization"] == "Bearer sk-ops"
    assert second.json["temperature"] == 0.3


async def test_from_env_api_version_selects_azure_auth(server):
    env = {
        "OPSAGENT_LLM_MODEL": "gpt-4o",
        "OPSAGENT_LLM_API_KEY": "az-key",
        "OPSAGENT_LLM_BASE_URL": f"{server.url}/openai/deployments/gpt-4o",
        "OPSAGENT_LLM_API_VERSION": "2024-10-21",
    }
    server.script(Reply(openai_completion("ok")))
    async with OpenAICompatibleLLM.from_env(env) as llm:
        await llm.complete(chat())
    (request,) = server.requests
    assert request.headers["api-key"] == "az-key"
    assert "authorization" not in request.headers
    assert request.query == {"api-version": "2024-10-21"}


def test_from_env_requires_a_model():
    with pytest.raises(ValueError, match="OPSAGENT_LLM_MODEL is not set"):
        OpenAICompatibleLLM.from_env({"OPENAI_API_KEY": "k"})
