"""A run that ends with a plain prose answer citing nothing, over observations that hold its numbers, gets a verdict
like a structured one: a confidence the evidence gate derived (and says so), evidence lines linked to the step whose
output shows each, the first sentence as the summary and the rest as a normal paragraph, not one bold wall of text.
Read in the fake Slack as the thread shows it, with a trace viewer configured so that steps are links."""

from __future__ import annotations

import json
import re

import pytest

from kernel import text_turn
from testkit.slack_bot import CHANNEL

VIEWER = "https://viewer.example/runs"
CHECK = text_turn("query_metrics", "Known: only the report.", service="order-service")
"""Its output: "order-service 5xx jumped from 0.10% to 12.0% at t-10m" (testkit.slack_bot.IncidentBot)."""
SUMMARY = "The order-service 5xx rate jumped from 0.1% to 12% at t-10m."
PROSE = (
    f"{SUMMARY} It has stayed at 12.0% since, so this is no blip. Nothing else I checked points elsewhere.\n\n"
    "I recommend rolling back order-service to v2.13.2 if you agree."
)
"""A plain answer, as most models end with native tool calling: no labels, no step cited."""


@pytest.fixture
def app_options():
    return {"trace_link": lambda run_id: f"{VIEWER}/{run_id}"}


def bold_spans(mrkdwn: str) -> list[str]:
    return re.findall(r"(?<![\w*])\*([^*\n]+)\*(?![\w*])", mrkdwn)


async def test_a_prose_answer_citing_nothing_gets_a_derived_confidence_and_evidence_linked_to_its_step(harness, script):
    script.append([CHECK, PROSE, PROSE])  # the kernel asks once whether the prose is the answer; it is
    ts = await harness.mention("order-service 5xx at 12%, find the root cause")
    verdict = await harness.ended(ts)
    trace = next(f for f in harness.slack.files.values() if f.thread_ts == ts)
    run_id = json.loads(trace.content)["run_id"]
    texts = [block["text"]["text"] for block in verdict.blocks if block["type"] == "section"]

    head = texts[0]
    assert head.startswith(
        "🟡 *Likely cause* · confidence *likely (derived)* · _2 of 3 claims grounded in the steps, the root cause among "
        "them_\n"
    )
    assert f"*{SUMMARY}*" in head, "the first sentence is the summary"

    evidence = next(text for text in texts if text.startswith("*Evidence*"))
    assert evidence == (
        f"*Evidence*\n• It has stayed at 12.0% since, so this is no blip. · found in step <{VIEWER}/{run_id}#step-1|1>"
    ), "linked to the step whose output holds 12.0%"

    rest = texts[texts.index(evidence) + 1]
    assert rest == (
        "Nothing else I checked points elsewhere.\n\nI recommend rolling back order-service to v2.13.2 if you agree."
    ), "the rest as a normal paragraph"
    assert all(len(span) <= len(SUMMARY) for text in texts for span in bold_spans(text)), "no bold wall of text"
    assert "💬" not in str(verdict.blocks)

    reply = await harness.until(lambda: harness.thread(ts)[-1].text, "the last reply")
    assert reply.startswith(f"🟡 *Likely cause* · confidence *likely (derived)* — {SUMMARY} · ")
    assert harness.slack.message(CHANNEL, verdict.ts).text == f"🟡 Likely cause: {SUMMARY}"


async def test_a_prose_answer_whose_numbers_no_step_shows_is_inconclusive_by_derivation(harness, script):
    wrong = "The order-service 5xx rate jumped to 31% at t-25m. It has stayed at 31% since."
    script.append([CHECK, wrong, wrong])
    ts = await harness.mention("order-service 5xx at 12%, find the root cause")
    verdict = await harness.ended(ts)
    head = verdict.blocks[0]["text"]["text"]
    assert head.startswith("❔ *Inconclusive* · confidence *inconclusive (derived)* · _0 of 2 claims grounded in the ")
    assert "*Evidence*" not in str(verdict.blocks), "nothing the steps show: no evidence line"
