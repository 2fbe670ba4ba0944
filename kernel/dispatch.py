"""Tool dispatch: the one safety boundary between the model and the world.

Validation, policy, approvals, rate limits, timeouts, serialisation, redaction and the audit
log all happen here, and `dispatch` never raises: every failure is a typed `StepError`. Redaction is here
twice: a tool that reshapes raw text gets this redactor in its `CallContext` to redact before reshaping,
and whatever any tool returns is redacted again here (idempotent) before anyone sees it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import structlog
from pydantic import BaseModel, ValidationError

from kernel.call_context import CallContext
from kernel.calls import ToolCall, unseen_characters
from kernel.clock import RunControl
from kernel.policy import (
    ApprovalRequest,
    Approved,
    ConfirmHook,
    Deferred,
    Denied,
    SideEffectMode,
    SideEffectPolicy,
)
from kernel.redaction import Redactor
from kernel.text_protocol import render_signature
from kernel.tool_errors import (
    BAD_ARGS,
    CANCELLED,
    DEADLINE,
    DENIED,
    EXCEPTION,
    FAILURE,
    NO_CONFIRM_REASON,
    RATE_LIMITED,
    TIMEOUT,
    UNKNOWN_TOOL,
    UNSEEN_ARGS,
    ErrorKind,
    StepError,
    ToolFailure,
    Words,
)
from kernel.tool_output import SourceLink, ToolOutput
from kernel.tools import Tool, ToolRegistry
from kernel.wellformed import wellformed

log = structlog.get_logger("opsagent.dispatch")

DRY_RUN_PREFIX = "[DryRun] Not executed (policy: dry_run). Would do: "
"""How the observation of a side effect the `dry_run` policy did not run begins (what it would do follows)."""


@dataclass(frozen=True, slots=True)
class DispatchResult:
    """The outcome of one call: the redacted output text or a typed error, and any approval decision."""

    text: str
    error: StepError | None = None
    decision: Approved | Denied | Deferred | None = None
    ms: float = 0.0
    headline: str = ""
    """The outcome in one line for people, when the tool returned a `ToolOutput` with one (redacted)."""
    links: tuple[SourceLink, ...] = ()
    more: str = ""
    """What the tool's digest left out (`ToolOutput.more`, redacted): kept behind the step's handle, not shown."""


class Dispatcher:
    """Runs tool calls for one run under its policy, approvals, rate limits and deadline."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        policy: SideEffectPolicy,
        confirm: ConfirmHook | None,
        redactor: Redactor,
        control: RunControl,
        calls_so_far: Counter[str] | None = None,
    ) -> None:
        self._registry = registry
        self._policy = policy
        self._confirm = confirm
        self._redactor = redactor
        self._control = control
        self._calls: Counter[str] = Counter(calls_so_far or {})
        """Calls per tool for rate limits; a resumed run starts from what its trace already used."""

    async def dispatch(
        self, call: ToolCall, ctx: CallContext, *, decision: Approved | Denied | None = None
    ) -> DispatchResult:
        """Run one call and return its outcome; never raises.

        `decision` settles a call that earlier paused for approval (a resumed run).
        """
        started = time.perf_counter()
        tool = self._registry.get(call.name)
        if tool is None:
            available = ", ".join(f"'{n}'" for n in self._registry.names()) or "none"
            return self._fail(UNKNOWN_TOOL.error(ErrorKind.UNKNOWN_TOOL, name=call.name, available=available))
        try:
            args = tool.args_model.model_validate(call.args)
        except ValidationError as exc:
            problems = "\n".join(f"- {'.'.join(map(str, e['loc'])) or '(arguments)'}: {e['msg']}" for e in exc.errors())
            schema = render_signature(tool.spec)
            return self._fail(BAD_ARGS.error(ErrorKind.BAD_ARGS, name=call.name, problems=problems, schema=schema))
        if tool.side_effect and (unseen := list(unseen_characters(call.args))):
            found = "; ".join(unseen[:5]) + (f"; and {len(unseen) - 5} more" if len(unseen) > 5 else "")
            return self._fail(UNSEEN_ARGS.error(ErrorKind.BAD_ARGS, name=call.name, found=found))
        limit = tool.max_calls_per_run
        if limit is not None and self._calls[tool.name] >= limit:
            return self._fail(RATE_LIMITED.error(ErrorKind.RATE_LIMITED, name=tool.name, limit=limit))
        self._calls[tool.name] += 1
        kwargs = vars(args)  # the validated fields, without pydantic's slow __iter__
        if tool.context_param is not None:
            kwargs = {**kwargs, tool.context_param: replace(ctx, redactor=self._redactor)}
        handler = tool.handler
        outcome: Approved | Denied | Deferred | None = None
        if tool.side_effect:
            gate = await self._gate(tool, call, ctx, decision)
            if isinstance(gate, DispatchResult):
                return gate
            handler, outcome = gate
        done = await self._execute(tool, handler, kwargs)
        ms = (time.perf_counter() - started) * 1000
        result = DispatchResult(
            done.text, done.error, outcome, ms, done.headline, done.links, done.more
        )  # `replace` is slow
        if tool.side_effect:
            log.info(
                "side_effect_dispatched",
                run_id=ctx.run_id,
                step=ctx.step,
                tool=tool.name,
                args_hash=call.args_hash(),
                approved_by=outcome.by if isinstance(outcome, Approved) else None,
                dry_run=outcome is None,
                error=result.error.kind if result.error else None,
            )
        return result

    def is_read(self, call: ToolCall) -> bool:
        """Whether the call names a known tool without side effects: one that may run alongside other reads."""
        tool = self._registry.get(call.name)
        return tool is not None and not tool.side_effect

    async def dispatch_reads(self, calls: Sequence[tuple[ToolCall, CallContext]]) -> list[DispatchResult]:
        """Run read-only calls at once and return their outcomes in the order given; never raises.

        Each call is dispatched as alone (validation, rate limit, its own time limit under the run's deadline,
        redaction); one failing is its own outcome and leaves the others be. Side-effect calls never come here:
        they run one at a time, after the reads of their turn."""
        assert all(self.is_read(call) for call, _ in calls), "only read-only calls run in parallel"
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(self.dispatch(call, ctx)) for call, ctx in calls]
        return [task.result() for task in tasks]

    async def _gate(
        self, tool: Tool, call: ToolCall, ctx: CallContext, decision: Approved | Denied | None
    ) -> DispatchResult | tuple[Any, Approved | None]:
        """Policy and approval for a side-effect call: a refusal, or the handler to run and why."""
        refusal = self._policy.refusal(tool.name)
        if refusal is not None:
            return self._deny(tool, call, ctx, refusal, None)
        if self._policy.mode is SideEffectMode.DRY_RUN:
            return _dry_run(tool), None
        if decision is None:
            if self._confirm is None:
                return self._deny(tool, call, ctx, NO_CONFIRM_REASON, None)
            request = ApprovalRequest(
                run_id=ctx.run_id,
                step=ctx.step,
                call=call,
                args_hash=call.args_hash(),
                thought=ctx.thought,
                summary=tool.summary,
            )
            try:
                async with self._control.paused():
                    decision_or_deferred = await self._confirm(request)
            except TimeoutError as exc:
                if self._control.cancelled:
                    return self._cancelled(tool.name)
                return self._deny(tool, call, ctx, f"the approval request failed ({type(exc).__name__})", None)
            except Exception as exc:
                return self._deny(tool, call, ctx, f"the approval request failed ({type(exc).__name__}: {exc})", None)
            if isinstance(decision_or_deferred, Deferred):
                log.info(
                    "approval_deferred",
                    run_id=ctx.run_id,
                    step=ctx.step,
                    tool=tool.name,
                    approval_id=decision_or_deferred.approval_id,
                )
                return DispatchResult(text="", decision=decision_or_deferred)
            decision = decision_or_deferred
        match decision:
            case Denied():
                return self._deny(tool, call, ctx, f"denied by {decision.by}: {decision.reason}", decision)
            case Approved() if decision.args_hash != call.args_hash():
                return self._deny(tool, call, ctx, "the approval was given for different arguments", decision)
            case Approved():
                log.info(
                    "approval_granted",
                    run_id=ctx.run_id,
                    step=ctx.step,
                    tool=tool.name,
                    args_hash=decision.args_hash,
                    approved_by=decision.by,
                )
                return tool.handler, decision
            case _:
                return self._deny(tool, call, ctx, f"the approver returned no decision ({decision!r})", None)

    async def _execute(self, tool: Tool, handler: Any, kwargs: dict[str, Any]) -> DispatchResult:
        scope = self._control.limit(tool.timeout)
        started = time.perf_counter()
        try:
            with scope:
                value = await handler(**kwargs)
        except TimeoutError as exc:
            if self._control.cancelled:
                return self._cancelled(tool.name)
            if not scope.expired:  # the tool's own TimeoutError, not ours: an exception like any other
                return self._exception(tool, exc)
            seconds = round(time.perf_counter() - started, 2)
            words: Words = DEADLINE if self._control.left() <= 0 else TIMEOUT
            shown = seconds if words is DEADLINE else tool.timeout
            return self._fail(words.error(ErrorKind.TIMEOUT, name=tool.name, seconds=shown))
        except Exception as exc:
            return self._exception(tool, exc)
        # Well-formed first: a log line's lone surrogate must not make the trace unwritable.
        if isinstance(value, ToolOutput):
            return DispatchResult(
                text=self._clean(serialise_output(value.text)),
                headline=self._clean(" ".join(value.headline.split())),
                links=tuple(SourceLink(self._clean(link.label), self._clean(link.url)) for link in value.links),
                more=self._clean(value.more) if value.more else "",
            )
        return DispatchResult(text=self._clean(serialise_output(value)))

    def _clean(self, text: str) -> str:
        """Text as anyone may see it: well-formed, then redacted."""
        return self._redactor.redact(wellformed(text))

    def _exception(self, tool: Tool, exc: Exception) -> DispatchResult:
        detail = self._redactor.redact(wellformed(str(exc))) or "(no message)"
        if isinstance(exc, ToolFailure):
            hint = self._redactor.redact(wellformed(exc.hint))
            return self._fail(FAILURE.error(ErrorKind.EXCEPTION, name=tool.name, detail=detail, hint=hint))
        return self._fail(EXCEPTION.error(ErrorKind.EXCEPTION, name=tool.name, type=type(exc).__name__, detail=detail))

    def _deny(
        self, tool: Tool, call: ToolCall, ctx: CallContext, reason: str, decision: Denied | Approved | None
    ) -> DispatchResult:
        log.info(
            "side_effect_refused",
            run_id=ctx.run_id,
            step=ctx.step,
            tool=tool.name,
            args_hash=call.args_hash(),
            reason=reason,
        )
        error = DENIED.error(ErrorKind.DENIED, name=tool.name, reason=reason)
        return DispatchResult(text=error.render(), error=error, decision=decision)

    def _cancelled(self, name: str) -> DispatchResult:
        return self._fail(CANCELLED.error(ErrorKind.CANCELLED, name=name, reason=self._control.cancel_reason))

    @staticmethod
    def _fail(error: StepError) -> DispatchResult:
        return DispatchResult(text=error.render(), error=error)


def serialise_output(value: Any) -> str:
    """Tool results as text: strings as they are, models and containers as compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError) as exc:
        return f"{value!r} (not JSON-serialisable: {exc})"


def _dry_run(tool: Tool) -> Any:
    """A stand-in handler that reports what the side-effect tool would do, and does nothing. A preview that returns
    a `ToolOutput` keeps its headline and links for people; the model reads its text behind the same prefix."""

    async def dry_run(**kwargs: Any) -> str | ToolOutput:
        would = await tool.preview(**kwargs) if tool.preview else {"tool": tool.name, "args": kwargs}
        if isinstance(would, ToolOutput):
            return replace(would, text=DRY_RUN_PREFIX + would.text)
        return DRY_RUN_PREFIX + serialise_output(would)

    return dry_run
