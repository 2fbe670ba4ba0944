"""The status update's *Affected* line says what the run measured (each service with the change its metric
showed), never the request's words: read off the demo incident's run through the real metrics, logs and git
tools, from its trace file as `opsagent postmortem TRACE` reads one."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from bot.cli.demo import DEMO_TASK, run_demo
from bot.cli.terminal import Terminal
from bot.drafts.facts import trace_facts
from bot.drafts.status import draft_status
from kernel import RunResult
from samples.trace_runs import approve


@pytest.fixture
async def demo() -> RunResult:
    return await run_demo(None, terminal=Terminal(Console(file=io.StringIO())), confirm=approve)


async def affected(trace: RunResult) -> str:
    update = await draft_status(trace_facts(trace, "demo.json"), None)
    return update.parts["affected"]


async def test_affected_is_the_service_and_its_measured_symptom(demo) -> None:
    [metric] = [step for step in demo.steps if step.call and step.call.name == "query_metrics"]
    assert metric.headline.startswith("http_5xx_rate 0.10% → 12.0% at t-"), "the metrics tool's own headline"
    said = await affected(demo)
    assert said == "order-service: http_5xx_rate 0.10% → 12.0%."
    assert DEMO_TASK not in said
    assert "max_size 50 → 10" not in said, "a diff's change is not a symptom"


async def test_without_a_measured_symptom_it_names_the_services_the_run_read(demo) -> None:
    logs_only = demo.model_copy(update={"steps": [s for s in demo.steps if s.call and s.call.name == "search_logs"]})
    assert await affected(logs_only) == "gateway, order-service (the symptom is not measured yet)."
    nothing = demo.model_copy(update={"steps": []})
    assert await affected(nothing) == "Not established yet: no service has been checked."
