"""Words for people, words for the model: a run whose steps fail every way a step can (an unknown tool, bad
arguments, a timeout, a backend that is down, a rollback a person denied, one the policy refused, a prose answer
the kernel asked the model to confirm) tells the model what to do next in its observations, and tells people what
happened on Slack, the terminal, the trace viewer and `check`, with none of the model's hints."""

from __future__ import annotations

import asyncio
import io
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console

from bot.cli.terminal import Terminal
from bot.drafts.facts import trace_facts
from bot.drafts.postmortem import draft_postmortem
from bot.slack.blocks import no_step_urls
from bot.slack.summary import final_summary
from bot.verdict import step_line, verdict_of
from bot.viewer.page import run_page
from kernel import (
    Agent,
    ApprovalRequest,
    Denied,
    ErrorKind,
    RunFinished,
    RunResult,
    ScriptedModel,
    SideEffectMode,
    SideEffectPolicy,
    StepCompleted,
    ToolRegistry,
    text_turn,
)
from opsagent_tools.logs import LogsSettings
from opsagent_tools.logs.tools import log_tools
from opsagent_tools.toolset import ToolsSettings, check_backends
from samples.slack_messages import texts_of
from samples.trace_runs import TASK, rollback_run
from testkit.fakes.slack_api import SlackFake
from testkit.model_words import model_directed, slack_leaks

AT = datetime(2026, 11, 30, 19, 16, tzinfo=UTC)
FAILING_EVERY_WAY = [
    text_turn("no_such_tool", "A tool that is not there."),
    text_turn("query_metrics", "No service named.", window="30m"),
    text_turn("slow_query", "A query that takes too long."),
    text_turn("search_logs", "The logs, from a directory that is gone.", service="order-service"),
    text_turn("rollback_deployment", "Roll back.", service="order-service", to_version="v2.13.2"),
    "The 5xx rate jumped from 0.10% to 12.0% at t-10m; the logs could not be read, so the cause is unchecked.",
    "Yes, that is my answer.",
]
HINTS = {
    ErrorKind.UNKNOWN_TOOL: "Call one of these, or finish.",
    ErrorKind.BAD_ARGS: "Fix the arguments and call again.",
    ErrorKind.TIMEOUT: "Narrow the time window or the query, or use another tool.",
    ErrorKind.EXCEPTION: "Tell the user, and use other evidence (metrics, deploys) meanwhile.",
    ErrorKind.DENIED: "Use a read-only tool, or ask the user to authorise this action.",
}


@pytest.fixture
def registry(tools: ToolRegistry, tmp_path: Path) -> ToolRegistry:
    """tests/conftest.py's metrics and rollback, the real file log backend over a directory that does not exist,
    and a tool that always times out."""
    gone = LogsSettings(files={"directory": tmp_path / "gone"})
    registry = ToolRegistry([*log_tools(gone), *(t for t in tools if t.name != "search_logs")])

    @registry.register(timeout=0.05)
    async def slow_query() -> str:
        """Wait longer than allowed."""
        await asyncio.sleep(10)
        return "never"

    return registry


async def deny(request: ApprovalRequest) -> Denied:
    return Denied(by="U0BOB42", reason="not now")


async def failing_run(registry: ToolRegistry) -> RunResult:
    model = ScriptedModel(FAILING_EVERY_WAY)
    policy = SideEffectPolicy(mode=SideEffectMode.FULL)
    result = await Agent(llm=model, tools=registry, policy=policy, confirm=deny).run(TASK)
    model.assert_complete()
    return result


async def person_facing(result: RunResult) -> dict[str, str]:
    """What each surface shows a person of `result`."""
    shown = io.StringIO()
    terminal = Terminal(Console(file=shown, width=300, color_system=None))
    for step in result.steps:
        terminal.show(StepCompleted(step))
    terminal.show(RunFinished(result))
    verdict = verdict_of(result)
    return {
        "slack": "\n".join(texts_of(final_summary(verdict, step_url=no_step_urls))),
        "step lines": "\n".join(step_line(step).outcome for step in result.steps),
        "terminal": shown.getvalue(),
        "viewer": run_page(result),
        "postmortem draft": (await draft_postmortem(trace_facts(result, "trace.json"), None, now=AT)).markdown,
    }


async def test_each_failure_tells_the_model_what_to_do_and_people_only_what_happened(registry):
    result = await failing_run(registry)
    errors = {step.error: step for step in result.steps if step.error is not None}
    assert set(HINTS) <= set(errors), "the run fails every way it is meant to"
    for kind, hint in HINTS.items():
        step = errors[kind]
        assert step.observation.endswith(hint), f"the model reads the hint of a {kind} step"
        assert step.hint.endswith(hint), "the trace keeps the hint"
        assert step.said, "and the words for people"
        assert hint not in step.said
    assert any(step.prose for step in result.steps), "the run answered in prose and was asked to confirm"

    for surface, text in (await person_facing(result)).items():
        assert model_directed(text) == [], f"the {surface} shows words for the model"
    surfaces = await person_facing(result)
    assert "'no_such_tool'" in surfaces["step lines"], "the person reads what failed instead"
    assert "does not exist or is not a directory" in surfaces["terminal"]
    assert "denied by" in surfaces["viewer"]


async def test_a_rollback_the_policy_refused_says_so_without_the_models_hint(tools):
    result = await rollback_run(tools, SideEffectMode.READ_ONLY)
    (refused,) = [step for step in result.steps if step.error is ErrorKind.DENIED]
    assert refused.observation.endswith(HINTS[ErrorKind.DENIED])
    surfaces = await person_facing(result)
    for surface, text in surfaces.items():
        assert model_directed(text) == [], f"the {surface} shows words for the model"
    assert "read_only" in surfaces["slack"]


async def test_check_names_a_backend_that_is_down_in_a_persons_words(tmp_path):
    settings = ToolsSettings(logs=LogsSettings(files={"directory": tmp_path / "gone"}))
    (logs,) = [result for result in await check_backends(settings) if result.name == "logs (files)"]
    assert not logs.ok
    assert "does not exist or is not a directory" in logs.message
    assert model_directed(logs.message) == []


async def test_the_scan_finds_a_hint_sent_to_slack():
    """The suite-wide check (tests/conftest.py) reads what each fake Slack was sent: a hint posted is found."""
    async with SlackFake() as slack:
        await slack.client().chat_postMessage(
            channel="C1", text="'k8s_pods' failed. Tell the user, and use other evidence."
        )
        leaks = slack_leaks(slack)
        SlackFake.made.discard(slack)  # this test's leak is meant; the suite-wide check must not fail on it
    assert len(leaks) == 1
    assert leaks[0].startswith("chat.postMessage: tell the user, use other evidence: ")
    assert model_directed("The 5xx rate jumped at 19:16; the rollback ran.") == []
