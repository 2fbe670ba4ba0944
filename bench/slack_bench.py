"""Suite (s), the Slack bot in HTTP mode: event-to-ack latency at 50 mentions/s, Web API calls per agent step, and
the summary's updates against Slack's limits; Slack is `testkit/fakes/slack_api.SlackFake`, a real HTTP server.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import aiohttp
import structlog
from slack_bolt.async_app import AsyncApp

from bot.access.settings import AccessSettings
from bot.app import SlackServices, create_app
from bot.runs.service import AgentFactory
from bot.serve import start_http
from bot.slack.settings import POST_INTERVAL_S, SlackSecrets, SlackSettings
from bot.store.factory import opened_store
from kernel import Agent, Budget, ConfirmHook, ScriptedModel, ToolRegistry, text_turn
from testkit.fakes.slack_api import MAX_TEXT, SlackFake
from testkit.fakes.slack_requests import app_mention_event, signed_event
from testkit.fakes.slack_workspace import BOT_TOKEN, BOT_USER_ID, SIGNING_SECRET

ROOT = Path(__file__).resolve().parents[1]

RATE = 50
"""Mentions per second in the latency part."""
SECONDS = 10
CHANNELS = 50
"""The mentions go round this many channels, each in a thread of its own."""
RUN_STEPS = 2
"""Tool steps of each run in the latency part (then finish)."""
LONG_STEPS = 20
"""Tool steps of the investigation whose Web API calls are counted (then finish)."""
MAX_RUNS = 1000
"""`max_concurrent_runs` (and no rate limits): high, so that no mention is turned away; with `post_interval_s=0` the outbox does not
pace posts, so neither the cap nor Slack's per-channel pacing is what is measured."""
DRAIN_S = 15.0
"""How long to wait, once the last mention is acked, for every run to post its last reaction."""
ACK_P99_TARGET_MS = 50.0
CALLS_PER_STEP_TARGET = 1.2
PACED_STEP_S = 1.5
"""Each step of the paced investigation takes this long: slower than Slack's spacing of posts, as most are."""
USER = "U0BENCH"
ONCE_PER_PROCESS = ("auth.test",)
"""Calls made once in the app's life (Bolt's authorization on the first event), not by each run."""


def _tools(step_s: float = 0.0) -> ToolRegistry:
    tools = ToolRegistry()

    @tools.register
    async def probe(check: int) -> str:
        """Run a health check; answers after `step_s`."""
        await asyncio.sleep(step_s)
        return f"check {check}: ok"

    return tools


def _factory(steps: int, step_s: float = 0.0) -> Callable[[ConfirmHook], Agent]:
    """A fresh scripted model per run: `steps` probes (each taking `step_s`, each third one stating a new working
    hypothesis, which the summary shows at once), then finish."""
    tools, budget = _tools(step_s), Budget(max_steps=steps + 5, max_seconds=steps * step_s + 300)
    thoughts = [f"Check {i}." + (f"\nHypothesis: cause {i} (likely)" if i % 3 == 0 else "") for i in range(steps)]
    turns = [text_turn("probe", thoughts[i], check=i) for i in range(steps)]
    turns.append(text_turn("finish", "Known: all.", answer=f"All {steps} checks passed; nothing is wrong."))

    def agent_for(confirm: ConfirmHook) -> Agent:
        return Agent(llm=ScriptedModel(turns, record=False), tools=tools, budget=budget, confirm=confirm)

    return agent_for


@contextlib.asynccontextmanager
async def serving_app(
    api_url: str,
    agent_factory: AgentFactory,
    *,
    store_url: str | None = None,
    approvers: Sequence[str] = (),
    post_interval_s: float = 0.0,
) -> AsyncIterator[tuple[SlackServices, str]]:
    """The app on a free port, on the Slack at `api_url`, with its `/slack/events` URL; log lines are formatted
    as usual, then dropped (they would mix with the report). The run store: `store_url`, else a temporary SQLite
    file; `post_interval_s` is the per-channel spacing of messages (0: none)."""
    saved = structlog.get_config()
    structlog.configure(logger_factory=structlog.ReturnLoggerFactory())
    try:
        secrets = SlackSecrets(BOT_TOKEN, SIGNING_SECRET, None, api_url)
        settings = SlackSettings(post_interval_s=post_interval_s, approvers=list(approvers))
        access = AccessSettings(
            max_concurrent_runs=MAX_RUNS, runs_per_user_per_hour=None, runs_per_channel_per_hour=None
        )
        with tempfile.TemporaryDirectory() as tmp:
            async with opened_store(store_url or f"sqlite:///{tmp}/runs.db") as store:
                services = await create_app(settings, secrets, agent_factory, store=store, access=access)
                runner = await start_http(services, "127.0.0.1", 0)
                try:
                    yield services, f"http://127.0.0.1:{runner.addresses[0][1]}/slack/events"
                finally:
                    await services.close(timeout_s=5)
                    await runner.cleanup()
    finally:
        structlog.configure(**saved)


def _mention(slack: SlackFake, channel: str, text: str) -> tuple[str, bytes, dict[str, str]]:
    """Seed the human message in the fake (reactions need it) and sign its `app_mention` delivery."""
    ts = slack.add_message(channel, f"<@{BOT_USER_ID}> {text}", user=USER).ts
    body, headers = signed_event(SIGNING_SECRET, app_mention_event(channel, USER, f"<@{BOT_USER_ID}> {text}", ts))
    return ts, body, headers


def finished_in_slack(slack: SlackFake, channel: str, ts: str) -> bool:
    """The run's last act: ✅ on the mention."""
    return "white_check_mark" in slack.reactions.get((channel, ts), [])


async def _until(condition: Callable[[], bool], within: float) -> bool:
    """Poll the fake's state until `condition()` holds or `within` seconds pass."""
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def machine_busy_s() -> float | None:
    """CPU seconds all processes have used so far, from /proc/stat (None where there is none)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields)
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _summary(values: list[float]) -> dict[str, float]:
    return {"p50": statistics.median(values), "p99": percentile(values, 0.99), "max": max(values)}


# --- the Slack side of the latency part (a child process) -------------------------------------------------


async def slack_side() -> None:
    """Serve the fake Slack, print its API URL; read the plan, send the mentions on schedule, wait for the runs,
    print what happened; exit when stdin closes. One JSON object a line on stdout and stdin."""
    lines = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(lines), sys.stdin)
    async with SlackFake(users={USER: {"name": "bench"}}) as slack:
        print(json.dumps({"api_url": slack.api_url}), flush=True)
        plan = json.loads(await lines.readline())
        cpu = time.process_time()
        rate, total = plan["rate"], plan["rate"] * plan["seconds"]
        mentions = []
        for i in range(total):
            channel = f"C{i % plan['channels']:04d}"
            mentions.append((channel, *_mention(slack, channel, f"svc-{i} 5xx at 12%, find the root cause")))
        latencies: list[float] = []
        lateness: list[float] = []
        statuses: Counter[str] = Counter()
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:

            async def post(body: bytes, headers: dict[str, str]) -> None:
                sent = time.perf_counter()
                try:
                    async with http.post(plan["url"], data=body, headers=headers) as response:
                        await response.read()
                except (aiohttp.ClientError, OSError) as exc:  # counted, not fatal: the report shows it
                    statuses[type(exc).__name__] += 1
                    return
                latencies.append((time.perf_counter() - sent) * 1000)
                statuses[str(response.status)] += 1

            start = time.perf_counter()
            async with asyncio.TaskGroup() as posts:
                for i, (_, _, body, headers) in enumerate(mentions):
                    due = start + i / rate
                    if (wait := due - time.perf_counter()) > 0:
                        await asyncio.sleep(wait)
                    lateness.append((time.perf_counter() - due) * 1000)
                    posts.create_task(post(body, headers))
            sent_s = time.perf_counter() - start
        all_done = await _until(lambda: all(finished_in_slack(slack, ch, ts) for ch, ts, _, _ in mentions), DRAIN_S)
        result = {
            "latencies_ms": latencies,
            "statuses": dict(statuses),
            "send_lateness_max_ms": max(lateness),
            "send_s": sent_s,
            "drain_s": time.perf_counter() - start - sent_s,
            "all_done": all_done,
            "completed": sum(finished_in_slack(slack, ch, ts) for ch, ts, _, _ in mentions),
            "api_calls": len(slack.calls),
            "api_errors": sum(not call.ok for call in slack.calls),
            "cpu_s": time.process_time() - cpu,
        }
        print(json.dumps(result), flush=True)
        await lines.read()  # until the app has shut down and closed our stdin


# --- (s1) event-to-ack latency ------------------------------------------------------------------------------


class _AppProbe:
    """Inside the app: the time of each Bolt `async_dispatch` (verification, middleware, ack; the listener runs
    after the response), and how late the event loop wakes a task that sleeps 5 ms (the loop's queue)."""

    TICK_S = 0.005

    def __init__(self, app: AsyncApp) -> None:
        self.dispatch_ms: list[float] = []
        self.lag_ms: list[float] = []
        original = app.async_dispatch

        async def timed(request: Any) -> Any:
            began = time.perf_counter()
            try:
                return await original(request)
            finally:
                self.dispatch_ms.append((time.perf_counter() - began) * 1000)

        app.async_dispatch = timed  # Bolt's aiohttp server looks it up on the app for each request
        self._watch = asyncio.create_task(self._lag())

    async def _lag(self) -> None:
        while True:
            began = time.perf_counter()
            await asyncio.sleep(self.TICK_S)
            self.lag_ms.append((time.perf_counter() - began - self.TICK_S) * 1000)

    async def stop(self) -> None:
        self._watch.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._watch


async def ack_latency(rate: int = RATE, seconds: int = SECONDS) -> dict[str, Any]:
    """(s1) `rate × seconds` signed mentions on a fixed schedule, none waiting for an earlier answer; each POST
    timed from send to its HTTP 200; then a bounded wait for every run to end in Slack.

    Slack (the fake Web API and the sender of the events) is a child process, `python -m bench.slack_bench`,
    so that this process runs the app alone, as in production where Slack is remote."""
    slack = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.slack_bench",
        cwd=ROOT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=2**24,
    )
    assert slack.stdin is not None
    assert slack.stdout is not None
    try:
        hello = await asyncio.wait_for(slack.stdout.readline(), 30)
        if not hello:
            raise RuntimeError("the Slack side exited before serving")
        async with serving_app(json.loads(hello)["api_url"], _factory(RUN_STEPS)) as (services, url):
            probe = _AppProbe(services.app)
            cpu, busy, began = time.process_time(), machine_busy_s(), time.perf_counter()
            plan = {"url": url, "rate": rate, "seconds": seconds, "channels": CHANNELS}
            slack.stdin.write(json.dumps(plan).encode() + b"\n")
            await slack.stdin.drain()
            line = await asyncio.wait_for(slack.stdout.readline(), seconds + DRAIN_S + 30)
            if not line:
                raise RuntimeError("the Slack side exited before reporting")
            app_cpu_s, app_wall_s = time.process_time() - cpu, time.perf_counter() - began
            busy_after = machine_busy_s()
            await probe.stop()
            still_running = len(services.investigations.active)
        slack.stdin.close()
        await asyncio.wait_for(slack.wait(), 10)
    finally:
        if slack.returncode is None:
            slack.kill()
            await slack.wait()
    seen = json.loads(line)
    ack, slack_cpu_s = _summary(seen.pop("latencies_ms")), seen.pop("cpu_s")
    total = rate * seconds
    others = None if busy is None or busy_after is None else max(0.0, busy_after - busy - app_cpu_s - slack_cpu_s)
    return {
        "rate_per_s": rate,
        "seconds": seconds,
        "mentions": total,
        "channels": CHANNELS,
        "run_steps": RUN_STEPS,
        "max_concurrent_runs": MAX_RUNS,
        "post_interval_s": 0.0,
        "ack_ms": ack,
        "dispatch_ms": _summary(probe.dispatch_ms),
        "loop_lag_ms": _summary(probe.lag_ms),
        "app_cpu_s": app_cpu_s,
        "app_wall_s": app_wall_s,
        "still_running": still_running,
        "slack_cpu_s": slack_cpu_s,
        "others_cpu_s": others,
        **seen,
        "target_p99_ms": ACK_P99_TARGET_MS,
        "pass": ack["p99"] < ACK_P99_TARGET_MS and seen["statuses"] == {"200": total},
    }


# --- (s2) Web API calls per agent step ------------------------------------------------------------------------


async def calls_per_step(steps: int = LONG_STEPS, step_s: float = 0.0) -> dict[str, Any]:
    """(s2) One `steps`-step investigation (then finish), each step taking `step_s`, at the default per-channel
    spacing of messages (as in production): every Web API call the fake got for it, per step; and the summary's
    updates against Slack's limits, which the fake enforces (one update a second per message, 50 a minute)."""
    channel = "C0INCIDENT"
    async with SlackFake(users={USER: {"name": "bench"}}) as slack:
        slack.rate_limit("chat.update", per_second=1.0, per_message=True, burst=1)
        slack.rate_limit("chat.update", per_second=50 / 60, per_channel=False, burst=50)
        async with serving_app(slack.api_url, _factory(steps, step_s), post_interval_s=POST_INTERVAL_S) as (_, url):
            before = len(slack.calls)  # create_app's auth.test
            ts, body, headers = _mention(slack, channel, "checkout 5xx at 12%, find the root cause")
            async with aiohttp.ClientSession() as http, http.post(url, data=body, headers=headers) as response:
                status = response.status
            finished = await _until(lambda: finished_in_slack(slack, channel, ts), DRAIN_S + steps * step_s)
            await _until(lambda: _summary_ended(slack, channel, ts), DRAIN_S)
            await asyncio.sleep(0.2)  # anything the run posted after its last reaction is counted too
            calls = slack.calls[before:]
    by_method = Counter(call.method for call in calls)
    per_run = sum(n for method, n in by_method.items() if method not in ONCE_PER_PROCESS)
    failed = [f"{call.method}: {call.status} {call.error}" for call in calls if not call.ok]
    truncated = sum(len(str(call.params.get("text") or "")) > MAX_TEXT for call in calls)
    updates = [call for call in calls if call.method == "chat.update" and call.ok]
    by_message: dict[str, list[float]] = {}
    for call in updates:
        by_message.setdefault(str(call.params.get("ts")), []).append(call.at)
    gaps = [b - a for times in by_message.values() for a, b in itertools.pairwise(times)]
    times = sorted(call.at for call in updates)
    busiest = max((sum(1 for t in times if start <= t < start + 60) for start in times), default=0)
    summary = slack.thread(channel, ts)[1] if len(slack.thread(channel, ts)) > 1 else None
    return {
        "steps": steps,
        "step_s": step_s,
        "status": status,
        "finished": finished,
        "calls": len(calls),
        "calls_per_run": per_run,
        "by_method": dict(by_method.most_common()),
        "per_step": len(calls) / steps,
        "per_step_per_run": per_run / steps,
        "errors": len(failed),
        "failed": failed,
        "truncated": truncated,
        "text_limit": MAX_TEXT,
        "summary_updates": len(by_message.get(summary.ts, [])) if summary is not None else 0,
        "updates": len(updates),
        "min_update_gap_s": min(gaps) if gaps else None,
        "updates_in_busiest_minute": busiest,
        "refused_updates": sum(1 for call in calls if call.method == "chat.update" and call.status == 429),
        "target": CALLS_PER_STEP_TARGET,
        "pass": finished and len(calls) / steps <= CALLS_PER_STEP_TARGET,
        "errors_pass": finished and not failed and not truncated,
        "limits_pass": finished and not failed and (not gaps or min(gaps) >= 1.0) and busiest <= 50,
    }


def _summary_ended(slack: SlackFake, channel: str, ts: str) -> bool:
    """The summary shows the verdict: its Stop button is gone."""
    thread = slack.thread(channel, ts)
    return len(thread) > 1 and not any(block.get("type") == "actions" for block in thread[1].blocks)


async def slack(seconds: int = SECONDS) -> dict[str, Any]:
    """Both parts; the latency part sends for `seconds`."""
    return {
        "ack": await ack_latency(seconds=seconds),
        "calls": await calls_per_step(),
        "paced": await calls_per_step(step_s=PACED_STEP_S),
    }


if __name__ == "__main__":
    asyncio.run(slack_side())
