"""A strict scripted model for tests and demos: it plays back given turns and nothing else.

An unexpected extra call, or turns left unused (`assert_complete`), is a loud test failure.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from kernel.llm import ChatRequest, LLMError, LLMResponse, NativeToolCall

ScriptTurn = str | LLMResponse | LLMError | Callable[[ChatRequest], "LLMResponse | str | Awaitable[LLMResponse | str]"]
"""Text (the text protocol), a full response (native calls, usage), an error to raise, or a function (which may be
a coroutine function: a test that must act while the model is answering awaits something there)."""


class ScriptError(BaseException):
    """The model was called differently than scripted. A BaseException, like pytest's own failures,
    so that no `except Exception` in the code under test can swallow it."""


class ScriptedModel:
    """Plays back a script of model turns, one per call, and records every request it got."""

    def __init__(
        self, script: Iterable[ScriptTurn], *, model: str = "scripted", latency: float = 0.0, record: bool = True
    ) -> None:
        self._script = list(script)
        self._model = model
        self._latency = latency
        self._record = record
        self.calls = 0
        self.requests: list[ChatRequest] = []
        """Snapshots of each request (when `record`), for assertions on what the model was shown."""

    @property
    def model(self) -> str:
        """The model name reported in the trace."""
        return self._model

    async def complete(self, request: ChatRequest) -> LLMResponse:
        """The next scripted turn; raises `ScriptError` when the script is exhausted."""
        if self._latency:
            await asyncio.sleep(self._latency)
        if self._record:
            self.requests.append(ChatRequest(request.instructions, request.tools, list(request.messages)))
        if self.calls >= len(self._script):
            last = request.messages[-1].content[:300] if request.messages else ""
            raise ScriptError(
                f"unexpected model call #{self.calls + 1}: the script has {len(self._script)} turns. "
                f"Last message the model was shown: {last!r}"
            )
        turn = self._script[self.calls]
        self.calls += 1
        if callable(turn) and not isinstance(turn, LLMResponse):
            turn = turn(request)
            if inspect.isawaitable(turn):
                turn = await turn
        match turn:
            case LLMError():
                raise turn
            case str():
                return LLMResponse(text=turn, model=self._model)
            case LLMResponse():
                return turn.model_copy()  # the loop stamps the response; the script's own turn stays as written
        raise ScriptError(f"script turn #{self.calls} is a {type(turn).__name__}, not a str, LLMResponse or LLMError")

    def assert_complete(self) -> None:
        """Fail if any scripted turn was never used."""
        left = self._script[self.calls :]
        if left:
            raise ScriptError(f"{len(left)} scripted turns were never used; the first: {left[0]!r}"[:500])


def native_turn(*calls: tuple[str, dict[str, Any] | str], text: str = "", start_id: int = 1) -> LLMResponse:
    """A response with native tool calls; string arguments are sent as given (even if not JSON)."""
    return LLMResponse(
        text=text,
        tool_calls=tuple(
            NativeToolCall(
                id=f"call_{start_id + i}", name=name, arguments=args if isinstance(args, str) else json.dumps(args)
            )
            for i, (name, args) in enumerate(calls)
        ),
    )


def text_turn(tool: str, thought: str = "", **args: Any) -> str:
    """A text-protocol turn: a thought, then one fenced JSON action block."""
    block = json.dumps({"action": tool, "args": args}, ensure_ascii=False)
    return f"{thought}\n```json\n{block}\n```".strip()
