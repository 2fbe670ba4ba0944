"""What the Slack end-to-end tests share, whatever the transport: the incident's tools, a scripted
agent per run, and a watcher that waits on the fake Slack's state."""

from __future__ import annotations

import asyncio
from typing import Any

from slack_fake import SlackFake

from bot.slack_app import APPROVE
from kernel import Agent, ConfirmHook, ScriptedModel, SideEffectMode, SideEffectPolicy, ToolRegistry, text_turn

CHANNEL = "C0INCIDENT"
ALICE, BOB, GUEST = "U0ALICE", "U0BOB", "U0GUEST"
USERS = {ALICE: {"name": "alice"}, BOB: {"name": "bob"}, GUEST: {"name": "guest", "is_restricted": True}}
ROLLBACK = text_turn(
    "rollback_deployment", "Why: v2.14.0 broke checkout.", service="order-service", to_version="v2.13.2"
)
FINISH = text_turn("finish", "Known: all.", answer="**Root cause**: v2.14.0 (step 1).")


class IncidentBot:
    """The tools the bot's runs use, and an agent factory that plays one script per run, in order."""

    def __init__(self, script: list[list[Any]]) -> None:
        self.script = script
        self.executed: list[tuple[str, str]] = []
        self.models: list[ScriptedModel] = []
        self.tools = ToolRegistry()
        executed = self.executed

        @self.tools.register
        async def query_metrics(service: str) -> str:
            """Query a service's 5xx rate."""
            return f"{service} 5xx jumped from 0.10% to 12.0% at t-10m"

        @self.tools.register
        async def slow(seconds: float) -> str:
            """Wait."""
            await asyncio.sleep(seconds)
            return "done"

        @self.tools.register(side_effect=True)
        async def rollback_deployment(service: str, to_version: str) -> str:
            """Roll back."""
            executed.append((service, to_version))
            return f"rolled back {service} to {to_version}"

    def agent_for(self, confirm: ConfirmHook) -> Agent:
        """The agent of the next run: the next script, side effects allowed behind approvals."""
        self.models.append(ScriptedModel(self.script.pop(0)))
        return Agent(
            llm=self.models[-1], tools=self.tools, policy=SideEffectPolicy(mode=SideEffectMode.FULL), confirm=confirm
        )


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

    def approval_message(self, ts: str) -> tuple[Any, str] | None:
        """The approval message in the thread and its approval id, once posted."""
        for message in self.thread(ts):
            for block in message.blocks:
                for element in block.get("elements", []):
                    if element.get("action_id") == APPROVE:
                        return message, element["value"]
        return None

    def reacted(self, ts: str, name: str, channel: str = CHANNEL) -> bool:
        return name in self.slack.reactions.get((channel, ts), [])
