"""A step in the thread: one scannable unit (status, the call in a few words, the outcome, links, the thought in a
grey line), never the raw observation; hostile tool output escaped; Slack's limits kept whatever the sizes."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from bot.slack.blocks import no_step_urls
from bot.slack.steps import step_message
from bot.verdict import step_line
from kernel import ErrorKind, SourceLink, Step, ToolCall
from samples.slack_messages import HOSTILE, adversarial, assert_no_hostile_tokens, assert_within_limits

CHEAP = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LOGS = ToolCall(name="search_logs", args={"service": "gateway", "since": "15m"})


def viewer(index: int) -> str:
    return f"https://ops.example/runs/r1#step-{index}"


def test_a_step_is_one_line_with_its_links_and_a_grey_thought():
    step = Step(
        index=2,
        turn=1,
        call=LOGS,
        thought="Known: 5xx rose (step 1). Why: who returns them?",
        observation="gateway, level=error: 1,140 lines\n" + "ERROR upstream timeout\n" * 300,
        headline="217 × 504 from checkout (20:14–20:25)",
        links=(SourceLink("logs", "https://grafana.example/explore?q=1&r=2"),),
        ms=2500,
    )
    message = step_message(step_line(step), viewer)
    assert message.blocks == [
        {
            "type": "section",
            "text": {
                "type": "mrkdwn",
                "text": "✓ *2* `search_logs gateway 15m` — 217 × 504 from checkout (20:14–20:25)  "
                "<https://grafana.example/explore?q=1&amp;r=2|logs> · <https://ops.example/runs/r1#step-2|step>",
            },
            "block_id": "step.2.0",
        },
        {
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": "Known: 5xx rose (step 1). Why: who returns them? · ⏱ 2.5 s"}],
            "block_id": "step.2.1",
        },
    ]
    assert message.text == "✓ 2 search_logs gateway 15m — 217 × 504 from checkout (20:14–20:25)"
    assert "upstream timeout" not in json.dumps(message.blocks), "the raw observation stays in the viewer"
    assert_within_limits(message)


def test_without_a_headline_a_step_shows_the_first_line_of_its_output_and_no_viewer_link_without_a_viewer():
    step = Step(index=1, turn=0, call=LOGS, observation="\n\ngateway: 3 lines\nrest", ms=12)
    [line] = step_message(step_line(step), no_step_urls).blocks
    assert line["text"]["text"] == "✓ *1* `search_logs gateway 15m` — gateway: 3 lines"


@pytest.mark.parametrize(
    ("step", "first"),
    [
        (
            Step(
                index=3, turn=2, call=LOGS, error=ErrorKind.TIMEOUT, observation="'search_logs' timed out after 30 s."
            ),
            "✗ *3* `search_logs gateway 15m` — 'search_logs' timed out after 30 s.",
        ),
        (
            Step(index=4, turn=3, error=ErrorKind.FORMAT, observation="[FormatError] no action"),
            "⚠️ *4* _replied without a usable action_",
        ),
        (Step(index=5, turn=4, observation="Is this your answer?"), "💬 *5* _answered in prose; asked to confirm_"),
    ],
    ids=["failed", "unusable", "prose"],
)
def test_failures_and_replies_without_a_call_say_what_happened(step, first):
    message = step_message(step_line(step), no_step_urls)
    assert message.blocks[0]["text"]["text"] == first
    assert_within_limits(message)


def test_hostile_tool_output_thought_and_links_are_escaped_in_a_step():
    step = Step(
        index=1,
        turn=0,
        call=ToolCall(name="search_logs", args={"query": HOSTILE}),
        thought=HOSTILE,
        observation=HOSTILE,
        headline=HOSTILE,
        links=(SourceLink(HOSTILE, "https://logs.example/?q=<!channel>|x"),),
    )
    for line in (step_line(step), step_line(Step(index=2, turn=0, call=step.call, observation=HOSTILE))):
        message = step_message(line, viewer)
        assert_within_limits(message)
        assert_no_hostile_tokens(message)


@CHEAP
@given(thought=adversarial, observation=adversarial, arg=adversarial, headline=adversarial, label=adversarial)
def test_step_messages_stay_within_limits(thought: str, observation: str, arg: str, headline: str, label: str) -> None:
    step = Step(
        index=7,
        turn=3,
        thought=thought,
        call=ToolCall(name=arg[:80] or "t", args={"q": arg}),
        observation=observation,
        headline=headline,
        links=(SourceLink(label, f"https://x.example/{arg[:3000]}"),) * 4,
        ms=len(arg),
    )
    assert_within_limits(step_message(step_line(step), viewer))
