"""The conversation the model sees: append-only, with a stable prefix, and bounded in size.

When the observations in view grow past a high-water mark, the oldest are elided to a one-line
stub with their handle until the low-water mark is reached; the hysteresis keeps the prefix
stable between compactions (good for provider prompt caches) and nothing is lost.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kernel.llm import ChatRequest, Message, ToolSpec
from kernel.text_protocol import message_as_text
from kernel.tokens import estimate_tokens


class ContextPolicy(BaseModel):
    """How much tool output the model keeps in view."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    obs_limit_tokens: int = Field(default=1200, ge=100)
    """Longest single observation shown; longer ones are truncated with a marker and a handle."""
    high_water_tokens: int = Field(default=8_000, ge=500)
    """Observation tokens in view that trigger eliding the oldest ones."""
    low_water_tokens: int = Field(default=4_000, ge=0)
    """Eliding stops once the observations in view are at or under this."""
    keep_recent: int = Field(default=2, ge=1)
    """The most recent observation messages are never elided."""
    core_tools: int = Field(default=2, ge=1)
    """Tools whose schemas a run offers from its first turn, chosen by its task (besides those pinned by
    `[tools] always`); the others are listed in `load_tools`' index, and loaded when the model asks."""


def prefix_tokens(instructions: str, tools: Sequence[ToolSpec]) -> int:
    """Estimated tokens of what every request repeats: the instructions and the tool specs."""
    return estimate_tokens(instructions) + estimate_tokens(json.dumps([t.model_dump() for t in tools]))


class Conversation:
    """The live message history of one run, with its token count maintained incrementally."""

    def __init__(
        self,
        instructions: str,
        tools: Sequence[ToolSpec],
        policy: ContextPolicy,
        *,
        prefix_tokens: int,
        make_stub: Callable[[Any], str],
    ) -> None:
        self.messages: list[Message] = []
        self._as_text: list[Message] = []
        """`messages` in the text protocol, converted once each as they come (and again when elided)."""
        self._make_stub = make_stub
        self._instructions = instructions
        self._tools = tools
        self._policy = policy
        self._sizes: list[int] = []
        self._prefix = prefix_tokens
        self._total = prefix_tokens
        self._in_view: deque[int] = deque()
        self._in_view_tokens = 0
        self._elidable: dict[int, Any] = {}
        self.elided = 0
        """How many observation messages have been elided to their stub."""

    @property
    def prompt_tokens(self) -> int:
        """Estimated tokens of the next request: instructions, tool specs and history."""
        return self._total

    def request(self) -> ChatRequest:
        """The next model request, around the live history (no copy)."""
        return ChatRequest(
            instructions=self._instructions, tools=self._tools, messages=self.messages, as_text=self.as_text
        )

    def as_text(self) -> list[Message]:
        """The live history in the text protocol (no copy): only the messages added since the last call are
        converted, so a turn costs what it added, not the length of the history."""
        done = len(self._as_text)
        if done < len(self.messages):
            self._as_text.extend(message_as_text(message) for message in self.messages[done:])
        return self._as_text

    def offer(self, tools: Sequence[ToolSpec], prefix_tokens: int) -> None:
        """Offer `tools` from the next request on (the model loaded schemas), with the prefix they make."""
        if tools is not self._tools:
            self._tools = tools
            self._total += prefix_tokens - self._prefix
            self._prefix = prefix_tokens

    def add_turn(self, messages: Sequence[tuple[Message, Any]]) -> None:
        """Append one model turn's messages, then compact what came before it: the model always sees
        the turn it just asked for in full. Each message comes with what `make_stub` needs to
        write its stub if it is elided later (None: never elided)."""
        first = len(self.messages)
        for message, elidable in messages:
            self.add(message, elidable=elidable, compact=False)
        if self._in_view_tokens > self._policy.high_water_tokens:
            self._compact(protect_from=first)

    def add(self, message: Message, *, elidable: Any = None, compact: bool = True) -> None:
        """Append a message; one carrying observations passes what `make_stub` needs to write the
        text that replaces it when elided (written only then: most runs never elide)."""
        size = estimate_tokens(message.content) + sum(estimate_tokens(c.render()) for c in message.tool_calls)
        self.messages.append(message)
        self._sizes.append(size)
        self._total += size
        if elidable is not None:
            index = len(self.messages) - 1
            self._elidable[index] = elidable
            self._in_view.append(index)
            self._in_view_tokens += size
            if compact and self._in_view_tokens > self._policy.high_water_tokens:
                self._compact(protect_from=index)

    def _compact(self, *, protect_from: int) -> None:
        """Elide the oldest observations, never one at or after `protect_from`, down to the low-water mark."""
        while (
            self._in_view_tokens > self._policy.low_water_tokens
            and len(self._in_view) > self._policy.keep_recent
            and self._in_view[0] < protect_from
        ):
            index = self._in_view.popleft()
            self.elided += 1
            stub = self._make_stub(self._elidable.pop(index))
            saved = self._sizes[index] - estimate_tokens(stub)
            self.messages[index] = replace(self.messages[index], content=stub)
            if index < len(self._as_text):
                self._as_text[index] = message_as_text(self.messages[index])
            self._sizes[index] -= saved
            self._total -= saved
            self._in_view_tokens -= saved + estimate_tokens(stub)
