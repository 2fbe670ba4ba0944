"""What the Slack end-to-end tests share, whatever the transport: the incident's tools, a scripted
agent per run, and a watcher that waits on the fake Slack's state."""

from __future__ import annotations

import asyncio
import contextlib
import re
import tempfile
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp

from bot.access.askers import Asker, Service
from bot.app import SlackServices, create_app
from bot.gate.gate import Admitted
from bot.gate.requests import Investigate, Place
from bot.http_limits.limits import HttpLimits
from bot.runs.active import ActiveRun
from bot.serve import DEFAULT_LIMITS, start_http
from bot.slack.action_ids import APPROVE
from bot.slack.settings import SlackSecrets, SlackSettings
from bot.store.factory import opened_store
from bot.store.protocol import RunStore
from bot.store.records import Rating, RunRecord, RunStatus, utc_now
from kernel import (
    Agent,
    ConfirmHook,
    Pricing,
    RunResult,
    ScriptedModel,
    SideEffectMode,
    SideEffectPolicy,
    ToolRegistry,
    text_turn,
)
from testkit.fakes.slack_api import SlackFake
from testkit.fakes.slack_requests import app_mention_event, block_actions_payload, signed_action, signed_event
from testkit.fakes.slack_workspace import BOT_TOKEN, BOT_USER_ID, SIGNING_SECRET, TEAM_ID
from testkit.servers.local_server import free_port

CHANNEL = "C0INCIDENT"
ALICE, BOB, CAROL, GUEST = "U0ALICE", "U0BOB", "U0CAROL", "U0GUEST"
USERS = {
    ALICE: {"name": "alice"},
    BOB: {"name": "bob"},
    CAROL: {"name": "carol"},
    GUEST: {"name": "guest", "is_restricted": True},
}
ALERTMANAGER = Service("alertmanager")
ROLLBACK = text_turn(
    "rollback_deployment", "Why: v2.14.0 broke checkout.", service="order-service", to_version="v2.13.2"
)
FINISH = text_turn("finish", "Known: all.", answer="**Root cause**: v2.14.0 (step 1).")


@contextlib.asynccontextmanager
async def temporary_store() -> AsyncIterator[RunStore]:
    """A run store on a SQLite file in a temporary directory, removed afterwards."""
    with tempfile.TemporaryDirectory() as tmp:
        async with opened_store(f"sqlite:///{tmp}/runs.db") as store:
            yield store


def click_payload(
    slack: SlackFake,
    action_id: str,
    value: str,
    message_ts: str,
    thread_ts: str,
    *,
    user: str = ALICE,
    user_team: str | None = None,
    element_type: str = "button",
    channel: str = CHANNEL,
) -> dict[str, Any]:
    """A button click in the incident channel (or `channel`), as Slack sends it (with a working `response_url`);
    `user_team` is a Slack Connect clicker's own workspace."""
    return block_actions_payload(
        user,
        TEAM_ID,
        channel,
        message_ts,
        thread_ts,
        action_id,
        value,
        response_url=slack.response_url(channel, message_ts, user=user),
        trigger_id=slack.trigger_for(user),
        user_team_id=user_team,
        element_type=element_type,
    )


class IncidentBot:
    """The tools the bot's runs use, and an agent factory that plays one script per run, in order; with a
    `price`, the scripted model's turns cost money (its reported tokens at that price)."""

    def __init__(self, script: list[list[Any]], *, price: Pricing | None = None) -> None:
        self.script = script
        self.price = price
        self.executed: list[tuple[str, str]] = []
        self.models: list[ScriptedModel] = []
        self.tools = ToolRegistry()
        self.released = asyncio.Event()
        """What `wait_for_signal` waits for: a test holds a run mid-step until it has done something."""
        executed, released = self.executed, self.released

        @self.tools.register
        async def query_metrics(service: str) -> str:
            """Query a service's 5xx rate."""
            return f"{service} 5xx jumped from 0.10% to 12.0% at t-10m"

        @self.tools.register
        async def slow(seconds: float) -> str:
            """Wait."""
            await asyncio.sleep(seconds)
            return "done"

        @self.tools.register
        async def wait_for_signal() -> str:
            """Wait until the test says so."""
            await released.wait()
            return "signalled"

        @self.tools.register(side_effect=True, summary="Roll a service back to an earlier version")
        async def rollback_deployment(service: str, to_version: str) -> str:
            """Roll back. Use it only when the evidence points at a deploy; ask the user before anything else."""
            executed.append((service, to_version))
            return f"rolled back {service} to {to_version}"

    def agent_for(self, confirm: ConfirmHook) -> Agent:
        """The agent of the next run: the next script, side effects allowed behind approvals."""
        model = ScriptedModel(self.script.pop(0))
        self.models.append(model)
        prices = {model.model: self.price} if self.price is not None else {}
        policy = SideEffectPolicy(mode=SideEffectMode.FULL)
        return Agent(llm=model, tools=self.tools, policy=policy, confirm=confirm, prices=prices)


def fenced(content: str) -> tuple[str, list[str]]:
    """A message the model was shown, split into what it reads with authority (outside every data fence) and
    the fenced parts, by the run's nonce (named at the end of the task message)."""
    nonce = re.findall(r"<data-([0-9a-f]+)>", content)[-1]
    parts = re.split(rf"<data-{nonce}>(.*?)</data-{nonce}>", content, flags=re.S)
    return "".join(parts[0::2]), parts[1::2]


def approval_id_in(message: Any) -> str | None:
    """The approval id behind a message's Approve button; None for a message without one."""
    for block in message.blocks:
        for element in block.get("elements", []):
            if element.get("action_id") == APPROVE:
                return str(element["value"])
    return None


class ThreadWatcher:
    """Reads the fake Slack's threads and waits until something shows up there."""

    def __init__(self, slack: SlackFake) -> None:
        self.slack = slack

    async def until(self, condition: Any, what: str, within: float = 10.0) -> Any:
        """Poll the fake Slack's state (written by its own handlers) until `condition` holds."""
        async with asyncio.timeout(within):
            while not (found := condition()):  # noqa: ASYNC110 - the state lives in the fake server
                await asyncio.sleep(0.02)
        assert found, what
        return found

    def thread(self, ts: str, channel: str = CHANNEL) -> list[Any]:
        return self.slack.thread(channel, ts)

    def approval_message(self, ts: str, channel: str = CHANNEL) -> tuple[Any, str] | None:
        """The approval message in the thread and its approval id, once posted."""
        for message in self.thread(ts, channel):
            if (approval_id := approval_id_in(message)) is not None:
                return message, approval_id
        return None

    def reacted(self, ts: str, name: str, channel: str = CHANNEL) -> bool:
        return name in self.slack.reactions.get((channel, ts), [])

    def summary(self, ts: str, channel: str = CHANNEL) -> Any:
        """The run's summary message (the bot's first reply in the thread: a person may have replied before it was
        posted), once posted."""
        return next((m for m in self.thread(ts, channel)[1:] if m.user == BOT_USER_ID), None)

    def verdict(self, ts: str, channel: str = CHANNEL) -> Any:
        """The summary message once it shows the verdict (its Stop button gone, 👍/👎 there); None before."""
        summary = self.summary(ts, channel)
        if summary is None or any(block["type"] == "actions" for block in summary.blocks):
            return None
        return summary

    async def ended(self, ts: str, channel: str = CHANNEL, within: float = 10.0) -> Any:
        """Wait for the run's end in its thread (the reaction, the trace file and the verdict); the verdict."""
        await self.until(
            lambda: self.reacted(ts, "white_check_mark", channel) or self.reacted(ts, "x", channel), "✅ or ❌", within
        )
        await self.until(lambda: any(m.files for m in self.thread(ts, channel)), "the trace file", within)
        return await self.until(lambda: self.verdict(ts, channel), "the verdict in the summary", within)


class HttpHarness(ThreadWatcher):
    """The app on a free port, the fake Slack, and helpers to send signed traffic and wait for results."""

    def __init__(self, slack: SlackFake, url: str, bot: IncidentBot) -> None:
        super().__init__(slack)
        self.url, self.executed, self.models = url, bot.executed, bot.models
        self.incident = bot
        self.http = aiohttp.ClientSession()

    async def post(self, body: bytes, headers: dict[str, str]) -> int:
        async with self.http.post(f"{self.url}/slack/events", data=body, headers=headers) as response:
            return response.status

    async def mention(
        self,
        text: str,
        *,
        user: str = BOB,
        thread_ts: str | None = None,
        event_id: str | None = None,
        retry_num: int | None = None,
        ts: str | None = None,
        channel: str = CHANNEL,
        author_team: str = TEAM_ID,
    ) -> str:
        if ts is None:
            ts = self.slack.add_message(channel, f"<@{BOT_USER_ID}> {text}", user=user, thread_ts=thread_ts).ts
        event = app_mention_event(channel, user, f"<@{BOT_USER_ID}> {text}", ts, thread_ts, team_id=author_team)
        status = await self.post(*signed_event(SIGNING_SECRET, event, event_id=event_id, retry_num=retry_num))
        assert status == 200
        return ts

    async def click(
        self,
        action_id: str,
        value: str,
        message_ts: str,
        thread_ts: str,
        *,
        user: str = ALICE,
        user_team: str | None = None,
        element_type: str = "button",
        channel: str = CHANNEL,
    ) -> int:
        payload = click_payload(
            self.slack,
            action_id,
            value,
            message_ts,
            thread_ts,
            user=user,
            user_team=user_team,
            element_type=element_type,
            channel=channel,
        )
        return await self.post(*signed_action(SIGNING_SECRET, payload))

    async def submit(self, payload: dict[str, Any]) -> int:
        """Send a modal's submission (a `view_submission` payload), signed, as Slack does."""
        return await self.post(*signed_action(SIGNING_SECRET, payload))


@contextlib.asynccontextmanager
async def running_app(
    slack: SlackFake,
    incident: IncidentBot,
    store: RunStore,
    *,
    settings: SlackSettings | None = None,
    start: bool = False,
    prepare: Callable[[SlackServices], None] | None = None,
    limits: HttpLimits = DEFAULT_LIMITS,
    **options: Any,
) -> AsyncIterator[HttpHarness]:
    """The Slack app in HTTP mode on a free port over `store`, as `opsagent serve --http` wires it; `prepare`
    sees the services before the server starts (to add routes), `start` resumes saved runs and starts the
    replica duties, `limits` are the HTTP server's. Leaving the block shuts it down (saving its runs)."""
    secrets = SlackSecrets(BOT_TOKEN, SIGNING_SECRET, None, slack.api_url)
    settings = settings or SlackSettings(approvers=[ALICE], post_interval_s=0, step_batch_s=0)
    services = await create_app(settings, secrets, incident.agent_for, store=store, **options)
    if prepare is not None:
        prepare(services)
    port = free_port()
    runner = await start_http(services, "127.0.0.1", port, limits=limits)
    harness = HttpHarness(slack, f"http://127.0.0.1:{port}", incident)
    harness.services = services
    if start:
        await services.start()
    try:
        yield harness
    finally:
        await services.close(timeout_s=5)
        await harness.http.close()
        await runner.cleanup()


async def start_through_the_gate(
    services: SlackServices, thread_ts: str, task: str, *, asker: Asker = ALERTMANAGER
) -> ActiveRun | None:
    """Start a run in a thread as a way in other than a mention does (an alert, by default): admitted by the gate
    first, then started."""
    admitted = await services.gate.admit(Investigate(asker, Place(CHANNEL, thread_ts, thread_ts), task))
    assert isinstance(admitted, Admitted), admitted
    started = await services.investigations.start(admitted)
    return started if isinstance(started, ActiveRun) else None


async def save_run(
    store: RunStore, trace: RunResult, *, status: RunStatus = RunStatus.FINISHED, save_trace: bool = True, **fields: Any
) -> RunRecord:
    """Record a run whose trace the kernel made, as the bot would have saved it (fields override the record's)."""
    now = utc_now()
    record = RunRecord(
        run_id=trace.run_id,
        channel=CHANNEL,
        thread_ts="1700000000.000100",
        requested_by=BOB,
        task=trace.task,
        status=status,
        trace_json=trace.to_json() if save_trace else "",
        created_at=now,
        updated_at=now,
    ).model_copy(update=fields)
    await store.runs.create_run(record)
    return record


async def ratings_when(store: Any, run_id: str, done: Any) -> dict[str, tuple[Rating, str]]:
    """Each person's rating of the run, once `done(ratings)` holds (the listeners keep them after their ack)."""
    async with asyncio.timeout(10):
        while True:
            got = {f.user: (f.rating, f.reason) for f in await store.feedback.feedback_for(run_id)}
            if done(got):
                return got
            await asyncio.sleep(0.02)
