"""The bot with its trace viewer on a free 127.0.0.1 port, talking to the fake Slack: runs are started in
threads, approved by signed clicks, and their "View trace" links read back from the verdict."""

from __future__ import annotations

import html
import re
from typing import Any, Self

import aiohttp

from bot.access.askers import Person
from bot.app import create_app
from bot.serve import start_http
from bot.slack.action_ids import APPROVE
from bot.slack.settings import SlackSecrets, SlackSettings
from bot.viewer.server import SECRET_ENV, TraceViewer
from bot.viewer.settings import ViewerSettings
from kernel import Agent, ConfirmHook, ScriptedModel, SideEffectMode, SideEffectPolicy, ToolRegistry
from testkit.fakes.slack_api import SlackFake
from testkit.fakes.slack_requests import block_actions_payload, signed_action
from testkit.fakes.slack_workspace import BOT_TOKEN, SIGNING_SECRET, TEAM_ID
from testkit.servers.local_server import free_port
from testkit.slack_bot import ALICE, BOB, CHANNEL, USERS, ThreadWatcher, start_through_the_gate, temporary_store

VIEWER_SECRET = "trace-viewer-test-secret-0123456789abcdef"
LINK = re.compile(r"<(http[^|>]+)\|View trace>")


class ViewerBot(ThreadWatcher):
    """The whole bot (Slack app, investigations, viewer) on one HTTP server; one script per run, in order."""

    def __init__(self, tools: ToolRegistry, scripts: list[list[Any]]) -> None:
        super().__init__(SlackFake(users=USERS))
        self.tools, self.scripts = tools, scripts
        self.models: list[ScriptedModel] = []

    async def __aenter__(self) -> Self:
        await self.slack.start()
        self._store = temporary_store()
        self.store = store = await self._store.__aenter__()
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.viewer = TraceViewer.from_settings(
            ViewerSettings(public_url=self.url), store.runs, store.audit, environ={SECRET_ENV: VIEWER_SECRET}
        )
        secrets = SlackSecrets(BOT_TOKEN, SIGNING_SECRET, None, self.slack.api_url)
        self.services = await create_app(
            SlackSettings(approvers=[ALICE], post_interval_s=0, step_batch_s=0),
            secrets,
            self.agent_for,
            store=store,
            trace_link=self.viewer.link,
        )
        self.services.routes.extend(self.viewer.routes())
        self.runner = await start_http(self.services, "127.0.0.1", port)
        self.http = aiohttp.ClientSession()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.services.close(timeout_s=5)
        await self.http.close()
        await self.runner.cleanup()
        await self._store.__aexit__(None, None, None)
        await self.slack.close()

    def agent_for(self, confirm: ConfirmHook) -> Agent:
        self.models.append(ScriptedModel(self.scripts.pop(0)))
        policy = SideEffectPolicy(mode=SideEffectMode.FULL)
        return Agent(llm=self.models[-1], tools=self.tools, policy=policy, confirm=confirm)

    async def investigate(self, text: str) -> str:
        """Start a run in a new thread, as an alert or a mention would; the thread's ts."""
        root = self.slack.add_message(CHANNEL, text, user=BOB)
        assert await start_through_the_gate(self.services, root.ts, text, asker=Person(BOB, (TEAM_ID,)))
        return root.ts

    async def approve(self, ts: str) -> None:
        """Alice clicks Approve on the thread's approval message, a signed request as Slack sends it."""
        message, approval_id = await self.until(lambda: self.approval_message(ts), "an approval message")
        response_url = self.slack.response_url(CHANNEL, message.ts, user=ALICE)
        payload = block_actions_payload(
            ALICE, TEAM_ID, CHANNEL, message.ts, ts, APPROVE, approval_id, response_url=response_url
        )
        body, headers = signed_action(SIGNING_SECRET, payload)
        async with self.http.post(f"{self.url}/slack/events", data=body, headers=headers) as response:
            assert response.status == 200

    async def trace_link(self, ts: str) -> str:
        """The "View trace" URL of the thread's verdict, once written."""
        found = await self.until(
            lambda: next((m for m in self.thread(ts) for b in m.blocks if LINK.search(str(b))), None),
            "a verdict with a View trace link",
        )
        links = [LINK.search(str(b)) for b in found.blocks]
        return html.unescape(next(m[1] for m in links if m))
