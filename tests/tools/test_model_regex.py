"""Regular expressions from the model run in linear time: a backtracking pattern never freezes the process.

Each test serves `/healthz` from the test's own event loop and polls it from another process while the tool runs:
with a backtracking engine the loop stops and the polls go unanswered; with RE2 every poll is answered.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from aiohttp import web

from kernel import ErrorKind, ToolFailure
from opsagent_tools.logs import LogsSettings, log_tools
from opsagent_tools.metrics.files import FileMetricsClient, write_series
from opsagent_tools.model_regex import compile_model_regex
from testkit.fakes.log_servers import NOW
from testkit.servers.local_server import LocalServer
from worlds.dispatch import search_logs

BACKTRACKING = "(a+)+$"
"""Nested quantifiers: a backtracking engine tries every split of the a's before giving up on the '!'."""
TRAP = "a" * 26 + "!"
"""Against BACKTRACKING, about 2^27 steps for Python's `re`: the loop would stand still for many seconds."""


class Health(LocalServer):
    """`/healthz` served by the test's own event loop, as `opsagent serve` serves it beside its runs."""

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/healthz", self._healthz)

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")


LIVENESS_POLLER = """
import sys, threading, time, urllib.request
url = sys.argv[1]
def poll():
    try:
        with urllib.request.urlopen(url, timeout=1.0) as answer:
            return answer.status == 200
    except OSError:
        return False
print("ready" if poll() else "down", flush=True)
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
answered = missed = 0
while not done.is_set():
    if poll():
        answered += 1
    else:
        missed += 1
    time.sleep(0.05)
answered += poll()
print(f"{answered} {missed}", flush=True)
"""
"""In its own process: one poll, "ready", then a poll every 50 ms (1 s timeout each) until stdin closes."""


@asynccontextmanager
async def polled_health() -> AsyncIterator[list[int]]:
    """While the body runs, another process polls this loop's /healthz; yields [answered, missed] once it ends."""
    tally: list[int] = []
    async with Health() as health:
        poller = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            LIVENESS_POLLER,
            f"{health.url}/healthz",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        assert poller.stdin is not None
        assert poller.stdout is not None
        assert (await poller.stdout.readline()).strip() == b"ready"
        try:
            yield tally
        finally:
            poller.stdin.close()
            report = (await poller.stdout.readline()).split()
            await poller.wait()
        tally.extend(int(n) for n in report)


def log_file(directory: Path, lines: list[str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "order-service.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return directory


async def test_a_backtracking_log_query_returns_while_the_loop_keeps_answering(tmp_path: Path) -> None:
    stamp = (NOW - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    ordinary = [f"{stamp} ERROR [order-service] upstream timeout #{n}" for n in range(2000)]
    directory = log_file(tmp_path / "logs", [*ordinary, f"{stamp} ERROR [order-service] {TRAP}"])
    tools = log_tools(LogsSettings(files={"directory": directory}, timeout_s=5), now=lambda: NOW)
    async with polled_health() as tally:
        outcome = await search_logs(tools, service="order-service", query=f"re:{BACKTRACKING}")
    assert outcome.error is None, outcome.text
    assert ": 0 lines" in outcome.text.splitlines()[0]  # no line ends in a's: the answer is right, and came back
    answered, missed = tally
    assert missed == 0
    assert answered >= 1


async def test_a_backtracking_label_regex_returns_while_the_loop_keeps_answering(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    at = NOW.timestamp()
    write_series(path, [("up", {"service": TRAP}, [(at, 1.0)]), ("up", {"service": "aaaa"}, [(at, 1.0)])])
    client = FileMetricsClient(path)
    async with polled_health() as tally:
        found = await client.query(f'up{{service=~"{BACKTRACKING}"}}', NOW)
    assert [series.labels["service"] for series in found] == ["aaaa"]  # fully anchored, as in Prometheus
    answered, missed = tally
    assert missed == 0
    assert answered >= 1


@pytest.mark.parametrize(
    ("pattern", "names"),
    [
        (r"(\w+) \1", "backreferences"),
        (r"(?P<x>a)(?P=x)", "named backreferences"),
        (r"error(?= timeout)", "lookahead"),
        (r"(?!health)check", "negative lookahead"),
        (r"(?<=user=)bob", "lookbehind"),
        (r"(?>a+)b", "atomic groups"),
        (r"a*+b", "possessive quantifiers"),
        (r"done\Z", "\\z for the end of the text"),
    ],
)
async def test_what_the_linear_engine_cannot_run_is_refused_with_a_rewrite_hint(
    tmp_path: Path, pattern: str, names: str
) -> None:
    directory = log_file(tmp_path / "logs", [f"{NOW:%Y-%m-%dT%H:%M:%SZ} ERROR [order-service] x"])
    tools = log_tools(LogsSettings(files={"directory": directory}), now=lambda: NOW)
    outcome = await search_logs(tools, service="order-service", query=f"re:{pattern}")
    assert outcome.error is not None
    assert outcome.error.kind is ErrorKind.EXCEPTION
    assert names in outcome.text
    assert "cannot run" in outcome.text
    assert "Rewrite it without that feature" in outcome.text


def test_an_overlong_pattern_is_refused_and_ordinary_ones_compile() -> None:
    with pytest.raises(ToolFailure, match="limited to 1,000"):
        compile_model_regex("a" * 1001, where="The query")
    assert compile_model_regex(r"(?i)time(d)? ?out", where="The query").search("request TIMED OUT") is not None
    assert compile_model_regex(r"order-(\d+)", where="The query").fullmatch("order-42") is not None
