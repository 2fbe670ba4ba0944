"""The bot with its Alertmanager receiver on a free 127.0.0.1 port, a fake Slack behind it, ways to read the
alert threads, and webhook bodies as Alertmanager sends them; shared by the receiver's tests, the `serve`
black-box test and the end-to-end test with the real Prometheus and Alertmanager."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from bot.alerts.receiver import PATH, serve_alertmanager
from bot.alerts.settings import TOKEN_ENV, AlertmanagerSettings
from bot.app import SlackServices, create_app
from bot.serve import start_http
from bot.slack.settings import SlackSecrets, SlackSettings
from testkit.fakes.slack_api import SlackFake
from testkit.fakes.slack_workspace import BOT_TOKEN, Message
from testkit.slack_bot import CHANNEL, USERS, IncidentBot, ThreadWatcher, temporary_store

TOKEN = "alertmanager-test-token-0123456789abcdef"
ALERTNAME = "OrderService5xxHigh"
GROUP_KEY = '{}:{alertname="OrderService5xxHigh"}'
STARTED = "2026-11-30T05:40:00Z"
NOT_ENDED = "0001-01-01T00:00:00Z"


def alert(fingerprint: str, *, pod: str = "order-service-abcde", status: str = "firing", **annotations: str) -> dict:
    """One alert as Alertmanager sends it."""
    return {
        "status": status,
        "labels": {"alertname": ALERTNAME, "severity": "critical", "service": "order-service", "pod": pod},
        "annotations": annotations or {"summary": "order-service answers 12% of requests with 5xx"},
        "startsAt": STARTED,
        "endsAt": NOT_ENDED if status == "firing" else "2026-11-30T06:10:00Z",
        "generatorURL": "http://prometheus:9090/graph?g0.expr=rate%28http_requests_total%5B5m%5D%29&g0.tab=1",
        "fingerprint": fingerprint,
    }


def notification(*alerts: dict, group_key: str = GROUP_KEY, alertname: str = ALERTNAME) -> dict:
    """A webhook body (version 4) for `alerts`, firing while any of them fires."""
    return {
        "version": "4",
        "groupKey": group_key,
        "truncatedAlerts": 0,
        "status": "firing" if any(a["status"] == "firing" for a in alerts) else "resolved",
        "receiver": "opsagent",
        "groupLabels": {"alertname": alertname},
        "commonLabels": {"alertname": alertname, "severity": "critical", "service": "order-service"},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager:9093",
        "alerts": list(alerts),
    }


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
async def running_alert_bot(
    script: list[list[Any]], *, token: str = TOKEN, shared: AlertBot | None = None, **options: Any
) -> AsyncIterator[AlertBot]:
    """The bot as `opsagent serve` wires it with `[alertmanager] channel = CHANNEL`, until the block ends;
    with `shared`, a second replica on the same fake Slack and run store; `options` go to `create_app`."""
    async with contextlib.AsyncExitStack() as stack:
        if shared is None:
            slack = await stack.enter_async_context(SlackFake(users=USERS))
            store = await stack.enter_async_context(temporary_store())
            incident = IncidentBot(script)
        else:
            slack, store, incident = shared.slack, shared.services.store, shared.incident
        secrets = SlackSecrets(bot_token=BOT_TOKEN, signing_secret=None, app_token=None, api_url=slack.api_url)
        services = await create_app(
            SlackSettings(post_interval_s=0, step_batch_s=0), secrets, incident.agent_for, store=store, **options
        )
        serve_alertmanager(AlertmanagerSettings(channel=CHANNEL), services, {TOKEN_ENV: token})
        runner = await start_http(services, "127.0.0.1", 0, slack_events=False)
        await services.start()
        bot = AlertBot(slack, f"http://127.0.0.1:{runner.addresses[0][1]}", incident, services)
        try:
            yield bot
        finally:
            await services.close(timeout_s=5)
            await bot.http.close()
            await runner.cleanup()
