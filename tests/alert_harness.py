"""The bot with its Alertmanager receiver on a free 127.0.0.1 port, a fake Slack behind it, and ways to read the
alert threads; shared by the receiver's tests and the end-to-end test with the real Prometheus and Alertmanager."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
from slack_fake import BOT_TOKEN, Message, SlackFake
from slack_harness import CHANNEL, USERS, IncidentBot, ThreadWatcher

from bot.alert_receiver import PATH, TOKEN_ENV, AlertmanagerSettings, alertmanager_routes
from bot.serve import start_http
from bot.slack_app import SlackSecrets, SlackServices, SlackSettings, create_app

TOKEN = "alertmanager-test-token-0123456789abcdef"


class AlertBot(ThreadWatcher):
    """The running bot: post notifications to `/alertmanager`, read what reached the fake Slack."""

    def __init__(self, slack: SlackFake, url: str, incident: IncidentBot, services: SlackServices) -> None:
        super().__init__(slack)
        self.url, self.incident, self.services = url, incident, services
        self.http = aiohttp.ClientSession()

    @property
    def receiver_url(self) -> str:
        return f"{self.url}{PATH}"

    async def notify(self, body: dict[str, Any] | bytes, *, token: str | None = TOKEN) -> tuple[int, dict[str, Any]]:
        """POST a webhook body the way Alertmanager does; the status and the JSON answer."""
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        async with self.http.post(self.receiver_url, data=data, headers=headers) as response:
            return response.status, await response.json()

    def alert_threads(self) -> list[Message]:
        """The top-level messages the bot posted in the alert channel, oldest first."""
        return [m for m in self.slack.messages(CHANNEL) if not m.is_reply]

    def trace(self, thread_ts: str) -> dict[str, Any] | None:
        """The run's trace uploaded into the thread (the run has ended), if any."""
        for uploaded in self.slack.files.values():
            if uploaded.thread_ts == thread_ts:
                return json.loads(uploaded.content)
        return None


@contextlib.asynccontextmanager
async def running_alert_bot(script: list[list[Any]], *, token: str = TOKEN) -> AsyncIterator[AlertBot]:
    """The bot as `opsagent serve` wires it with `[alertmanager] channel = CHANNEL`, until the block ends."""
    incident = IncidentBot(script)
    async with SlackFake(users=USERS) as slack:
        secrets = SlackSecrets(bot_token=BOT_TOKEN, signing_secret=None, app_token=None, api_url=slack.api_url)
        services = await create_app(SlackSettings(post_interval_s=0), secrets, incident.agent_for)
        services.routes += alertmanager_routes(AlertmanagerSettings(channel=CHANNEL), services, {TOKEN_ENV: token})
        runner = await start_http(services, "127.0.0.1", 0, slack_events=False)
        bot = AlertBot(slack, f"http://127.0.0.1:{runner.addresses[0][1]}", incident, services)
        try:
            yield bot
        finally:
            await services.investigations.shutdown(timeout_s=5)
            await bot.http.close()
            await runner.cleanup()
