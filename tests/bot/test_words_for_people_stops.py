"""Words for people, words for the model, where a run stops on its own: a tool failure whose advice names a tool or
an argument, a reply the kernel cannot read as a call, and the same call repeated until the loop guard stops the
run. The model reads what to do next; Slack, the terminal, the viewer and the step lines say what happened, and
the scan of `testkit.model_words` finds each hint (so it would find one that reached a person)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from bot.cli.terminal import Terminal
from bot.slack.blocks import no_step_urls
from bot.slack.summary import final_summary
from bot.verdict import step_line, verdict_of
from bot.viewer.page import run_page
from kernel import (
    Agent,
    ErrorKind,
    RunFinished,
    RunResult,
    ScriptedModel,
    StepCompleted,
    StopReason,
    ToolRegistry,
    text_turn,
)
from opsagent_tools.metrics import MetricsSettings, metrics_tools
from opsagent_tools.repos import RepoSettings, repo_tools
from samples.slack_messages import texts_of
from testkit.fakes.model_server import closed_port_url
from testkit.model_words import model_directed

PING = text_turn("deploy_status", "Is the deploy done?", service="order-service")
STOPPING = [
    text_turn("query_metrics", "Every second of a week.", service="order-service", window="7d", step="1s"),
    text_turn("read_repo_file", "The billing repository.", path="README.md", repo="billing"),
    'The status next:\n```json\n{"args": {"service": "order-service"}}\n```',
    PING,
    PING,
    PING,
    PING,
]


@pytest.fixture
def registry(tmp_path: Path) -> ToolRegistry:
    """The real metrics tools over a port nothing listens on (the step is refused before any request), the real
    repository tools with one repository configured, and a status tool that always answers the same."""
    repos = RepoSettings(repositories={"order-service": str(tmp_path)})
    registry = ToolRegistry([*metrics_tools(MetricsSettings(url=closed_port_url())), *repo_tools(repos)])

    @registry.register(summary="Say whether a service's deploy is done")
    async def deploy_status(service: str) -> str:
        """Whether the service's last deploy finished."""
        return f"{service}: deploy finished"

    return registry


async def stopping_run(registry: ToolRegistry) -> RunResult:
    model = ScriptedModel(STOPPING)
    result = await Agent(llm=model, tools=registry, salvage=False).run("why is order-service failing?")
    model.assert_complete()
    return result


def person_facing(result: RunResult) -> dict[str, str]:
    """What each surface shows a person of `result`."""
    shown = io.StringIO()
    terminal = Terminal(Console(file=shown, width=300, color_system=None))
    for step in result.steps:
        terminal.show(StepCompleted(step))
    terminal.show(RunFinished(result))
    return {
        "slack": "\n".join(texts_of(final_summary(verdict_of(result), step_url=no_step_urls))),
        "step lines": "\n".join(step_line(step).outcome for step in result.steps),
        "terminal": shown.getvalue(),
        "viewer": run_page(result),
    }


async def test_the_model_is_told_what_to_do_and_people_what_happened(registry):
    result = await stopping_run(registry)
    assert result.stop_reason is StopReason.LOOP_DETECTED
    step, repo, unread, *looped = result.steps
    assert [s.error for s in result.steps] == [
        ErrorKind.EXCEPTION,
        ErrorKind.EXCEPTION,
        ErrorKind.FORMAT,
        None,
        *[ErrorKind.LOOP_GUARD] * 3,
    ]
    assert "step 1s over a 7d window gives more than 1000 points." in step.said
    assert step.hint == "Use a step of at least 10m5s, or leave step out."
    assert "No repository 'billing' is configured. Configured: order-service." in repo.said
    assert repo.hint == "Pass one of these as repo."
    assert unread.said.startswith("The model's reply had no usable action (a JSON block was found but it names no tool")
    assert unread.hint.startswith("Reply with your thought, then exactly one JSON block")
    for guarded in looped[1:]:
        assert guarded.said == "The model repeated its call of step 4 exactly; it was not run again."
        assert guarded.hint.startswith("You already made this call: use that result")
    for failed in (step, repo, unread, *looped[1:]):
        assert failed.observation.endswith(failed.hint), "the model reads the hint after what happened"
        assert model_directed(failed.said) == [], f"step {failed.index} tells people what happened"
        assert model_directed(failed.hint) != [], f"the scan knows step {failed.index}'s hint for the model's"

    surfaces = person_facing(result)
    for surface, text in surfaces.items():
        assert model_directed(text) == [], f"the {surface} shows words for the model"
    assert "The model repeated its call of step 4 exactly" in surfaces["step lines"]
    assert "The model's reply had no usable action" in surfaces["terminal"]
    assert "is configured. Configured: order-service." in surfaces["viewer"]


@pytest.mark.parametrize(
    "earlier",
    [
        "'src' is a file, not a directory; read it with read_repo_file.",
        "k8s_describe reads a pod, deployment or node, not 'service'; for workload pods use k8s_pods",
        "Several repositories are configured; pass repo as one of: order-service, wide.",
        "Prometheus did not answer within 10 s: narrow the window or raise the step",
        "Loki failed with HTTP 500: boom. Try a shorter window or a narrower query.",
        "You already made exactly this call at step 1; it was not run again.",
        "Your reply had no usable action (the reply was empty).",
        "'finish' needs your findings: at least a non-empty 'summary' (one sentence).",
        'No label "app" is on any stream. tools.logs.loki.service_label names it, so that setting may be wrong: '
        "tell the user.",
    ],
)
def test_the_scan_finds_the_advice_people_were_once_shown(earlier):
    """What a failure, the loop guard, the format error and a Loki listing said to people before their words were
    split: each is found, so advice of these kinds that reaches a person fails the suites' checks."""
    assert model_directed(earlier) != []
