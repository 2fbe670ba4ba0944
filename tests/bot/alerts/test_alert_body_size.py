"""The biggest alert groups open their thread: `POST /alertmanager` takes bodies far past aiohttp's 1 MiB default, up
to `[alertmanager] max_body_bytes`, and refuses what is past that, or unauthorised, without reading it whole."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kernel import text_turn
from testkit.slack_bot import FINISH
from worlds.alert_bot import TOKEN, alert, notification, running_alert_bot

MIB = 1024 * 1024


def big_group(alerts: int) -> bytes:
    """A firing group of `alerts` alerts with runbook-sized descriptions, as Alertmanager sends it."""
    members = [alert(f"fp-{n}", pod=f"order-service-{n:05d}", description="d" * 1500) for n in range(alerts)]
    return json.dumps(notification(*members)).encode()


@pytest.fixture
async def bot(script: list[list[Any]]):
    async with running_alert_bot(script) as running:
        yield running


async def test_a_group_of_several_mib_opens_its_thread(bot, script) -> None:
    script.append([text_turn("query_metrics", "Known: many pods.", service="order-service"), FINISH])
    body = big_group(2000)
    assert len(body) > 3 * MIB
    status, answer = await bot.notify(body)
    assert (status, answer["ok"]) == (200, True)
    [top] = await bot.until(lambda: bot.alert_threads(), "the big group's thread")
    trace = await bot.until(lambda: bot.trace(top.ts), "its run ends")
    assert "And 1990 more alerts in the group." in trace["task_data"]


async def test_past_the_limit_or_unauthorised_a_big_body_is_refused(bot) -> None:
    async with bot.http.post(
        bot.receiver_url, data=b"{" + b" " * (17 * MIB), headers={"Authorization": f"Bearer {TOKEN}"}
    ) as response:
        assert response.status == 413
    status, _ = await bot.notify(big_group(2000), token="wrong-token-0123456789")
    assert status == 401
    assert bot.slack.calls_to("chat.postMessage") == []
