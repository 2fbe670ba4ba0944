"""Messages kept current through one coalescing writer each, on the fake Slack (a real HTTP server that enforces
the limits): only the latest content is written, never faster than Slack allows, and the last state always lands,
through a 429 storm too. The fake counts; no test reads a clock."""

from __future__ import annotations

import asyncio

from bot.slack.blocks import Message, section_blocks
from bot.slack.client import web_client
from bot.slack.outbox import Outbox
from bot.slack.settings import SlackSecrets
from bot.slack.updates import MessageUpdates, UpdateWindow
from testkit.fakes.slack_api import SlackFake
from testkit.fakes.slack_workspace import BOT_TOKEN

CHANNEL = "C0INCIDENT"


def content(text: str) -> Message:
    return Message(text=text, blocks=section_blocks(text))


async def posted(slack: SlackFake, count: int = 1) -> list[str]:
    """Messages to update, posted directly on the fake."""
    client = slack.client()
    return [(await client.chat_postMessage(channel=CHANNEL, text=f"m{i}"))["ts"] for i in range(count)]


def updates_of(slack: SlackFake, ts: str) -> list[str]:
    """The texts of the updates of one message that Slack accepted, in order."""
    return [c.params["text"] for c in slack.calls_to("chat.update") if c.ok and c.params.get("ts") == ts]


def refused(slack: SlackFake) -> int:
    return sum(1 for call in slack.calls_to("chat.update") if call.status == 429)


async def written(slack: SlackFake, ts: str, text: str) -> None:
    async with asyncio.timeout(20):
        while slack.message(CHANNEL, ts).text != text:  # noqa: ASYNC110 - the state lives in the fake server
            await asyncio.sleep(0.02)


async def test_a_burst_of_contents_is_written_as_the_first_and_the_latest_within_a_message_limit():
    async with SlackFake() as slack:
        slack.rate_limit("chat.update", per_second=1.0, per_message=True, burst=1)
        [ts] = await posted(slack)
        outbox = Outbox(slack.client(), interval_s=0)
        updates = MessageUpdates(outbox)
        for i in range(40):
            updates.set(CHANNEL, ts, content(f"state {i}"))
            await asyncio.sleep(0.05)  # two seconds of changes, one every 50 ms
        await written(slack, ts, "state 39")
        await updates.close()
        await outbox.close()
        texts = updates_of(slack, ts)
        assert texts[-1] == "state 39", "the last state is always written"
        assert 2 <= len(texts) <= 4, f"about one update a second, not 40: {texts}"
        assert refused(slack) == 0, "never faster than the message's limit"


async def test_updates_of_all_messages_keep_within_the_window():
    async with SlackFake() as slack:
        slack.rate_limit("chat.update", per_second=4.0, per_channel=False, burst=4)
        messages = await posted(slack, 6)
        outbox = Outbox(slack.client(), interval_s=0)
        updates = MessageUpdates(outbox, window=UpdateWindow(limit=4, window_s=1.0))
        for ts in messages:
            updates.set(CHANNEL, ts, content(f"final {ts}"))
        for ts in messages:
            await written(slack, ts, f"final {ts}")
        await updates.close()
        await outbox.close()
        assert refused(slack) == 0, "the window spaced the six updates out"
        assert [len(updates_of(slack, ts)) for ts in messages] == [1] * 6


async def test_a_routine_change_waits_and_an_urgent_one_replaces_it_at_once():
    async with SlackFake() as slack:
        [ts] = await posted(slack)
        outbox = Outbox(slack.client(), interval_s=0)
        updates = MessageUpdates(outbox)
        updates.set(CHANNEL, ts, content("a step was checked"), within_s=60)
        updates.set(CHANNEL, ts, content("waiting for approval"), within_s=0)
        await written(slack, ts, "waiting for approval")
        updates.set(CHANNEL, ts, content("the next call"), within_s=60)
        await updates.close()  # what waits is written at the close, not lost
        await outbox.close()
        assert updates_of(slack, ts) == ["waiting for approval", "the next call"]


async def test_the_final_state_is_written_through_a_429_storm():
    async with SlackFake() as slack:
        [ts] = await posted(slack)
        slack.fail_next("chat.update", times=6, status=429, retry_after=1)
        outbox = Outbox(web_client(SlackSecrets(BOT_TOKEN, None, None, slack.api_url)), interval_s=0)
        updates = MessageUpdates(outbox)
        updates.set(CHANNEL, ts, content("running"))
        updates.set(CHANNEL, ts, content("the verdict"))
        await written(slack, ts, "the verdict")
        await updates.close()
        await outbox.close()
        assert refused(slack) == 6
        assert updates_of(slack, ts) == ["the verdict"], "the storm delayed it; coalescing kept only the latest"
