"""A tool call as the kernel sees it, whatever protocol the model used to make it.

Native function calls and every text format the parser understands normalise to `ToolCall`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import field
from functools import cached_property
from typing import Any

from pydantic.dataclasses import dataclass

FINISH_TOOL = "finish"
"""The reserved tool name that ends a run; its `answer` argument is the result."""


@dataclass(frozen=True)
class ToolCall:
    """One requested tool invocation: a name, its arguments, and the protocol's call id.

    A pydantic dataclass: validated like a model, without a model's per-instance overhead.
    """

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    """The native tool-call id (OpenAI `tool_calls[].id`, Anthropic `tool_use.id`); None for text."""

    @cached_property
    def key(self) -> str:
        """Identity of the call for loop detection and approvals: name + canonical arguments."""
        return f"{self.name}:{canonical_args(self.args)}"

    def args_hash(self) -> str:
        """SHA-256 of the name and canonical arguments, to bind an approval to this exact call."""
        return hashlib.sha256(self.key.encode()).hexdigest()

    def render(self) -> str:
        """A compact, human-readable `name(k=v, ...)` form for logs and Slack."""
        inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in self.args.items())
        return f"{self.name}({inner})"


def canonical_args(args: dict[str, Any]) -> str:
    """Stable JSON for arguments: sorted keys, no whitespace, so equal calls compare equal."""
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
