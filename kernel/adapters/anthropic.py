"""The `LLM` adapter for Anthropic's Messages API (`POST {base_url}/v1/messages`).

The API wants strictly alternating roles, so tool results and the user text after them are merged into one user turn.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, Self

import httpx

from kernel.adapters.http_adapter import HttpModelAdapter, first_env, join_url, require_env
from kernel.adapters.http_retry import RetryPolicy, post_json_with_retries, preview
from kernel.llm import ChatRequest, LLMError, LLMErrorKind, LLMResponse, Message, NativeToolCall, TokenUsage
from kernel.text_protocol import prepare_conversation

DEFAULT_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"


class AnthropicLLM(HttpModelAdapter):
    """A Claude model behind the Messages API, with native tool use or the text protocol.

    `temperature=None` leaves the field out; `extra_headers` are sent with every request
    (e.g. `anthropic-beta`, or a gateway's own header); `api_key_env` names the variable the key came from,
    so a refused key's error says which one to check.
    """

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        base_url: str = DEFAULT_BASE_URL,
        max_tokens: int = 4096,
        temperature: float | None = 0.0,
        native_tools: bool = True,
        retry: RetryPolicy | None = None,
        client: httpx.AsyncClient | None = None,
        extra_headers: Mapping[str, str] | None = None,
        api_key_env: str | None = None,
    ) -> None:
        super().__init__(
            client,
            model=model,
            native_tools=native_tools,
            url=join_url(base_url, "v1/messages"),
            api_key=api_key,
            api_key_env=api_key_env,
            key_variables="ANTHROPIC_API_KEY",
        )
        self._max_tokens = max_tokens
        self._temperature = temperature
        self._retry = retry or RetryPolicy()
        self._headers = {"content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
        if api_key:
            self._headers["x-api-key"] = api_key
        self._headers.update(extra_headers or {})

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Self:
        """Build from `ANTHROPIC_API_KEY`, `OPSAGENT_LLM_MODEL` and, optionally, `ANTHROPIC_BASE_URL`.

        `overrides` are passed to the constructor and win over the environment.
        """
        env = os.environ if environ is None else environ
        settings: dict[str, Any] = {
            "model": require_env(env, "OPSAGENT_LLM_MODEL", purpose="the model name, e.g. claude-sonnet-4-5"),
            "api_key": require_env(env, "ANTHROPIC_API_KEY", purpose="your Anthropic API key"),
            "base_url": first_env(env, "ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL,
            "api_key_env": "ANTHROPIC_API_KEY",
        }
        return cls(**(settings | overrides))

    async def complete(self, request: ChatRequest) -> LLMResponse:
        """One Messages API call, retried per the policy; `LLMError` when it fails for good."""
        data = await post_json_with_retries(
            self._http(),
            self._url,
            json=self._request_body(request),
            headers=self._headers,
            policy=self._retry,
            auth_hint=self._auth_hint,
        )
        return self._parse(data)

    def _request_body(self, request: ChatRequest) -> dict[str, Any]:
        system, history = prepare_conversation(request, native_tools=self._native)
        body: dict[str, Any] = {
            "model": self._model,
            "max_tokens": self._max_tokens,
            "messages": alternating_messages(history),
        }
        if system:
            body["system"] = system
        if self._temperature is not None:
            body["temperature"] = self._temperature
        if self._native and request.tools:
            body["tools"] = [
                {"name": spec.name, "description": spec.description, "input_schema": spec.parameters}
                for spec in request.tools
            ]
        return body

    def _parse(self, data: dict[str, Any]) -> LLMResponse:
        blocks = data.get("content")
        if not isinstance(blocks, list):
            raise self._malformed(f"has no content list: {preview(json.dumps(data))}")
        texts: list[str] = []
        calls: list[NativeToolCall] = []
        for block in blocks:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind == "tool_use":
                calls.append(self._tool_call(block))
        return LLMResponse(
            text="\n".join(text for text in texts if text),
            tool_calls=tuple(calls),
            usage=_usage(data.get("usage")),
            model=str(data.get("model") or self._model),
        )

    def _tool_call(self, block: dict[str, Any]) -> NativeToolCall:
        call_id, name, tool_input = block.get("id"), block.get("name"), block.get("input", {})
        if not isinstance(call_id, str) or not isinstance(name, str) or not name:
            raise self._malformed(f"has a tool_use block without id or name: {preview(json.dumps(block))}")
        arguments = tool_input if isinstance(tool_input, str) else json.dumps(tool_input, ensure_ascii=False)
        return NativeToolCall(id=call_id, name=name, arguments=arguments)

    def _malformed(self, detail: str) -> LLMError:
        return LLMError(
            LLMErrorKind.MALFORMED_RESPONSE,
            f"The response from {self._url} {detail}. The server does not speak the Anthropic Messages API; "
            "check ANTHROPIC_BASE_URL.",
        )


def alternating_messages(history: list[Message]) -> list[dict[str, Any]]:
    """The history as Messages API turns: content blocks, roles strictly alternating.

    Tool results become `tool_result` blocks in a user turn; consecutive turns of one role are merged,
    and within a merged user turn the tool results come first, as the API requires.
    """
    turns: list[dict[str, Any]] = []
    for message in history:
        role, blocks = _wire_blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    for turn in turns:
        if turn["role"] == "user":
            turn["content"].sort(key=lambda block: block["type"] != "tool_result")
    return turns


def _wire_blocks(message: Message) -> tuple[str, list[dict[str, Any]]]:
    if message.role == "tool":
        return "user", [{"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.content}]
    blocks: list[dict[str, Any]] = []
    if message.content.strip():  # the API rejects empty text blocks
        blocks.append({"type": "text", "text": message.content})
    if message.role == "assistant":
        blocks.extend(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.args} for call in message.tool_calls
        )
    return message.role, blocks


def _usage(raw: Any) -> TokenUsage | None:
    """Input tokens include cache reads and writes: all of them were sent, and all count for the context."""
    if not isinstance(raw, dict):
        return None
    prompt = sum(
        int(raw.get(key) or 0) for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    )
    return TokenUsage(prompt_tokens=prompt, completion_tokens=int(raw.get("output_tokens") or 0))
