"""Where a tool call comes from, for tools that need to know: the run, the step, the call's hash, the redactor.

A tool asks for it by declaring a parameter annotated `CallContext`; dispatch fills it in, and the
model never sees it (it is not part of the tool's arguments).
"""

from __future__ import annotations

from dataclasses import dataclass

from kernel.calls import ToolCall
from kernel.redaction import DEFAULT_REDACTOR, Redactor


@dataclass(frozen=True, slots=True)
class CallContext:
    """The run, the step, the model's reasoning, the hash that identifies the exact call, and the run's redactor."""

    run_id: str
    step: int
    call: ToolCall
    thought: str = ""
    redactor: Redactor = DEFAULT_REDACTOR
    """Dispatch's own redactor, set by dispatch: a tool that reshapes raw backend text (joins lines, cuts them,
    groups them) redacts the raw text with it first, so no reshaping can split a secret past it."""

    @property
    def args_hash(self) -> str:
        """SHA-256 of the tool name and canonical arguments: with the run id, a stable idempotency key."""
        return self.call.args_hash()
