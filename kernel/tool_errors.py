"""Typed failures of a step, in words for people and a hint for the model, rendered into the observation by one
formatter.

Every failure the model sees is a `StepError(kind, said, hint)`: `said` tells a person what happened, `hint` tells
the model what to do next; only the observation (`StepError.render`) joins them.
"""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class Words:
    """A failure's words: `said` for people (what happened), `hint` for the model (what to do next). Both are
    `str.format` templates over the same fields."""

    said: str
    hint: str = ""

    def error(self, kind: ErrorKind, **fields: object) -> StepError:
        """The step error of these words, filled in."""
        return StepError(kind=kind, said=self.said.format(**fields), hint=self.hint.format(**fields))


UNKNOWN_TOOL = Words("Unknown tool '{name}'. Available tools: {available}.", "Call one of these, or finish.")
BAD_ARGS = Words(
    "Invalid arguments for '{name}':\n{problems}", "Expected arguments: {schema}\nFix the arguments and call again."
)
UNSEEN_ARGS = Words(
    "Refused arguments for '{name}': {found}. A person approving this action could not see these characters, so "
    "what they read would differ from what is sent.",
    "Call again with the arguments written without them.",
)
DEEP_ARGS = Words("Refused arguments for '{name}': {problem},", "then call again.")
BAD_ARGS_JSON = Words(
    "The arguments for '{name}' are not valid JSON ({problem}).", "Send the arguments as one JSON object."
)
TIMEOUT = Words("'{name}' timed out after {seconds:g} s.", "Narrow the time window or the query, or use another tool.")
DEADLINE = Words(
    "'{name}' was cut off after {seconds:g} s because the run's deadline is near.", "Finish with what you know."
)
EXCEPTION = Words("'{name}' failed: {type}: {detail}")
FAILURE = Words("'{name}' failed: {detail}", "{hint}")
DENIED = Words("'{name}' was not run: {reason}.", "Use a read-only tool, or ask the user to authorise this action.")


NO_CONFIRM_REASON = "it has side effects and no approver is configured for this run"
LOOP_GUARD = Words(
    "The model repeated its call of step {step} exactly; it was not run again.",
    'You already made this call: use that result (read_output(handle="{handle}") shows it in full), change the '
    "tool or the arguments (the time window, if you expect a change), or finish if you know enough.",
)
RATE_LIMITED = Words(
    "'{name}' was not run: it may be called at most {limit} times per run.", "Use what it already returned."
)
NOT_RUN = Words("'{name}' was not run: {why}.")
CANCELLED = Words("'{name}' was stopped because the run was cancelled ({reason}).")
FINISH_NOT_ALONE = Words(
    "'finish' must be the only call in its turn:", "read the results of your other calls first, then finish."
)
FINISH_NEEDS_ANSWER = Words(
    "'finish' was called without findings.", "Give your findings: at least a non-empty 'summary' (one sentence)."
)
PROSE_REMINDER = (
    "If this is your final answer, call `finish` with it; otherwise continue with a tool call. "
    "A reply without a call ends the investigation."
)
"""The one confirming turn a prose answer gets (see `kernel.parsing.prose_reply`): it is not an error, and it is
the model's alone (a surface says the run asked the model to confirm its answer)."""
FORMAT = Words(
    "The model's reply had no usable action{problem}.",
    "{advice}Reply with your thought, then exactly one JSON block:\n"
    '{{"action": "<tool name>", "args": {{...}}}}\n'
    'or, when you know the answer: {{"action": "finish", "args": {{"answer": "..."}}}}',
)


class ToolFailure(Exception):
    """Raise from a tool to report a failure: `said` for people (what went wrong), `hint` for the model (what to
    do next). Dispatch shows both to the model, as is (no exception type), and only `said` to people:
    `ToolFailure("Prometheus rejected the query: parse error at char 12.", hint="Check the PromQL syntax.")`.
    """

    def __init__(self, said: str, *, hint: str = "") -> None:
        super().__init__(said)
        self.hint = hint


class StepError(BaseModel):
    """A failed step: its kind, what happened in words for people (`said`), and what to do next in words for the
    model (`hint`). The observation (`render`) is both; every surface a person reads shows `said` alone."""

    model_config = ConfigDict(frozen=True)

    kind: ErrorKind
    said: str
    hint: str = ""

    @property
    def transient(self) -> bool:
        """Whether the same call could succeed if tried again."""
        return self.kind in TRANSIENT_KINDS

    def render(self) -> str:
        """The observation text: one prefix per family, then the words for people, then the hint (on a line of
        its own after words of several lines, such as a list of invalid arguments)."""
        prefix = _PREFIX.get(self.kind, "[ToolError]")
        message = self.said
        if self.hint:
            message += ("\n" if "\n" in self.said else " ") + self.hint
        if prefix == "[ToolError]":
            return f"{prefix} {self.kind.value}: {message}"
        return f"{prefix} {message}"


def format_error(problem: str = "", advice: str = "") -> StepError:
    """The error for a model turn with no usable action, naming what was wrong when known; `advice` (a sentence
    and a space) leads the hint."""
    return FORMAT.error(ErrorKind.FORMAT, problem=f" ({problem})" if problem else "", advice=advice)


def denial_reason(name: str, said: str) -> str:
    """The reason in the words for people of a side effect of tool `name` the gate refused (`DENIED`): "side
    effects are disabled by policy (read_only)". "" when `said` is no such refusal."""
    head, tail = DENIED.said.split("{reason}")
    head = head.format(name=name)
    if not said.startswith(head) or not said.endswith(tail):
        return ""
    return said[len(head) : len(said) - len(tail)]
