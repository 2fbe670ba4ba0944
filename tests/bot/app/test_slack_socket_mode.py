"""The Slack bot end to end in Socket Mode: envelopes in over a real WebSocket, a fake Slack Web API out.

Bolt's `AsyncSocketModeHandler` connects to `fakes.socket_mode.SocketModeFake`; the app talks to `SlackFake`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json

import pytest
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_sdk.errors import SlackApiError

from bot.app import create_app
from bot.serve import socket_mode_handler
from bot.slack.action_ids import APPROVE, STOP
from bot.slack.settings import SlackSecrets, SlackSettings
from kernel import text_turn
from testkit.fakes.slack_api import SlackFake
from testkit.fakes.slack_requests import app_mention_event
from testkit.fakes.slack_workspace import BOT_TOKEN, BOT_USER_ID
from testkit.fakes.socket_mode import APP_TOKEN, SocketModeFake
from testkit.slack_bot import ALICE, BOB, CHANNEL, FINISH, ROLLBACK, USERS, IncidentBot, ThreadWatcher, click_payload


class SocketModeHarness(ThreadWatcher):
    """The app connected over Socket Mode, both fakes, and helpers to push envelopes and wait for results."""

    def __init__(self, slack: SlackFake, socket: SocketModeFake, bot: IncidentBot) -> None:
        super().__init__(slack)
        self.socket, self.executed, self.models = socket, bot.executed, bot.models

    async def mention(
        self, text: str, *, user: str = BOB, event_id: str | None = None, retry_attempt: int = 0, ts: str | None = None
    ) -> tuple[str, str]:
        """Post a mention in the channel and deliver its `app_mention`; (message ts, envelope id)."""
        if ts is None:
            ts = self.slack.add_message(CHANNEL, f"<@{BOT_USER_ID}> {text}", user=user).ts
        event = app_mention_event(CHANNEL, user, f"<@{BOT_USER_ID}> {text}", ts)
        reason = "timeout" if retry_attempt else ""
        envelope_id = await self.socket.push_event(
            event, event_id=event_id, retry_attempt=retry_attempt, retry_reason=reason
        )
        return ts, envelope_id

    async def click(self, action_id: str, value: str, message_ts: str, thread_ts: str, *, user: str = ALICE) -> str:
        """Deliver a button click as an `interactive` envelope; the envelope id."""
        return await self.socket.push_interactive(
            click_payload(self.slack, action_id, value, message_ts, thread_ts, user=user)
        )

    def headers(self, ts: str) -> list:
        """The thread's summaries (each was posted as "Investigating…")."""
        return [m for m in self.thread(ts) if "Investigating" in (m.edits[0]["text"] if m.edits else m.text)]


async def close_handler(handler: AsyncSocketModeHandler) -> None:
    """Close the Socket Mode client and wait for the tasks it cancels, so none is left pending."""
    client = handler.client
    await handler.close_async()
    tasks = [t for t in (client.message_processor, client.current_session_monitor, client.message_receiver) if t]
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError):
            await task


@pytest.fixture
async def socket_harness(script, run_store):
    bot = IncidentBot(script)
    async with SlackFake(users=USERS) as slack, SocketModeFake() as socket:
        secrets = SlackSecrets(bot_token=BOT_TOKEN, signing_secret=None, app_token=APP_TOKEN, api_url=slack.api_url)
        services = await create_app(
            SlackSettings(approvers=[ALICE], post_interval_s=0, step_batch_s=0), secrets, bot.agent_for, store=run_store
        )
        # The app's own client points at the Web API fake, which has no apps.connections.open: the
        # Socket Mode client gets a web client on the Socket Mode fake instead.
        handler = socket_mode_handler(services, APP_TOKEN, web_client=socket.web_client())
        await handler.connect_async()
        await socket.wait_connected()
        h = SocketModeHarness(slack, socket, bot)
        h.services, h.handler = services, handler
        try:
            yield h
        finally:
            await close_handler(handler)
            await services.close(timeout_s=5)


async def test_the_client_opens_a_connection_with_the_app_token_and_gets_hello(socket_harness):
    assert [call["ok"] for call in socket_harness.socket.opened] == [True]
    assert socket_harness.socket.opened[0]["http_method"] == "POST"
    assert len(socket_harness.socket.connections) == 1
    with pytest.raises(SlackApiError) as refused:
        await socket_harness.socket.web_client().apps_connections_open(app_token="xapp-1-wrong")
    assert refused.value.response["error"] == "invalid_auth"


async def test_a_mention_envelope_is_acked_and_becomes_an_investigation_thread(socket_harness, script):
    script.append([text_turn("query_metrics", "Known: nothing.", service="order-service"), FINISH])
    ts, envelope_id = await socket_harness.mention("order-service 5xx at 12%, find the root cause")
    ack = await socket_harness.socket.wait_ack(envelope_id)
    assert ack.payload is None
    verdict = await socket_harness.ended(ts)
    thread = socket_harness.thread(ts)
    assert socket_harness.reacted(ts, "eyes")
    assert "Investigating" in verdict.edits[0]["text"]
    assert STOP in json.dumps(verdict.edits[0]["blocks"]), "a Stop button while it ran"
    assert "jumped from 0.10% to 12.0%" in json.dumps(thread[2].blocks)
    assert "*v2.14.0.*" in verdict.blocks[0]["text"]["text"], "the answer, as its summary"
    assert [a.envelope_id for a in socket_harness.socket.acks] == [envelope_id]


async def test_an_approve_click_over_the_socket_runs_the_action_exactly_once(socket_harness, script):
    script.append([ROLLBACK, FINISH])
    ts, _ = await socket_harness.mention("roll back order-service")
    message, approval_id = await socket_harness.until(
        lambda: socket_harness.approval_message(ts), "an approval message"
    )
    assert socket_harness.executed == []
    envelope_id = await socket_harness.click(APPROVE, approval_id, message.ts, ts)
    assert (await socket_harness.socket.wait_ack(envelope_id)).payload is None
    await socket_harness.until(lambda: socket_harness.reacted(ts, "white_check_mark"), "the run ends")
    assert socket_harness.executed == [("order-service", "v2.13.2")]
    assert "approved by" in json.dumps(socket_harness.slack.message(CHANNEL, message.ts).blocks)
    again = await socket_harness.click(APPROVE, approval_id, message.ts, ts)
    await socket_harness.socket.wait_ack(again)
    await socket_harness.until(lambda: socket_harness.slack.responses, "an ephemeral answer to the second click")
    assert "Already approved" in json.dumps([r.body for r in socket_harness.slack.responses])
    assert socket_harness.executed == [("order-service", "v2.13.2")]


async def test_a_redelivered_envelope_starts_no_second_run(socket_harness, script):
    script.append([FINISH])
    ts, first = await socket_harness.mention("why 5xx?", event_id="Ev0SAME")
    _, retry = await socket_harness.mention("why 5xx?", event_id="Ev0SAME", retry_attempt=1, ts=ts)
    assert socket_harness.socket.envelopes[-1].body["retry_attempt"] == 1
    await socket_harness.socket.wait_ack(first)
    await socket_harness.socket.wait_ack(retry)
    await socket_harness.ended(ts)
    assert len(socket_harness.headers(ts)) == 1
    assert len(socket_harness.models) == 1


async def test_after_a_dropped_socket_and_a_refresh_the_client_reconnects_and_events_still_work(socket_harness, script):
    script.extend([[FINISH], [FINISH]])
    dropped = await socket_harness.socket.drop()
    assert [c.index for c in dropped] == [0]
    second = await socket_harness.socket.wait_connected(2)
    ts, envelope_id = await socket_harness.mention("why 5xx after the drop?")
    assert (await socket_harness.socket.wait_ack(envelope_id)).connection == second.index
    await socket_harness.ended(ts)

    await socket_harness.socket.disconnect("refresh_requested")
    third = await socket_harness.socket.wait_connected(3)
    await socket_harness.until(lambda: second.closed, "the client closes the refreshed session")
    ts, envelope_id = await socket_harness.mention("why 5xx after the refresh?")
    assert (await socket_harness.socket.wait_ack(envelope_id)).connection == third.index
    await socket_harness.ended(ts)

    assert [call["ok"] for call in socket_harness.socket.opened] == [True, True, True]
    assert len(socket_harness.socket.open_connections) == 1
    assert all(len(socket_harness.headers(m.ts)) == 1 for m in socket_harness.slack.messages(CHANNEL) if m.user == BOB)
