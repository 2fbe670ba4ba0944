"""The world of one fault test: fake Slack and model, an action receiver, a config, a store, and bot processes.

`Incident` starts bots on it and reads its state; `assert_one_outcome` is the check every fault test ends with:
exactly one ✅/❌, one last reply and one trace per thread, the trace complete and equal to the store's.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import pytest

from bot.slack.action_ids import APPROVE
from bot.store.factory import opened_store
from bot.store.protocol import RunStore
from bot.store.records import RunRecord, RunStatus
from kernel import RunResult
from samples.demo_config import write_demo_config
from testkit.fakes.action_receiver import ActionReceiver
from testkit.fakes.model_server import FakeModelServer, Reply, openai_completion, openai_error, openai_tool_call
from testkit.fakes.slack_api import SlackFake
from testkit.servers.bot_process import BotProcess, serve_env

CHANNEL, ALICE, BOB = "C0INCIDENT", "U0ALICE", "U0BOB"
ACTION_SECRET = "hmac-key-for-the-receiver"
LEASE_TTL_S = 3
"""The shortest lease the settings allow: a killed replica's runs are taken over after about this long."""
SETTLE_S = 2 * LEASE_TTL_S
"""After an outcome, how long to keep watching for a second one (a finished run wrongly resumed again)."""
SLACK_OUTAGE_S = 12.0
"""How long Slack answers 429 and 5xx. The issue says a minute; the retry paths are the same, CI is faster."""
WITHIN_S = 90.0
"""The most any awaited state may take: generous (the machine is small and shared), under pytest's 120 s."""

QUERY = openai_tool_call("c1", "query_metrics", {"service": "order-service", "metric": "http_5xx_rate"})
ROLLBACK = openai_tool_call("c2", "rollback_deployment", {"service": "order-service", "to_version": "v2.13.2"})
ANSWER = "Root cause: v2.14.0 (step 1)."
FINISH = openai_tool_call("c3", "finish", {"answer": ANSWER})
RESUMED = "♻️ This investigation continues after step 1 (OpsAgent restarted, or another replica took it over)."

T = TypeVar("T")


def turn(*calls: dict[str, Any], thought: str | None = None, delay: float = 0.0) -> Reply:
    """One model turn over the OpenAI wire: a thought and tool calls."""
    return Reply(openai_completion(thought, tool_calls=list(calls)), delay=delay)


def model_down(times: int) -> list[Reply]:
    """The model endpoint answering 503 `times` times in a row."""
    return [Reply(openai_error("The server is overloaded", error_type="server_error"), status=503)] * times


@dataclass
class Incident:
    """One test's world: the fake Slack and model, the action receiver, the config, and the store's URL."""

    root: Path
    slack: SlackFake
    model: FakeModelServer
    receiver: ActionReceiver
    config: Path
    store_url: str

    def bot(self, name: str, **env: str) -> BotProcess:
        """A bot process (not started yet: `async with`), logging to `<name>.log`."""
        extra = {"OPSAGENT_STORE__URL": self.store_url, "OPSAGENT_ACTION_SECRET": ACTION_SECRET, **env}
        return BotProcess(serve_env(self.config, self.slack, self.model, **extra), self.root / f"{name}.log")

    @contextlib.asynccontextmanager
    async def store(self) -> AsyncIterator[RunStore]:
        async with opened_store(self.store_url) as store:
            yield store

    def texts(self, ts: str) -> list[str]:
        return [message.text for message in self.slack.thread(CHANNEL, ts)]

    def outcomes(self, ts: str) -> list[str]:
        """The ✅/❌ reactions on the asking message."""
        return [name for name in self.slack.reactions.get((CHANNEL, ts), []) if name in ("white_check_mark", "x")]

    def traces(self, ts: str) -> list[RunResult]:
        return [RunResult.from_json(f.content) for f in self.slack.files.values() if f.thread_ts == ts and f.completed]

    def approval(self, ts: str) -> tuple[str, str] | None:
        """The approval message in the thread and its approval id, once posted."""
        for message in self.slack.thread(CHANNEL, ts):
            for block in message.blocks:
                for element in block.get("elements", []):
                    if element.get("action_id") == APPROVE:
                        return message.ts, element["value"]
        return None


@contextlib.asynccontextmanager
async def incident(root: Path, store_url: str | None = None, *, extra: str = "") -> AsyncIterator[Incident]:
    async with (
        SlackFake(users={ALICE: {"name": "alice"}, BOB: {"name": "bob"}}) as slack,
        FakeModelServer() as model,
        ActionReceiver(ACTION_SECRET) as receiver,
    ):
        settings = (
            f'[tools.actions.webhook]\nurl = "{receiver.actions_url}"\n[policy]\nmode = "full"\n'
            f'[slack]\napprovers = ["{ALICE}"]\npost_interval_s = 0\n[store]\nlease_ttl_s = {LEASE_TTL_S}\n{extra}'
        )
        config = write_demo_config(root, datetime.now(UTC), extra=settings)
        yield Incident(root, slack, model, receiver, config, store_url or f"sqlite:///{root}/runs.db")


async def until(condition: Callable[[], T | Awaitable[T]], what: str, *bots: BotProcess) -> T:
    """Poll until `condition()` (awaited if need be) is truthy; on timeout, fail with what was awaited and the
    processes' logs."""
    try:
        async with asyncio.timeout(WITHIN_S):
            while True:
                found = condition()
                if inspect.isawaitable(found):
                    found = await found
                if found:
                    return found
                await asyncio.sleep(0.1)
    except TimeoutError:
        logs = "\n".join(f"--- {bot.log.name}\n{bot.tail()}" for bot in bots)
        pytest.fail(f"timed out waiting for {what}\n{logs}", pytrace=False)


async def saved_as(store: RunStore, ts: str, status: RunStatus) -> RunRecord | None:
    """The thread's run once the store has it in `status`, else None."""
    record = await store.runs.run_in_thread(CHANNEL, ts)
    return record if record is not None and record.status is status else None


async def ended(inc: Incident, ts: str, *bots: BotProcess) -> None:
    """Wait for the thread's outcome (reaction and trace), then a while longer for a duplicate to show."""
    await until(lambda: inc.outcomes(ts) and inc.traces(ts), f"the outcome of thread {ts}", *bots)
    await asyncio.sleep(SETTLE_S)


async def assert_one_outcome(inc: Incident, store: RunStore, ts: str, *, ok: bool, steps: list[str]) -> RunResult:
    """Exactly one ✅/❌, one last reply and one trace in the thread; the trace has every step and is the
    store's; the run is finished in the store."""
    assert inc.outcomes(ts) == ["white_check_mark" if ok else "x"], inc.texts(ts)
    assert sum(text.endswith("|Open the thread>") for text in inc.texts(ts)) == 1, inc.texts(ts)  # sent to the channel
    [trace] = inc.traces(ts)
    assert [step.call.name for step in trace.steps if step.call] == steps
    assert all(step.observation or step.error for step in trace.steps if step.call and step.call.name != "finish")
    record = await store.runs.run_in_thread(CHANNEL, ts)
    assert record is not None
    assert (record.run_id, record.status, record.owner) == (trace.run_id, RunStatus.FINISHED, "")
    assert RunResult.from_json(record.trace_json) == trace
    return trace


def logged(bot: BotProcess, event: str) -> list[dict[str, Any]]:
    """The process's JSON log lines of one event."""
    return [entry for entry in bot.logged() if entry.get("event") == event]


async def audit_kinds(store: RunStore, run_id: str) -> list[str]:
    return [event.kind for event in await store.audit.audit_log(run_id=run_id)]
