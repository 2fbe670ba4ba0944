"""Turning one model response into the steps it asks for, from native calls or the text protocol.

Native arguments are parsed here (text goes to `kernel.parsing`); a malformed call is a step carrying its error.
Every call's arguments, from either protocol, are made well-formed here (`kernel.wellformed`) before anything hashes,
dispatches or saves them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache

from kernel.answer import Conclusion, InvalidFinish, conclude, conclude_prose
from kernel.calls import FINISH_TOOL, ToolCall
from kernel.llm import LLMResponse
from kernel.parsing import ReplyKind, classify_reply, parse_output
from kernel.prompt import finish_spec
from kernel.text_protocol import render_signature
from kernel.tool_errors import (
    BAD_ARGS,
    BAD_ARGS_JSON,
    DEEP_ARGS,
    FINISH_NEEDS_ANSWER,
    FINISH_NOT_ALONE,
    NOT_RUN,
    ErrorKind,
    StepError,
    format_error,
)
from kernel.wellformed import ArgsTooDeepError, wellformed, wellformed_args

DEEP_ARGS_RAW = "(not kept: nested too deeply)"
"""What a text-protocol call's arguments are recorded as when they nest too deeply to keep."""


@dataclass(frozen=True, slots=True)
class PlannedStep:
    """One step a model turn asks for: a call, possibly already known to be invalid.

    No call and no error is a prose reply that reads as an answer (`kernel.parsing.prose_reply`)."""

    thought: str
    call: ToolCall | None
    error: StepError | None = None
    conclusion: Conclusion | None = None
    """For a valid `finish`: its arguments read as the run's conclusion."""

    def not_run(self, why: str) -> PlannedStep:
        """This step refused before it runs (past the step budget, or once the run began to stop), saying why."""
        name = self.call.name if self.call else "the call"
        return PlannedStep(
            self.thought,
            self.call,
            NOT_RUN.error(ErrorKind.NOT_RUN, name=name, why=why),
        )


def plan_turn(response: LLMResponse, *, reminded: str | None = None) -> tuple[list[PlannedStep], bool]:
    """The steps a model turn asks for, and whether they came as native function calls.

    `reminded` is the prose answer the previous turn ended with, which the model was asked to confirm: prose
    again now is the answer (the longer of the two: "Yes, that is my answer." confirms the first)."""
    if response.tool_calls:
        planned = []
        for native in response.tool_calls:
            words = BAD_ARGS_JSON
            try:
                args = json.loads(native.arguments, parse_constant=_reject_constant) if native.arguments.strip() else {}
                problem = "" if isinstance(args, dict) else f"got {type(args).__name__}, not an object"
                args = wellformed_args(args)
            except ArgsTooDeepError as exc:
                words, problem = DEEP_ARGS, str(exc)
            except (ValueError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
                problem = str(exc) or type(exc).__name__
            if problem:
                call = ToolCall(name=native.name, args={"_raw": native.arguments}, id=native.id)
                error = words.error(ErrorKind.BAD_ARGS, name=native.name, problem=problem)
                planned.append(PlannedStep(response.text, call, error))
            else:
                planned.append(PlannedStep(response.text, ToolCall(name=native.name, args=args, id=native.id)))
        return _check_finish(planned), True
    parsed = parse_output(response.text)
    if not parsed.calls:
        if parsed.problem:  # it tried to make a call, and the call is broken
            return [PlannedStep(parsed.thought, None, format_error(parsed.problem))], False
        kind = classify_reply(parsed.thought)
        if reminded is not None and kind in (ReplyKind.ANSWER, ReplyKind.TOO_SHORT):
            return [_prose_answer(parsed.thought, max(reminded, parsed.thought, key=len))], False
        if kind is ReplyKind.ANSWER:
            return [PlannedStep(parsed.thought, None)], False
        return [PlannedStep(parsed.thought, None, format_error(kind.problem, kind.advice))], False
    return _check_finish([_wellformed_step(parsed.thought, call) for call in parsed.calls]), False


def _wellformed_step(thought: str, call: ToolCall) -> PlannedStep:
    """A parsed call with well-formed text, or a `bad_args` step when its arguments nest too deeply to keep."""
    name = wellformed(call.name)
    try:
        args = wellformed_args(call.args)
        same = name is call.name and args is call.args  # the usual case: nothing to change, nothing to rebuild
        return PlannedStep(thought, call if same else ToolCall(name=name, args=args, id=call.id))
    except ArgsTooDeepError as exc:
        error = DEEP_ARGS.error(ErrorKind.BAD_ARGS, name=name, problem=exc)
        return PlannedStep(thought, ToolCall(name=name, args={"_raw": DEEP_ARGS_RAW}, id=call.id), error)


def _prose_answer(thought: str, answer: str) -> PlannedStep:
    """A confirmed prose answer, as the `finish` it stands for (the trace's turn keeps what was said)."""
    conclusion = conclude_prose(answer)
    return PlannedStep(thought, ToolCall(name=FINISH_TOOL, args={"answer": conclusion.answer}), conclusion=conclusion)


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


def _check_finish(planned: list[PlannedStep]) -> list[PlannedStep]:
    """`finish` must come alone and with valid findings (or an answer); otherwise it is an error the model can fix."""
    for i, p in enumerate(planned):
        if p.call is None or p.call.name != FINISH_TOOL or p.error is not None:
            continue
        if len(planned) > 1:
            planned[i] = PlannedStep(p.thought, p.call, FINISH_NOT_ALONE.error(ErrorKind.BAD_ARGS))
            continue
        match conclude(p.call.args):
            case Conclusion() as conclusion:
                planned[i] = PlannedStep(p.thought, p.call, conclusion=conclusion)
            case InvalidFinish(problems=()):
                planned[i] = PlannedStep(p.thought, p.call, FINISH_NEEDS_ANSWER.error(ErrorKind.BAD_ARGS))
            case InvalidFinish(problems=problems):
                error = BAD_ARGS.error(
                    ErrorKind.BAD_ARGS, name=FINISH_TOOL, problems="\n".join(problems), schema=_finish_signature()
                )
                planned[i] = PlannedStep(p.thought, p.call, error)
    return planned


@cache
def _finish_signature() -> str:
    return render_signature(finish_spec())
