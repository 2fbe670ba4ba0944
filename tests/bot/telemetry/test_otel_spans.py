"""GenAI spans of real runs: their structure in the SDK's in-memory exporter, and the OTLP/HTTP path to a real receiver.

The runs are real kernel runs with a strict scripted model, fed to the observer through the `RunObserver` seam.
"""

from __future__ import annotations

import asyncio

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from bot.runs.active import ActiveRun
from bot.telemetry.spans import RunSpans, spans_from_env
from kernel import Agent, RunControl, ScriptedModel, ToolRegistry, native_turn, new_run_id
from testkit.fakes.otlp_receiver import OtlpReceiver


def incident_tools() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register
    async def query_metrics(service: str) -> str:
        """Query a service's 5xx rate."""
        return f"{service} 5xx jumped from 0.10% to 12.0% at t-10m"

    @registry.register
    async def search_logs(service: str) -> str:
        """Search a service's logs."""
        raise ConnectionError("loki: connection refused")

    return registry


SCRIPT = [
    native_turn(("query_metrics", {"service": "order-service"}), ("search_logs", {"service": "order-service"})),
    native_turn(("finish", {"answer": "v2.14.0 broke checkout (step 1)."}), start_id=3),
]


async def traced_run(observer) -> ActiveRun:
    """One real run of the kernel, each of its events handed to `observer` as the bot's service does."""
    run = ActiveRun(
        run_id=new_run_id(), channel="C0INCIDENT", thread_ts="1.000100", requested_by="U0BOB", control=RunControl()
    )
    agent = Agent(llm=ScriptedModel(SCRIPT, model="gpt-test"), tools=incident_tools())
    async for event in agent.events("why 5xx?", control=run.control, run_id=run.run_id):
        observer.observe(run, event)
    return run


async def test_a_run_becomes_an_agent_span_with_chat_and_tool_children():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    run = await traced_run(RunSpans(provider, provider_name="openai"))
    spans = exporter.get_finished_spans()
    by_name = {s.name: s for s in spans}
    assert sorted(by_name) == [
        "chat gpt-test",
        "execute_tool query_metrics",
        "execute_tool search_logs",
        "invoke_agent opsagent",
    ]
    assert len(spans) == 5  # two model calls

    agent = by_name["invoke_agent opsagent"]
    assert agent.parent is None
    assert agent.kind is SpanKind.INTERNAL
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert agent.attributes["gen_ai.agent.name"] == "opsagent"
    assert agent.attributes["gen_ai.provider.name"] == "openai"
    assert agent.attributes["gen_ai.request.model"] == "gpt-test"
    assert agent.attributes["gen_ai.conversation.id"] == run.run_id
    assert agent.attributes["gen_ai.usage.input_tokens"] > 0
    assert agent.status.status_code is StatusCode.UNSET

    chats = [s for s in spans if s.name == "chat gpt-test"]
    tools = [s for s in spans if s.name.startswith("execute_tool")]
    for child in [*chats, *tools]:
        assert child.parent is not None
        assert child.parent.span_id == agent.context.span_id
        assert child.context.trace_id == agent.context.trace_id
        assert agent.start_time <= child.start_time <= child.end_time <= agent.end_time
    assert all(c.kind is SpanKind.CLIENT and c.attributes["gen_ai.operation.name"] == "chat" for c in chats)
    assert chats[0].end_time <= chats[1].start_time  # the second call was made after the first answered

    ok, failed = by_name["execute_tool query_metrics"], by_name["execute_tool search_logs"]
    assert ok.attributes["gen_ai.operation.name"] == "execute_tool"
    assert ok.attributes["gen_ai.tool.name"] == "query_metrics"
    assert ok.attributes["gen_ai.tool.call.id"] == "call_1"
    assert ok.status.status_code is StatusCode.UNSET
    assert "error.type" not in ok.attributes
    assert failed.attributes["gen_ai.tool.call.id"] == "call_2"
    assert failed.attributes["error.type"] == "exception"
    assert failed.status.status_code is StatusCode.ERROR
    assert chats[0].end_time <= ok.start_time  # tools run after the model asked for them
    assert ok.end_time <= failed.end_time


async def test_a_failed_run_marks_the_agent_span_with_its_stop_reason():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    run = ActiveRun(run_id=new_run_id(), channel="C1", thread_ts="1.1", requested_by="U1", control=RunControl())
    agent = Agent(
        llm=ScriptedModel(["Let me check the logs."] * 3, model="gpt-test"), tools=incident_tools(), salvage=False
    )
    observer = RunSpans(provider, provider_name="openai")
    async for event in agent.events("why?", control=run.control, run_id=run.run_id):
        observer.observe(run, event)
    (span,) = [s for s in exporter.get_finished_spans() if s.name.startswith("invoke_agent")]
    assert span.attributes["error.type"] == "unparsable_exhausted"
    assert span.status.status_code is StatusCode.ERROR
    assert not [s for s in exporter.get_finished_spans() if s.name.startswith("execute_tool")]


def test_without_an_otlp_endpoint_nothing_is_traced(monkeypatch):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    assert spans_from_env("openai") is None


async def test_spans_reach_a_real_otlp_http_receiver(monkeypatch):
    async with OtlpReceiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
        monkeypatch.setenv("OTEL_SERVICE_NAME", "opsagent-test")
        observer = spans_from_env("anthropic")
        assert observer is not None
        run = await traced_run(observer)
        await asyncio.to_thread(observer.close)  # flushes the batch; the exporter posts from its own thread
        spans = receiver.spans()
    assert receiver.content_types == ["application/x-protobuf"] * len(receiver.requests)
    names = sorted(s.name for s in spans)
    assert names == [
        "chat gpt-test",
        "chat gpt-test",
        "execute_tool query_metrics",
        "execute_tool search_logs",
        "invoke_agent opsagent",
    ]
    agent = next(s for s in spans if s.name == "invoke_agent opsagent")
    attributes = {a.key: a.value for a in agent.attributes}
    assert attributes["gen_ai.provider.name"].string_value == "anthropic"
    assert attributes["gen_ai.conversation.id"].string_value == run.run_id
    assert all(s.parent_span_id == agent.span_id for s in spans if s is not agent)
    resource = {a.key: a.value.string_value for a in receiver.requests[0].resource_spans[0].resource.attributes}
    assert resource["service.name"] == "opsagent-test"


@pytest.mark.parametrize("variable", ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"])
def test_either_endpoint_variable_turns_tracing_on(monkeypatch, variable):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.setenv(variable, "http://127.0.0.1:9/v1/traces")
    observer = spans_from_env("openai")
    assert isinstance(observer, RunSpans)
    observer.close()
