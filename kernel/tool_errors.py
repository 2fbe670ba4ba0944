"""Typed failures of a step, rendered into model-facing text by one formatter.

Every failure the model sees is a `StepError(kind, message)`; the message says what to do next.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class ErrorKind(StrEnum):
    """Every way a step can fail; the kind decides the prefix and how the loop counts it."""

    FORMAT = "format"
    """The model's output held no usable action."""
    UNKNOWN_TOOL = "unknown_tool"
    BAD_ARGS = "bad_args"
    TIMEOUT = "timeout"
    EXCEPTION = "exception"
    DENIED = "denied"
    LOOP_GUARD = "loop_guard"
    RATE_LIMITED = "rate_limited"
    CANCELLED = "cancelled"
    """The run was stopped while the call was in flight."""
    NOT_RUN = "not_run"
    """The call was not run: the step budget ran out, or the run stopped, inside its turn."""


TRANSIENT_KINDS = frozenset({ErrorKind.TIMEOUT, ErrorKind.EXCEPTION})
"""Failures that the same call may not repeat: retrying them is legitimate work, not a loop."""

_PREFIX = {ErrorKind.FORMAT: "[FormatError]", ErrorKind.LOOP_GUARD: "[LoopGuard]"}

UNKNOWN_TOOL_TEMPLATE = "Unknown tool '{name}'. Available tools: {available}. Call one of these, or finish."
BAD_ARGS_TEMPLATE = (
    "Invalid arguments for '{name}':\n{problems}\nExpected arguments: {schema}\nFix the arguments and call again."
)
UNSEEN_ARGS_TEMPLATE = (
    "Refused arguments for '{name}': {found}. A person approving this action could not see these characters, so "
    "what they read would differ from what is sent. Call again with the arguments written without them."
)
DEEP_ARGS_TEMPLATE = "Refused arguments for '{name}': {problem}, then call again."
BAD_ARGS_JSON_TEMPLATE = (
    "The arguments for '{name}' are not valid JSON ({problem}). Send the arguments as one JSON object."
)
TIMEOUT_TEMPLATE = "'{name}' timed out after {seconds:g} s. Narrow the time window or the query, or use another tool."
DEADLINE_TEMPLATE = (
    "'{name}' was cut off after {seconds:g} s because the run's deadline is near. Finish with what you know."
)
EXCEPTION_TEMPLATE = "'{name}' failed: {type}: {detail}"
FAILURE_TEMPLATE = "'{name}' failed: {detail}"
DENIED_TEMPLATE = "'{name}' was not run: {reason}. Use a read-only tool, or ask the user to authorise this action."


NO_CONFIRM_REASON = "it has side effects and no approver is configured for this run"
LOOP_GUARD_TEMPLATE = (
    "You already made exactly this call at step {step}; it was not run again. Use that result "
    '(read_output(handle="{handle}") shows it in full), change the tool or the arguments (the time window, '
    "if you expect a change), or finish if you know enough."
)
RATE_LIMITED_TEMPLATE = (
    "'{name}' was not run: it may be called at most {limit} times per run. Use what it already returned."
)
NOT_RUN_TEMPLATE = "'{name}' was not run: {why}."
FINISH_NOT_ALONE = (
    "'finish' must be the only call in its turn: read the results of your other calls first, then finish."
)
FINISH_NEEDS_ANSWER = "'finish' needs your findings: at least a non-empty 'summary' (one sentence)."
PROSE_REMINDER = (
    "If this is your final answer, call `finish` with it; otherwise continue with a tool call. "
    "A reply without a call ends the investigation."
)
"""The one confirming turn a prose answer gets (see `kernel.parsing.prose_reply`): it is not an error."""
FORMAT_TEMPLATE = (
    "Your reply had no usable action{problem}. Reply with your thought, then exactly one JSON block:\n"
    '{{"action": "<tool name>", "args": {{...}}}}\n'
    'or, when you know the answer: {{"action": "finish", "args": {{"answer": "..."}}}}'
)


class ToolFailure(Exception):
    """Raise from a tool to report a failure whose message is written for the model.

    Dispatch shows the message as is (no exception type), so it should say what to change:
    "Prometheus rejected the query: parse error at char 12. Check the PromQL syntax."
    """


class StepError(BaseModel):
    """A failed step: its kind and the model-facing message that says what to do next."""

    model_config = ConfigDict(frozen=True)

    kind: ErrorKind
    message: str

    @property
    def transient(self) -> bool:
        """Whether the same call could succeed if tried again."""
        return self.kind in TRANSIENT_KINDS

    def render(self) -> str:
        """The observation text: one prefix per family, then the message."""
        prefix = _PREFIX.get(self.kind, "[ToolError]")
        if prefix == "[ToolError]":
            return f"{prefix} {self.kind.value}: {self.message}"
        return f"{prefix} {self.message}"


def format_error(problem: str = "") -> StepError:
    """The error for a model turn with no usable action, naming what was wrong when known."""
    return StepError(kind=ErrorKind.FORMAT, message=FORMAT_TEMPLATE.format(problem=f" ({problem})" if problem else ""))


def denial_reason(name: str, observation: str) -> str:
    """The reason inside the observation of a side effect of tool `name` the gate refused (`DENIED_TEMPLATE`),
    for people: "side effects are disabled by policy (read_only)"; the words around it are for the model. "" when
    `observation` is no such refusal."""
    head, tail = DENIED_TEMPLATE.split("{reason}")
    head = StepError(kind=ErrorKind.DENIED, message=head.format(name=name)).render()
    if not observation.startswith(head) or not observation.endswith(tail):
        return ""
    return observation[len(head) : len(observation) - len(tail)]
