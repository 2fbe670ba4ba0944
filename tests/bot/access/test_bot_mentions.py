"""Mentions by other bots start nothing and get no answer (two bots cannot loop), and neither does a bot message
without a user (no run has an anonymous requester); `[access] allowed_bots` lets named bots ask, as themselves."""

from __future__ import annotations

from typing import Any

import pytest
from structlog.testing import capture_logs

from bot.access.settings import AccessSettings
from testkit.fakes.slack_requests import app_mention_event, signed_event
from testkit.fakes.slack_workspace import BOT_USER_ID, SIGNING_SECRET
from testkit.slack_bot import BOB, CHANNEL, FINISH, HttpHarness

FRIEND = "B0FRIEND"


def bot_mention(harness: HttpHarness, *, bot_id: str, user: str | None, subtype: str | None = None) -> dict[str, Any]:
    """An `app_mention` written by a bot: with its bot user's id, or (a bot message) with no user at all."""
    ts = harness.slack.add_message(CHANNEL, f"<@{BOT_USER_ID}> why 5xx?", user=user or BOB).ts
    event = app_mention_event(CHANNEL, user or "", f"<@{BOT_USER_ID}> why 5xx?", ts)
    event |= {"bot_id": bot_id, "bot_profile": {"id": bot_id, "name": "deploy-bot"}}
    if user is None:
        del event["user"]
    if subtype is not None:
        event["subtype"] = subtype
    return event


async def send(harness: HttpHarness, event: dict[str, Any]) -> None:
    assert await harness.post(*signed_event(SIGNING_SECRET, event)) == 200


@pytest.mark.parametrize(
    ("user", "subtype"), [("U0OTHERBOT", None), (None, "bot_message")], ids=["bot-user", "bot-message-no-user"]
)
async def test_a_bot_is_refused_without_a_word(harness, script, user, subtype) -> None:
    script.append([FINISH])
    event = bot_mention(harness, bot_id="B0OTHER", user=user, subtype=subtype)
    with capture_logs() as logs:
        await send(harness, event)
        await harness.until(
            lambda: any(e["event"] == "request_refused" and e["reason"] == "bot" for e in logs), "the refusal logged"
        )
    assert harness.models == []
    assert [m for m in harness.thread(event["ts"]) if m.ts != event["ts"]] == []
    assert harness.slack.ephemerals == []
    assert not harness.reacted(event["ts"], "eyes")
    person = await harness.mention("why 5xx?", user=BOB)
    await harness.until(lambda: harness.reacted(person, "white_check_mark"), "a person's mention still runs")


@pytest.mark.parametrize(
    "access_settings",
    [AccessSettings(allowed_bots=[FRIEND], runs_per_user_per_hour=None, runs_per_channel_per_hour=None)],
)
@pytest.mark.parametrize(("user", "requester"), [("U0FRIENDBOT", "U0FRIENDBOT"), (None, FRIEND)])
async def test_an_allowed_bot_asks_as_itself(harness, script, user, requester) -> None:
    script.append([FINISH])
    event = bot_mention(harness, bot_id=FRIEND, user=user, subtype=None if user else "bot_message")
    await send(harness, event)
    await harness.until(lambda: harness.reacted(event["ts"], "white_check_mark"), "the allowed bot's run ends")
    [started] = [e for e in await harness.services.store.audit.audit_log() if e.kind == "run_started"]
    assert started.actor == requester
