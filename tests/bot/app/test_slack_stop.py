"""A Stop in the fake Slack, end to end, read as the people in the thread read it: one reply says who stopped the
run and what was known (the steps checked, the leading hypothesis), voided approvals are named only when there were
some, the summary at the top says what each step found, and a run that gave no answer shows no 👍/👎."""

from __future__ import annotations

import json

import pytest

from bot.slack.action_ids import FEEDBACK, STOP
from kernel import text_turn
from testkit.slack_bot import ALICE, ROLLBACK, HttpHarness

CHECK = text_turn("query_metrics", "Hypothesis: v2.14.0 broke checkout (likely)", service="order-service")
SLOW = text_turn("slow", seconds=60)


async def started(harness: HttpHarness, script: list, turns: list) -> tuple[str, str, str]:
    """A run of `turns` asked for by BOB, once its model has made every call: its thread, run id and summary's ts."""
    script.append(turns)
    ts = await harness.mention("order-service 5xx at 12%, find the root cause")
    summary = await harness.until(lambda: harness.summary(ts), "the summary")
    await harness.until(lambda: harness.models and harness.models[0].calls == len(turns), "the last call started")
    run_id = next(e["value"] for b in summary.blocks for e in b.get("elements", []) if e.get("action_id") == STOP)
    return ts, run_id, summary.ts


async def said_after(harness: HttpHarness, ts: str, before: int, *, replies: int) -> list:
    """What the bot posted after the first `before` posts, once the run ended and `replies` posts with words came."""
    await harness.ended(ts)
    return await harness.until(
        lambda: len(words := [m for m in harness.slack.posted[before:] if m.text]) >= replies and words,
        "the end's replies",
    )


def privately(harness: HttpHarness) -> list:
    return [e.text for e in harness.slack.ephemerals] + [r.body for r in harness.slack.responses]


async def test_a_stop_during_a_step_is_one_reply_saying_who_and_what_was_known(harness, script) -> None:
    ts, run_id, summary_ts = await started(harness, script, [CHECK, SLOW])
    before = len(harness.slack.posted)

    await harness.click(STOP, run_id, summary_ts, ts, user=ALICE)
    [reply] = await said_after(harness, ts, before, replies=1)

    posted = harness.slack.posted[before:]
    assert [bool(m.files) for m in posted] == [True, False], "the trace file, then the one reply: nothing else"
    assert reply.text == (
        f"⏹ *Stopped by <@{ALICE}>* after 2 steps · checked `query_metrics order-service` · leading hypothesis: "
        "v2.14.0 broke checkout (_likely_) · <https://opsagent-test.slack.com/archives/C0INCIDENT/p"
        f"{ts.replace('.', '')}|Open the thread>"
    )
    assert privately(harness) == [], "no ephemeral either"
    top = json.dumps(harness.summary(ts).blocks, ensure_ascii=False)
    assert f"⏹ *Stopped by <@{ALICE}>*" in top
    assert "*Leading hypothesis:* v2.14.0 broke checkout · _likely_" in top, "the top says what was known"
    assert "✓ *1* `query_metrics order-service` — order-service 5xx jumped from 0.10% to 12.0%" in top
    assert "✗ *2* `slow 60` — cut short: the run was stopped" in top
    assert FEEDBACK not in top, "no 👍/👎 for an answer the run did not give"
    assert "void" not in json.dumps([m.text for m in harness.thread(ts)]), "no approval was pending"


@pytest.mark.parametrize("slack_settings", [{"broadcast_verdict": False}], indirect=True)
async def test_a_stop_while_an_approval_waits_names_the_approval_it_voided(harness, script) -> None:
    ts, _, _ = await started(harness, script, [CHECK, ROLLBACK])
    message, _ = await harness.until(lambda: harness.approval_message(ts), "the approval message")
    before = len(harness.slack.posted)

    await harness.mention("stop", thread_ts=ts, user=ALICE)
    [reply] = await said_after(harness, ts, before, replies=1)

    assert harness.slack.posted[before:] == [reply], "one message: the reply, with the trace file"
    assert reply.files
    assert reply.text == (
        f"⏹ *Stopped by <@{ALICE}>* after 2 steps · checked `query_metrics order-service` · leading hypothesis: "
        "v2.14.0 broke checkout (_likely_) · 1 pending approval voided: step 2 "
        "`rollback_deployment order-service v2.13.2` · what each step found is at the top of this thread."
    )
    assert "the run was stopped" in json.dumps(harness.slack.message(message.channel, message.ts).blocks)
    assert harness.executed == []
    assert privately(harness) == []


async def test_a_failed_run_shows_no_rating_buttons(harness, script) -> None:
    failing = [text_turn("no_such_tool", attempt=n) for n in range(8)]  # tool errors, until the kernel gives up
    script.append([CHECK, *failing, text_turn("finish", answer="Probably v2.14.0; not checked.")])
    ts = await harness.mention("order-service 5xx at 12%, find the root cause")
    verdict = await harness.ended(ts)
    top = json.dumps(verdict.blocks, ensure_ascii=False)
    assert "❌ *Stopped: tool calls kept failing — " in top
    assert "*Leading hypothesis:* v2.14.0 broke checkout · _likely_" in top
    assert FEEDBACK not in top


async def test_an_answer_still_gets_rating_buttons(harness, script) -> None:
    script.append([CHECK, text_turn("finish", answer="**Root cause**: v2.14.0 (step 1).")])
    ts = await harness.mention("order-service 5xx at 12%, find the root cause")
    verdict = await harness.ended(ts)
    assert FEEDBACK in json.dumps(verdict.blocks)
