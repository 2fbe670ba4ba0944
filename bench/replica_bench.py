"""Suite (r), replicas on one PostgreSQL: investigations per minute and click-to-action latency, 1 and 2 replicas.

Each replica is a process of its own (`python -m bench.replica_bench STORE_URL SLACK_API_URL`): the app in HTTP
mode on its own port. This process runs PostgreSQL (testkit/servers/postgres.py), the fake Slack, the mentions and
the clicker. Action times are `time.perf_counter()` in the replica, click times the same clock here: on Linux
it is CLOCK_MONOTONIC, one clock for every process on the machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import statistics
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from bench.slack_bench import ROOT, finished_in_slack, machine_busy_s, percentile, serving_app
from bot.runs.service import AgentFactory
from bot.slack.action_ids import APPROVE
from kernel import (
    Agent,
    Budget,
    ChatRequest,
    ConfirmHook,
    ScriptedModel,
    SideEffectMode,
    SideEffectPolicy,
    ToolRegistry,
    text_turn,
)

# isort: split
# tests/ is on the import path once bench.slack_bench is imported (it puts it there for SlackFake).
from testkit.fakes.slack_api import SlackFake
from testkit.fakes.slack_requests import app_mention_event, block_actions_payload, signed_action, signed_event
from testkit.fakes.slack_workspace import BOT_USER_ID, SIGNING_SECRET, TEAM_ID
from testkit.servers.postgres import PostgresServer, running_postgres
from testkit.slack_bot import ALICE, BOB, CHANNEL, USERS, approval_id_in

MODEL_LATENCY_S = 0.05
"""Every model call of every run sleeps this long (ScriptedModel's `latency`)."""
PROBES = 2
"""Read-only tool steps before the side effect; then `rollback_deployment` (approval), then finish."""
RUNS = 150
"""Investigations per configuration and repetition, all mentioned at once."""
REPS = 2
"""Repetitions of each configuration."""
DRAIN_S = 60.0
"""How long to wait, once the mentions are sent, for every run to end with ✅."""
SERVICE = re.compile(r"\bsvc-\d+\b")


def _service(request: ChatRequest) -> str:
    """The service the on-call named in the task, read from the first message as a model would."""
    found = SERVICE.search(str(request.messages[0].content))
    if found is None:
        raise ValueError(f"no svc-N in the task: {str(request.messages[0].content)[:200]!r}")
    return found.group()


def agent_factory(executed: dict[str, list[float]]) -> AgentFactory:
    """Runs of `PROBES` instant checks, one rollback behind an approval, then finish; each model call takes
    `MODEL_LATENCY_S`. The rollback records when it ran, by service, in `executed`."""
    tools = ToolRegistry()

    @tools.register
    async def query_metrics(service: str, check: int) -> str:
        """Query a service's 5xx rate; answers at once."""
        return f"{service} check {check}: 5xx at 12% since t-10m"

    @tools.register(side_effect=True)
    async def rollback_deployment(service: str, to_version: str) -> str:
        """Roll a service back; the moment it runs is what a click's latency is measured to."""
        executed.setdefault(service, []).append(time.perf_counter())
        return f"rolled back {service} to {to_version}"

    def probe(i: int) -> Any:
        return lambda request: text_turn("query_metrics", f"Check {i}.", service=_service(request), check=i)

    turns: list[Any] = [probe(i) for i in range(PROBES)]
    turns.append(
        lambda request: text_turn("rollback_deployment", "Why: the deploy.", service=_service(request), to_version="v1")
    )
    turns.append(text_turn("finish", "Known: all.", answer="Rolled back; 5xx is back to normal."))
    budget, policy = Budget(max_steps=PROBES + 5), SideEffectPolicy(mode=SideEffectMode.FULL)

    def agent_for(confirm: ConfirmHook) -> Agent:
        model = ScriptedModel(turns, latency=MODEL_LATENCY_S, record=False)
        return Agent(llm=model, tools=tools, budget=budget, policy=policy, confirm=confirm)

    return agent_for


# --- a replica (a child process) ------------------------------------------------------------------------------


async def replica(store_url: str, api_url: str) -> None:
    """Serve the app on the store and the Slack given and print its events URL; when stdin closes, shut down and
    print when each action ran and the CPU time used until then. One JSON object a line on stdout."""
    lines = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(lines), sys.stdin)
    executed: dict[str, list[float]] = {}
    url = None if store_url == "sqlite" else store_url
    async with serving_app(api_url, agent_factory(executed), store_url=url, approvers=[ALICE]) as (services, events):
        await services.start()
        cpu = time.process_time()
        print(json.dumps({"url": events}), flush=True)
        await lines.read()
        cpu_s = time.process_time() - cpu
    print(json.dumps({"executed": executed, "cpu_s": cpu_s}), flush=True)


@dataclass
class _Replica:
    process: asyncio.subprocess.Process
    url: str
    report: dict[str, Any] = field(default_factory=dict)


@contextlib.asynccontextmanager
async def _replicas(count: int, store_url: str, api_url: str) -> AsyncIterator[list[_Replica]]:
    """`count` replica processes on one store, started one after the other (the first migrates the schema);
    on exit each is shut down and its report read."""
    started: list[_Replica] = []
    try:
        for _ in range(count):
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bench.replica_bench",
                store_url,
                api_url,
                cwd=ROOT,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                limit=2**24,
            )
            assert process.stdout is not None
            hello = await asyncio.wait_for(process.stdout.readline(), 60)
            if not hello:
                raise RuntimeError("a replica exited before serving (its error is above)")
            started.append(_Replica(process, json.loads(hello)["url"]))
        yield started
        for one in started:
            assert one.process.stdin is not None
            assert one.process.stdout is not None
            one.process.stdin.close()
            line = await asyncio.wait_for(one.process.stdout.readline(), 30)
            if not line:
                raise RuntimeError("a replica exited without reporting (its error is above)")
            one.report = json.loads(line)
            await asyncio.wait_for(one.process.wait(), 10)
    finally:
        for one in started:
            if one.process.returncode is None:
                one.process.kill()
                await one.process.wait()


def postgres_cpu_s(server: PostgresServer) -> float:
    """CPU seconds PostgreSQL has used so far: the postmaster, its live backends, and the backends it has reaped
    (its `cutime`/`cstime`), from /proc."""
    postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process has just exited
            continue
        pid, ppid = int(stat.parent.name), int(fields[1])
        if pid == postmaster:
            total += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
        elif ppid == postmaster:
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


# --- one configuration ----------------------------------------------------------------------------------------


class _Traffic:
    """What Slack sends the replicas: signed mentions, alternating between them, and a click on Approve as soon as
    an approval message is posted, to the replica after the one running the run (with one replica, that one)."""

    def __init__(self, slack: SlackFake, urls: list[str], http: aiohttp.ClientSession) -> None:
        self.slack, self.urls, self.http = slack, urls, http
        self.asked: dict[str, tuple[str, int]] = {}
        """Mention ts -> (the service it names, the replica it went to)."""
        self.clicked: dict[str, float] = {}
        """Service -> when its click was POSTed."""
        self.statuses: list[int] = []

    def mentions(self, runs: int) -> list[tuple[str, bytes, dict[str, str]]]:
        """Seed `runs` mentions in the fake (reactions need them), each naming its own service; their deliveries."""
        deliveries = []
        for i in range(runs):
            text = f"<@{BOT_USER_ID}> svc-{i} 5xx at 12%, find the cause and roll back"
            ts = self.slack.add_message(CHANNEL, text, user=BOB).ts
            self.asked[ts] = (f"svc-{i}", i % len(self.urls))
            event = app_mention_event(CHANNEL, BOB, text, ts)
            deliveries.append((self.urls[i % len(self.urls)], *signed_event(SIGNING_SECRET, event)))
        return deliveries

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> None:
        async with self.http.post(url, data=body, headers=headers) as response:
            await response.read()
            self.statuses.append(response.status)

    async def click(self, message: Any, approval_id: str) -> None:
        service, owner = self.asked[message.thread_ts]
        response_url = self.slack.response_url(CHANNEL, message.ts, user=ALICE)
        payload = block_actions_payload(
            ALICE, TEAM_ID, CHANNEL, message.ts, message.thread_ts, APPROVE, approval_id, response_url=response_url
        )
        body, headers = signed_action(SIGNING_SECRET, payload)
        self.clicked[service] = time.perf_counter()
        await self.post(self.urls[(owner + 1) % len(self.urls)], body, headers)

    async def clicker(self) -> None:
        """Watch what the bot posts (every 2 ms) and click each approval; until cancelled."""
        seen = 0
        async with asyncio.TaskGroup() as clicks:
            while True:
                for message in self.slack.posted[seen:]:
                    if (approval_id := approval_id_in(message)) is not None:
                        clicks.create_task(self.click(message, approval_id))
                seen = len(self.slack.posted)
                await asyncio.sleep(0.002)

    async def finished(self) -> dict[str, float]:
        """When each run was first seen ending with ✅ (polled every 5 ms), until all have or `DRAIN_S` passes."""
        finished: dict[str, float] = {}
        deadline = time.monotonic() + DRAIN_S
        while len(finished) < len(self.asked) and time.monotonic() < deadline:
            done = [ts for ts in self.asked if ts not in finished and finished_in_slack(self.slack, CHANNEL, ts)]
            finished |= dict.fromkeys(done, time.perf_counter())
            await asyncio.sleep(0.005)
        return finished


async def _configuration(runs: int, replicas: int, store_url: str, postgres: PostgresServer) -> dict[str, Any]:
    """`runs` mentions POSTed at once to `replicas` replicas on `store_url` ("sqlite": a file of the replica's own)."""
    async with (
        SlackFake(users=USERS) as slack,
        _replicas(replicas, store_url, slack.api_url) as started,
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http,
    ):
        traffic = _Traffic(slack, [one.url for one in started], http)
        mentions = traffic.mentions(runs)
        busy, database, cpu, began = (
            machine_busy_s(),
            postgres_cpu_s(postgres),
            time.process_time(),
            time.perf_counter(),
        )
        clicking = asyncio.create_task(traffic.clicker())
        async with asyncio.TaskGroup() as sends:
            for url, body, headers in mentions:
                sends.create_task(traffic.post(url, body, headers))
        finished = await traffic.finished()
        wall_s = (max(finished.values()) if finished else time.perf_counter()) - began
        here_cpu_s, database_cpu_s, busy_after = time.process_time() - cpu, postgres_cpu_s(postgres), machine_busy_s()
        clicking.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await clicking
    clicked, statuses = traffic.clicked, traffic.statuses
    executed: dict[str, list[float]] = {}
    for one in started:
        for service, times in one.report["executed"].items():
            executed.setdefault(service, []).extend(times)
    return {
        "completed": len(finished),
        "wall_s": wall_s,
        "latencies_ms": [(at[0] - clicked[service]) * 1000 for service, at in executed.items() if service in clicked],
        "clicks": len(clicked),
        "actions": sum(len(at) for at in executed.values()),
        "actions_twice": sum(len(at) > 1 for at in executed.values()),
        "http_not_200": sum(status != 200 for status in statuses),
        "replica_cpu_s": sum(one.report["cpu_s"] for one in started),
        "slack_side_cpu_s": here_cpu_s,
        "postgres_cpu_s": database_cpu_s - database,
        "machine_busy_s": None if busy is None or busy_after is None else busy_after - busy,
    }


def _pooled(store: str, replicas: int, runs: int, reps: list[dict[str, Any]]) -> dict[str, Any]:
    """One configuration's repetitions as one: runs and wall times summed, click latencies pooled."""
    wall_s, latencies = sum(rep["wall_s"] for rep in reps), [ms for rep in reps for ms in rep["latencies_ms"]]
    busy = [rep["machine_busy_s"] for rep in reps if rep["machine_busy_s"] is not None]
    total = {key: sum(rep[key] for rep in reps) for key in ("completed", "clicks", "actions", "actions_twice")}
    return {
        "store": store,
        "replicas": replicas,
        "runs": runs * len(reps),
        **total,
        "wall_s": wall_s,
        "per_minute": total["completed"] / wall_s * 60,
        "per_minute_each": [rep["completed"] / rep["wall_s"] * 60 for rep in reps],
        "click_to_action_ms": {
            "p50": statistics.median(latencies) if latencies else float("nan"),
            "p95": percentile(latencies, 0.95) if latencies else float("nan"),
            "max": max(latencies, default=float("nan")),
        },
        "http_not_200": sum(rep["http_not_200"] for rep in reps),
        "replica_cpu_s": sum(rep["replica_cpu_s"] for rep in reps),
        "slack_side_cpu_s": sum(rep["slack_side_cpu_s"] for rep in reps),
        "postgres_cpu_s": sum(rep["postgres_cpu_s"] for rep in reps),
        "machine_busy_cores": sum(busy) / wall_s if len(busy) == len(reps) else None,
    }


CONFIGURATIONS = (("sqlite", 1), ("postgresql", 1), ("postgresql", 2))
"""SQLite in one process (the reference), then one and two replicas on one PostgreSQL."""


async def replicas(runs: int = RUNS, reps: int = REPS) -> dict[str, Any]:
    """Each configuration `reps` times, interleaved (so the machine's other load falls on all alike), each time on
    a fresh database; the rows pooled over the repetitions, and the ratios two replicas / one."""
    measured: dict[tuple[str, int], list[dict[str, Any]]] = {config: [] for config in CONFIGURATIONS}
    with running_postgres() as postgres:
        for _ in range(reps):
            for store, count in CONFIGURATIONS:
                url = "sqlite" if store == "sqlite" else await postgres.new_database()
                measured[store, count].append(await _configuration(runs, count, url, postgres))
    sqlite, one, two = (_pooled(store, count, runs, measured[store, count]) for store, count in CONFIGURATIONS)
    return {
        "runs": runs,
        "reps": reps,
        "probes": PROBES,
        "model_latency_s": MODEL_LATENCY_S,
        "rows": [sqlite, one, two],
        "ratios": {
            "per_minute": two["per_minute"] / one["per_minute"],
            "p50": two["click_to_action_ms"]["p50"] / one["click_to_action_ms"]["p50"],
            "p95": two["click_to_action_ms"]["p95"] / one["click_to_action_ms"]["p95"],
        },
    }


if __name__ == "__main__":
    asyncio.run(replica(*sys.argv[1:3]))
