"""The `LLM` adapter for OpenAI chat completions and the servers that copy it (Azure, vLLM, Ollama, LiteLLM).

One adapter covers them all; an endpoint that rejects native tools is switched to the text protocol for good.
"""

from __future__ import annotations

import json
import logging
import os
import re
import uuid
from collections.abc import Mapping
from typing import Any, Literal, Self
from urllib.parse import urlsplit

import httpx

from kernel.adapters.http_adapter import HttpModelAdapter, first_env, join_url, require_env
from kernel.adapters.http_retry import RetryPolicy, post_json_with_retries, preview
from kernel.llm import ChatRequest, LLMError, LLMErrorKind, LLMResponse, Message, NativeToolCall, TokenUsage
from kernel.text_protocol import prepare_conversation

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
KEY_VARIABLES = ("OPSAGENT_LLM_API_KEY", "OPENAI_API_KEY")

_TOOL_WORDS = re.compile(r"tool[ _-]?choice|\btools?\b|tool[ _-]?(?:use|calls?|calling)|function[ _-]?call", re.I)
_REJECTION_WORDS = re.compile(r"support|unrecogni[sz]ed|unknown|not (?:allowed|permitted)|requires|enable|extra", re.I)


def tools_rejected(error: LLMError) -> bool:
    """Whether a failure means "this endpoint does not do native function calling".

    True for a 400/422 whose message names tools and says they are unsupported, unrecognised or need
    enabling: vLLM's `"auto" tool choice requires --enable-auto-tool-choice`, Ollama's `... does not
    support tools`, LiteLLM's unsupported-parameter errors. A bad tool schema ("Invalid 'tools[0]...'")
    is not a rejection: it stays an error the operator must fix.
    """
    if error.kind is not LLMErrorKind.BAD_REQUEST or error.status not in (400, 422):
        return False
    return bool(_TOOL_WORDS.search(error.message) and _REJECTION_WORDS.search(error.message))


class OpenAICompatibleLLM(HttpModelAdapter):
    """A chat model behind `POST {base_url}/chat/completions`.

    `api_version` adds the `api-version` query parameter and `auth_header="api-key"` sends the key
    as Azure OpenAI expects; `extra_headers` are sent with every request (e.g. for a gateway).
    `temperature=None` leaves the field out, for models that only accept their default. `api_key_env` names
    the variable the key came from, so a refused key's error says which one to check.
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        native_tools: bool = True,
        retry: RetryPolicy | None = None,
        client: httpx.AsyncClient | None = None,
        api_version: str | None = None,
        auth_header: Literal["bearer", "api-key"] = "bearer",
        extra_headers: Mapping[str, str] | None = None,
        api_key_env: str | None = None,
    ) -> None:
        super().__init__(
            client,
            model=model,
            native_tools=native_tools,
            url=join_url(base_url, "chat/completions"),
            api_key=api_key,
            api_key_env=api_key_env,
            key_variables=" or ".join(KEY_VARIABLES),
        )
        self._temperature = temperature
        self._max_tokens = max_tokens
        self._retry = retry or RetryPolicy()
        self._params = {"api-version": api_version} if api_version else None
        self._headers = {"content-type": "application/json", **(extra_headers or {})}
        if api_key:
            if auth_header == "api-key":
                self._headers["api-key"] = api_key
            else:
                self._headers["authorization"] = f"Bearer {api_key}"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Self:
        """Build from `OPSAGENT_LLM_MODEL`, `OPSAGENT_LLM_BASE_URL` (or `OPENAI_BASE_URL`), `OPSAGENT_LLM_API_KEY` (or `OPENAI_API_KEY`).

        `OPSAGENT_LLM_API_VERSION`, or a base URL on `*.azure.com`, selects Azure OpenAI (the
        `api-key` header). `overrides` are passed to the constructor and win over the environment.
        """
        env = os.environ if environ is None else environ
        base_url = first_env(env, "OPSAGENT_LLM_BASE_URL", "OPENAI_BASE_URL") or DEFAULT_BASE_URL
        api_version = first_env(env, "OPSAGENT_LLM_API_VERSION")
        azure = api_version is not None or (urlsplit(base_url).hostname or "").endswith(".azure.com")
        settings: dict[str, Any] = {
            "model": require_env(env, "OPSAGENT_LLM_MODEL", purpose="the model name, e.g. gpt-4o-mini"),
            "base_url": base_url,
            "api_key": first_env(env, *KEY_VARIABLES),
            "api_key_env": next((name for name in KEY_VARIABLES if first_env(env, name)), None),
            "api_version": api_version,
            "auth_header": "api-key" if azure else "bearer",
        }
        return cls(**(settings | overrides))

    async def complete(self, request: ChatRequest) -> LLMResponse:
        """One chat completion; falls back to the text protocol if the endpoint rejects native tools."""
        native = self._native
        try:
            data = await self._post(self._request_body(request, native_tools=native))
        except LLMError as error:
            if not (native and request.tools and tools_rejected(error)):
                raise
            if self._native:
                log.warning(
                    "%s rejected native tools (%s); model %s now uses the text protocol for the rest of the run",
                    self._url,
                    error.message,
                    self._model,
                )
            self._native = False
            data = await self._post(self._request_body(request, native_tools=False))
        return self._parse(data)

    async def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        return await post_json_with_retries(
            self._http(),
            self._url,
            json=body,
            headers=self._headers,
            params=self._params,
            policy=self._retry,
            auth_hint=self._auth_hint,
        )

    def _request_body(self, request: ChatRequest, *, native_tools: bool) -> dict[str, Any]:
        system, history = prepare_conversation(request, native_tools=native_tools)
        messages = [{"role": "system", "content": system}] if system else []
        messages.extend(_wire_message(message) for message in history)
        body: dict[str, Any] = {"model": self._model, "messages": messages}
        if self._temperature is not None:
            body["temperature"] = self._temperature
        if self._max_tokens is not None:
            body["max_tokens"] = self._max_tokens
        if native_tools and request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": spec.name, "description": spec.description, "parameters": spec.parameters},
                }
                for spec in request.tools
            ]
        return body

    def _parse(self, data: dict[str, Any]) -> LLMResponse:
        choices = data.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        message = first.get("message") if isinstance(first, dict) else None
        if not isinstance(message, dict):
            raise self._malformed(f"has no choices[0].message: {preview(json.dumps(data))}")
        raw_calls = message.get("tool_calls") or []
        if not isinstance(raw_calls, list):
            raise self._malformed(f"has tool_calls that is not a list: {preview(json.dumps(raw_calls))}")
        usage = data.get("usage")
        return LLMResponse(
            text=_content_text(message.get("content")),
            tool_calls=tuple(self._tool_call(raw) for raw in raw_calls),
            usage=TokenUsage(
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
            )
            if isinstance(usage, dict)
            else None,
            model=str(data.get("model") or self._model),
        )

    def _tool_call(self, raw: Any) -> NativeToolCall:
        function = raw.get("function") if isinstance(raw, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name:
            raise self._malformed(f"has a tool call without a function name: {preview(json.dumps(raw))}")
        arguments = function.get("arguments")
        if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
            arguments = "{}"
        elif not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        call_id = raw.get("id") or f"call_{uuid.uuid4().hex[:24]}"
        return NativeToolCall(id=str(call_id), name=name, arguments=arguments)

    def _malformed(self, detail: str) -> LLMError:
        return LLMError(
            LLMErrorKind.MALFORMED_RESPONSE,
            f"The response from {self._url} {detail}. The server does not speak OpenAI chat completions; "
            "check OPSAGENT_LLM_BASE_URL.",
        )


def _wire_message(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.args, ensure_ascii=False)},
                }
                for call in message.tool_calls
            ],
        }
    return {"role": message.role, "content": message.content}


def _content_text(content: Any) -> str:
    """`message.content` as text: a string, null, or (some servers) a list of `{"type": "text"}` parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""
