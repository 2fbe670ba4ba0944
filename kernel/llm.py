"""The model interface the loop talks to, and the messages it sends.

Adapters (`kernel.adapters`: OpenAI-compatible, Anthropic, scripted) turn a `ChatRequest` into their wire format
and raise `LLMError` only after their own retries, so the loop has one failure to handle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kernel.calls import ToolCall
from kernel.wellformed import wellformed


class ToolSpec(BaseModel):
    """What the model is told about one tool: the name, when to use it, and its JSON Schema."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


@dataclass(frozen=True, slots=True)
class Message:
    """One entry of the conversation after the instructions.

    `assistant` messages carry the model's text and, for native function calling, its calls;
    `tool` messages answer one native call by id; `user` messages carry the task and, in the
    text protocol, observations. A plain dataclass: the loop builds two per step.
    """

    role: Literal["user", "assistant", "tool"]
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """Everything one model call needs: fixed instructions, the tools, the history so far.

    A plain dataclass: the loop builds one per turn around its live history, without copying it.
    """

    instructions: str
    tools: Sequence[ToolSpec]
    messages: Sequence[Message]
    as_text: Callable[[], Sequence[Message]] | None = None
    """`messages` in the text protocol (`kernel.text_protocol.messages_as_text`), when whoever keeps them has each
    message's text form at hand (the loop's conversation converts each message once, not each turn)."""


class TokenUsage(BaseModel):
    """Token counts for one model call, as the API reported them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0


class NativeToolCall(BaseModel):
    """A function call as the endpoint returned it; `arguments` is raw JSON text, maybe invalid."""

    id: str
    name: str
    arguments: str

    _wellformed = field_validator("id", "name", "arguments")(wellformed)
    """What the endpoint sent is JSON, which can carry lone surrogates (`"\\ud83d"`): they are replaced here."""


class LLMResponse(BaseModel):
    """One model turn: its text, its native tool calls, the usage when reported, and when it was asked."""

    text: str = ""
    tool_calls: tuple[NativeToolCall, ...] = ()
    usage: TokenUsage | None = None
    model: str = ""
    started_at: datetime | None = None
    """When the loop asked the model (set by the loop; None in traces from before it was recorded)."""
    ms: float = 0.0
    """How long the model call took, retries included (set by the loop, like `started_at`)."""

    _wellformed = field_validator("text")(wellformed)
    """The model's text with lone surrogates replaced, so the trace can always hold the turn."""


class LLMErrorKind(StrEnum):
    """Why a model call failed for good."""

    RATE_LIMITED = "rate_limited"
    SERVER_ERROR = "server_error"
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    BAD_REQUEST = "bad_request"
    AUTH = "auth"
    MALFORMED_RESPONSE = "malformed_response"


class LLMError(Exception):
    """A model call that failed after the adapter's retries; the run stops with `llm_error`."""

    def __init__(self, kind: LLMErrorKind, message: str, *, status: int | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.attempts = attempts

    def __str__(self) -> str:
        status = f" (HTTP {self.status})" if self.status is not None else ""
        tries = f" after {self.attempts} attempts" if self.attempts > 1 else ""
        return f"{self.kind.value}{status}{tries}: {self.message}"


class LLM(Protocol):
    """A chat model the loop can call."""

    @property
    def model(self) -> str:
        """The model name, used for pricing and the trace."""
        ...

    async def complete(self, request: ChatRequest) -> LLMResponse:
        """Return the model's next turn, or raise `LLMError` after retries.

        The response must be a new object each call: the loop stamps its timing on it (a copy would cost
        every turn).
        """
        ...
