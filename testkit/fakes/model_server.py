"""A scripted fake model server on 127.0.0.1, and builders for real OpenAI and Anthropic JSON shapes.

Adapters are tested over real HTTP: each request takes the next scripted reply and is recorded for assertions.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from kernel import RetryPolicy
from testkit.servers.local_server import LocalServer


@dataclass
class Reply:
    """One scripted response: a dict/list body is sent as JSON, bytes/str as they are."""

    body: Any = field(default_factory=dict)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass(frozen=True)
class RecordedRequest:
    """What the server received: header names are lower-cased."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    raw: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.raw)


class FakeModelServer(LocalServer):
    """An aiohttp server on a free port; `script(...)` queues replies, `requests` records calls.

    A request with no reply left goes to `respond` when set (a reply chosen from the request itself, for
    concurrent conversations), else gets a 418 whose error message says so, so a test that under-scripts
    fails loudly instead of hanging. Delayed replies end at once when the server closes.
    """

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[RecordedRequest] = []
        self.respond: Callable[[RecordedRequest], Reply] | None = None
        self._replies: deque[Reply] = deque()

    def script(self, *replies: Reply) -> None:
        self._replies.extend(replies)

    @property
    def bodies(self) -> list[Any]:
        return [request.json for request in self.requests]

    def routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/{tail:.*}", self._handle)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        recorded = RecordedRequest(
            method=request.method,
            path=request.path,
            query=dict(request.query),
            headers={name.lower(): value for name, value in request.headers.items()},
            raw=raw,
        )
        self.requests.append(recorded)
        if self._replies:
            reply = self._replies.popleft()
        elif self.respond is not None:
            reply = self.respond(recorded)
        else:
            message = f"fake server: no scripted reply for request #{len(self.requests)}"
            return web.json_response({"error": {"message": message}}, status=418)
        if reply.delay:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), reply.delay)
        if isinstance(reply.body, bytes | str):
            return web.Response(body=reply.body, status=reply.status, headers=reply.headers)
        return web.json_response(reply.body, status=reply.status, headers=reply.headers)


class SleepRecorder:
    """An injectable `sleep` that records the requested delays and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        await asyncio.sleep(0)


def fast_policy(sleep: SleepRecorder, **overrides: Any) -> RetryPolicy:
    """A retry policy with recorded sleeps, no jitter (full backoff) and a short timeout."""
    settings: dict[str, Any] = {"sleep": sleep, "jitter": lambda: 1.0, "timeout": 2.0}
    return RetryPolicy(**(settings | overrides))


def closed_port_url() -> str:
    """The URL of a local port nobody listens on: connecting is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# --- OpenAI chat completions ------------------------------------------------------------------


def openai_completion(
    content: str | None = "",
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    usage: dict[str, int] | None = None,
    model: str = "fake-gpt",
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop", "logprobs": None}
        ],
    }
    if usage is not None:
        body["usage"] = usage | {"total_tokens": sum(usage.values())}
    return body


def openai_tool_call(call_id: str, name: str, arguments: str | dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def openai_error(message: str, *, error_type: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


# --- Anthropic messages -----------------------------------------------------------------------


def anthropic_message(
    *blocks: dict[str, Any], usage: dict[str, int] | None = None, model: str = "fake-claude"
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": list(blocks),
        "stop_reason": "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn",
        "stop_sequence": None,
    }
    if usage is not None:
        body["usage"] = usage
    return body


def anthropic_text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def anthropic_tool_use(call_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}


def anthropic_error(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}
