"""OpenTelemetry spans of each run, after the GenAI semantic conventions: `invoke_agent`, `chat`, `execute_tool`.

Built from the kernel's event stream with explicit start and end times (the kernel knows nothing of OpenTelemetry):
one `invoke_agent opsagent` span per run, with a `chat {model}` child per model call and an `execute_tool {tool}`
child per tool call. Exported over OTLP/HTTP only when `OTEL_EXPORTER_OTLP_ENDPOINT` is set; otherwise none is made.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import assert_never

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from bot.runs.active import ActiveRun
from kernel import (
    FINISH_TOOL,
    Event,
    GuidanceTaken,
    LLMResponse,
    RunFinished,
    RunResult,
    RunStarted,
    Step,
    StepCompleted,
    StepStarted,
)

AGENT_NAME = "opsagent"
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
"""Either one turns tracing on; the exporter reads them (and OTEL_EXPORTER_OTLP_HEADERS etc.) itself."""
MAX_OPEN_RUNS = 1_000
"""Runs whose spans wait for their `RunFinished`; a run that crashed never sends one, so the oldest are dropped."""


@dataclass
class _OpenRun:
    """What a run's spans need that its trace lacks: when it started and when each step ended, in ns."""

    started_ns: int
    steps: list[tuple[Step, int]] = field(default_factory=list)


class RunSpans:
    """A `RunObserver` that turns each finished run into GenAI spans on `tracer_provider`."""

    def __init__(self, tracer_provider: TracerProvider, *, provider_name: str) -> None:
        self._provider = tracer_provider
        self._tracer = tracer_provider.get_tracer("opsagent")
        self._provider_name = provider_name
        self._open: OrderedDict[str, _OpenRun] = OrderedDict()

    def observe(self, run: ActiveRun, event: Event) -> None:
        """Note the times the trace does not keep; at `RunFinished`, emit the run's spans."""
        match event:
            case RunStarted():
                self._open[run.run_id] = _OpenRun(time.time_ns())
                while len(self._open) > MAX_OPEN_RUNS:
                    self._open.popitem(last=False)
            case StepCompleted(step=step):
                if (opened := self._open.get(run.run_id)) is not None and not step.pending:
                    opened.steps.append((step, time.time_ns()))
            case RunFinished(result=result):
                opened = self._open.pop(run.run_id, None) or _OpenRun(_ns(result.started_at))
                self._emit(run, result, opened, time.time_ns())
            case StepStarted() | GuidanceTaken():
                pass
            case _:
                assert_never(event)

    def close(self) -> None:
        """Export what is buffered and stop (blocking: call it from a thread in async code)."""
        self._provider.shutdown()

    def _emit(self, run: ActiveRun, result: RunResult, opened: _OpenRun, ended_ns: int) -> None:
        common: dict[str, AttributeValue] = {
            "gen_ai.provider.name": self._provider_name,
            "gen_ai.request.model": result.model,
            "gen_ai.conversation.id": result.run_id,
            "gen_ai.agent.name": AGENT_NAME,
        }
        agent = self._tracer.start_span(
            f"invoke_agent {AGENT_NAME}",
            kind=SpanKind.INTERNAL,
            start_time=opened.started_ns,
            attributes={
                **common,
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.usage.input_tokens": result.usage.prompt_tokens,
                "gen_ai.usage.output_tokens": result.usage.completion_tokens,
                "opsagent.stop_reason": str(result.stop_reason),
                "opsagent.slack.channel": run.channel,
                "opsagent.slack.thread_ts": run.thread_ts,
            },
        )
        if not result.ok:
            agent.set_attribute("error.type", str(result.stop_reason))
            agent.set_status(Status(StatusCode.ERROR, result.detail[:200]))
        parent = trace.set_span_in_context(agent)
        for turn in result.turns:
            if turn.started_at is not None:  # traces from before model calls were timed have no times to show
                self._chat(turn, common, parent)
        for step, step_ended_ns in opened.steps:
            if step.call is not None and step.call.name != FINISH_TOOL:
                self._tool(step, step_ended_ns, common, parent)
        agent.end(end_time=ended_ns)

    def _chat(self, turn: LLMResponse, common: Mapping[str, AttributeValue], parent: Context) -> None:
        assert turn.started_at is not None
        started = _ns(turn.started_at)
        model = common["gen_ai.request.model"]
        attributes: dict[str, AttributeValue] = {**common, "gen_ai.operation.name": "chat"}
        if turn.model:
            attributes["gen_ai.response.model"] = turn.model
        if turn.usage is not None:
            attributes["gen_ai.usage.input_tokens"] = turn.usage.prompt_tokens
            attributes["gen_ai.usage.output_tokens"] = turn.usage.completion_tokens
        span = self._tracer.start_span(
            f"chat {model}", context=parent, kind=SpanKind.CLIENT, start_time=started, attributes=attributes
        )
        span.end(end_time=started + int(turn.ms * 1_000_000))

    def _tool(self, step: Step, ended_ns: int, common: Mapping[str, AttributeValue], parent: Context) -> None:
        assert step.call is not None
        attributes: dict[str, AttributeValue] = {
            **common,
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": step.call.name,
            "gen_ai.tool.type": "function",
            "opsagent.step.index": step.index,
        }
        if step.call.id:
            attributes["gen_ai.tool.call.id"] = step.call.id
        if step.approval is not None:
            attributes["opsagent.approval.decision"] = step.approval.decision
        span = self._tracer.start_span(
            f"execute_tool {step.call.name}",
            context=parent,
            kind=SpanKind.INTERNAL,
            start_time=ended_ns - int(step.ms * 1_000_000),
            attributes=attributes,
        )
        if step.error is not None:
            span.set_attribute("error.type", str(step.error))
            span.set_status(Status(StatusCode.ERROR))
        span.end(end_time=ended_ns)


def spans_from_env(provider_name: str) -> RunSpans | None:
    """Spans exported over OTLP/HTTP (protobuf) when an OTLP endpoint is configured; None, and no cost, otherwise."""
    if not any(os.environ.get(name) for name in ENDPOINT_VARIABLES):
        return None
    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME") or AGENT_NAME})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return RunSpans(provider, provider_name=provider_name)


def _ns(moment: datetime) -> int:
    """Nanoseconds since the epoch, without the rounding of a float timestamp."""
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1_000
