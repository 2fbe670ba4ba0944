"""The per-channel outbox: order kept, failures reported, and a cancelled waiter never kills the worker."""

from __future__ import annotations

import asyncio

from bot.slack.outbox import Outbox
from testkit.fakes.slack_api import SlackFake


async def test_a_cancelled_waiter_does_not_stop_the_channel():
    async with SlackFake() as slack:
        outbox = Outbox(slack.client(), interval_s=0)
        slack.hang("chat.postMessage", 0.2)
        waiter = asyncio.create_task(outbox.send("chat_postMessage", "C1", text="first"))
        await asyncio.sleep(0.05)
        waiter.cancel()
        answer = await outbox.send("chat_postMessage", "C1", text="second")
        assert answer is not None
        assert [m.text for m in slack.messages("C1")] == ["first", "second"]
        await outbox.close()


async def test_a_refused_post_is_reported_as_none_and_the_next_goes_out():
    async with SlackFake() as slack:
        outbox = Outbox(slack.client(), interval_s=0)
        slack.fail_next("chat.postMessage", status=200, error="not_in_channel")
        assert await outbox.send("chat_postMessage", "C1", text="lost") is None
        assert (await outbox.send("chat_postMessage", "C1", text="kept"))["ok"] is True
        await outbox.close()


async def test_steps_that_pile_up_go_out_as_one_message_within_the_block_limit():
    async with SlackFake() as slack:
        outbox = Outbox(slack.client(), interval_s=0)
        slack.hang("chat.postMessage", 0.2)
        first = outbox.enqueue("chat_postMessage", "C1", text="header", blocks=[{"type": "divider"}])
        await asyncio.sleep(0.05)  # the header is in flight; what follows piles up behind it
        steps = [
            outbox.enqueue(
                "chat_postMessage",
                "C1",
                text=f"step {i}",
                merge_key="run-1",
                blocks=[
                    {"type": "section", "block_id": f"s{i}.{j}", "text": {"type": "mrkdwn", "text": f"step {i}"}}
                    for j in range(10)
                ],
            )
            for i in range(7)
        ]
        await asyncio.gather(first, *steps)
        posted = slack.messages("C1")
        assert [len(m.blocks) for m in posted] == [1, 50, 20]
        assert posted[1].text.startswith("step 0\nstep 1")
        await outbox.close()


async def test_a_post_during_a_slack_outage_goes_out_when_slack_is_back():
    async with SlackFake() as slack:
        outbox = Outbox(slack.client(), interval_s=0)
        slack.fail_next("chat.postMessage", times=2, status=503)
        assert (await outbox.send("chat_postMessage", "C1", text="kept"))["ok"] is True
        assert [m.text for m in slack.messages("C1")] == ["kept"]
        assert [call.status for call in slack.calls_to("chat.postMessage")] == [503, 503, 200]
        await outbox.close()


async def test_an_outage_longer_than_the_patience_gives_the_post_up_and_says_none():
    async with SlackFake() as slack:
        outbox = Outbox(slack.client(), interval_s=0, outage_s=0.5)
        slack.fail_always("chat.postMessage", "service_unavailable", status=503)
        assert await outbox.send("chat_postMessage", "C1", text="lost") is None
        slack.clear_faults()
        assert (await outbox.send("chat_postMessage", "C1", text="next")).get("ok") is True
        assert [m.text for m in slack.messages("C1")] == ["next"]
        await outbox.close()


async def test_steps_wait_a_moment_for_the_next_ones_and_go_out_as_one_message():
    async with SlackFake() as slack:
        outbox = Outbox(slack.client(), interval_s=0, batch_s=0.5)
        for i in range(3):
            block = {"type": "section", "block_id": f"s{i}", "text": {"type": "mrkdwn", "text": f"step {i}"}}
            outbox.enqueue("chat_postMessage", "C1", text=f"step {i}", merge_key="run-1", blocks=[block])
            await asyncio.sleep(0.1)  # steps a moment apart: none piles up behind a slow post
        answer = await outbox.send("chat_postMessage", "C1", text="the answer")
        await outbox.close()
        assert answer is not None
        assert [m.text for m in slack.messages("C1")] == ["step 0\nstep 1\nstep 2", "the answer"]
        assert slack.count("chat.postMessage") == 2
