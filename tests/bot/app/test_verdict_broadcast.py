"""The channel sees the verdict: a mention's run ends with its one-line verdict (status, confidence, root cause, a
link to the thread) sent to the channel too, as Slack's `reply_broadcast` of the last reply; `[slack]
broadcast_verdict = false` keeps it in the thread. Read in the fake Slack as the channel shows it
(`conversations.history`). An alert's run never broadcasts (tests/bot/alerts/test_alerts.py)."""

from __future__ import annotations

import pytest

from kernel import text_turn
from testkit.slack_bot import BOB, CHANNEL, HttpHarness

CHECK = text_turn("query_metrics", "Hypothesis: v2.14.0 broke checkout (likely)", service="order-service")
ANSWER = text_turn(
    "finish",
    summary="v2.14.0 broke checkout",
    root_cause="v2.14.0 shrank the DB pool to 5 connections",
    confidence="confirmed",
    evidence=[{"claim": "5xx jumped from 0.10% to 12.0% at t-10m", "steps": [1]}],
)
ASKED = "order-service 5xx at 12%, find the root cause"


def permalink(ts: str) -> str:
    return f"https://opsagent-test.slack.com/archives/{CHANNEL}/p{ts.replace('.', '')}"


async def channel_texts(harness: HttpHarness) -> list[str]:
    """What the channel shows at its top level, oldest first, read through the Web API as a Slack client would."""
    history = await harness.slack.client().conversations_history(channel=CHANNEL)
    return [message["text"] for message in reversed(history["messages"])]


async def last_reply(harness: HttpHarness, ts: str):
    await harness.ended(ts)
    return await harness.until(lambda: harness.thread(ts)[-1].text and harness.thread(ts)[-1], "the last reply")


async def test_the_verdict_of_a_mention_reaches_the_channel_with_a_link_to_its_thread(harness, script) -> None:
    script.append([CHECK, ANSWER])
    ts = await harness.mention(ASKED)
    reply = await last_reply(harness, ts)

    verdict = (
        "✅ *Root cause found* · confidence *confirmed* — v2.14.0 shrank the DB pool to 5 connections · "
        f"<{permalink(ts)}|Open the thread>"
    )
    assert reply.text == verdict
    assert reply.reply_broadcast
    assert await channel_texts(harness) == [harness.thread(ts)[0].text, verdict], "the mention, then the verdict"
    thread = harness.thread(ts)
    assert thread[-2].files, "the trace file comes just before it, in the thread only"
    assert not thread[-2].text
    assert sum(m.reply_broadcast for m in thread) == 1, "the steps and the summary stay in the thread"


async def test_a_follow_up_in_the_thread_broadcasts_its_own_verdict(harness, script) -> None:
    script.extend([[CHECK, ANSWER], [text_turn("finish", answer="Still v2.14.0: the pool is at 5.")]])
    ts = await harness.mention(ASKED)
    await last_reply(harness, ts)
    await harness.mention("is it still the deploy?", thread_ts=ts, user=BOB)
    await harness.until(lambda: sum(m.reply_broadcast for m in harness.thread(ts)) == 2, "the follow-up's verdict")
    *_, follow_up = await channel_texts(harness)
    assert follow_up == (
        "❔ *Inconclusive* · confidence *inconclusive (derived)* — Still v2.14.0: the pool is at 5. · "
        f"<{permalink(ts)}|Open the thread>"
    ), "a follow-up that checked nothing: no step shows what it says"


@pytest.mark.parametrize("slack_settings", [{"broadcast_verdict": False}], indirect=True)
async def test_broadcast_verdict_false_keeps_the_verdict_in_the_thread(harness, script) -> None:
    script.append([CHECK, ANSWER])
    ts = await harness.mention(ASKED)
    reply = await last_reply(harness, ts)

    assert reply.files, "the one last reply carries the trace"
    assert reply.text == (
        "✅ *Root cause found* · confidence *confirmed* — v2.14.0 shrank the DB pool to 5 connections · the verdict "
        "is at the top of this thread."
    )
    assert not reply.reply_broadcast
    assert await channel_texts(harness) == [harness.thread(ts)[0].text], "the channel shows the mention only"
