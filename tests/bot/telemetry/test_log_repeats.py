"""A flood of one warning or error is a few lines and a count: the limiter's rules with a clock the test moves, our
own lines and a library's through the logging `opsagent` sets up, and asyncio's real flood of failed accepts in a
process past its open-file limit."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
from pathlib import Path

import structlog

from bot.telemetry.log_repeats import BURST, MAX_EVENTS, OTHER_EVENTS, SUMMARY, Dropped, RepeatLimiter

ROOT = Path(__file__).resolve().parents[3]
ACCEPT_FAILED = "socket.accept() out of system resource"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_past_the_burst_an_event_is_counted_and_the_count_comes_with_the_first_line_after_the_interval() -> None:
    clock = Clock()
    limiter = RepeatLimiter(burst=3, interval_s=10, clock=clock)
    assert [limiter.admit("error boom")[0] for _ in range(5)] == [True, True, True, False, False]
    assert limiter.admit("warning other") == (True, []), "another event has its own burst"
    clock.now = 9.9
    assert limiter.admit("error boom") == (False, [])
    clock.now = 10.0
    assert limiter.admit("warning other") == (True, [Dropped("error boom", 3)])
    assert limiter.admit("error boom") == (True, []), "a new interval"


def test_what_was_dropped_in_an_interval_not_over_yet_is_counted_at_the_end() -> None:
    limiter = RepeatLimiter(burst=1, interval_s=10, clock=Clock())
    for _ in range(4):
        limiter.admit("error boom")
    limiter.admit("error quiet")
    assert limiter.pending() == [Dropped("error boom", 3)]
    assert limiter.pending() == [], "counted once"


def test_past_the_events_it_counts_at_once_the_rest_are_counted_together() -> None:
    limiter = RepeatLimiter(burst=1, interval_s=10, clock=Clock())
    for n in range(MAX_EVENTS):
        limiter.admit(f"error {n}")
    assert [limiter.admit(f"error new {n}")[0] for n in range(3)] == [True, False, False]
    assert Dropped(OTHER_EVENTS, 2) in limiter.pending()


def test_our_repeated_warnings_are_cut_to_the_burst_and_counted_and_info_lines_never_are(
    logging_as_configured, capsys
) -> None:
    logging_as_configured(json=True)
    log = structlog.get_logger("opsagent.http")
    for n in range(3 * BURST):
        log.warning("http_connection_evicted", client="203.0.113.7", n=n)
        log.info("run_finished", run_id=f"r{n}")
    logging_as_configured(json=True)  # set up again: the last set-up's counts are written
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert [line["n"] for line in lines if line["event"] == "http_connection_evicted"] == list(range(BURST))
    assert len([line for line in lines if line["event"] == "run_finished"]) == 3 * BURST
    [summary] = [line for line in lines if line["event"] == SUMMARY]
    assert (summary["repeated"], summary["dropped"]) == ("warning http_connection_evicted", 2 * BURST)


def test_a_library_error_repeated_with_different_details_is_one_event(logging_as_configured, capsys) -> None:
    logging_as_configured(json=True)
    for fd in range(3 * BURST):
        logging.getLogger("asyncio").error(f"{ACCEPT_FAILED}\nsocket: <asyncio.TransportSocket fd={fd}>")
    logging_as_configured(json=True)
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert len([line for line in lines if line["event"].startswith(ACCEPT_FAILED)]) == BURST
    [summary] = [line for line in lines if line["event"] == SUMMARY]
    assert summary["repeated"] == f"error asyncio: {ACCEPT_FAILED}"
    assert summary["dropped"] == 2 * BURST


async def test_asyncio_failing_to_accept_past_the_open_file_limit_writes_a_few_lines_and_the_count() -> None:
    flood = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "testkit.servers.accept_flood", "32"),
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert flood.stdin is not None
    assert flood.stdout is not None
    assert flood.stderr is not None
    log: list[str] = []
    async with contextlib.AsyncExitStack() as clients, asyncio.timeout(60):
        port = int(await flood.stdout.readline())
        for _ in range(64):  # twice its open files: the accepts past them fail
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            clients.callback(writer.close)
        while not any(ACCEPT_FAILED in line for line in log):
            line = await flood.stderr.readline()
            assert line, f"the process ended before asyncio failed to accept:\n{''.join(log)}"
            log.append(line.decode())
        flood.stdin.close()
        log.extend(line.decode() for line in (await flood.stderr.read()).splitlines(keepends=True))
        await flood.wait()
    assert len([line for line in log if ACCEPT_FAILED in line and SUMMARY not in line]) <= BURST, "".join(log)
    summaries = [json.loads(line) for line in log if SUMMARY in line]
    [summary] = [each for each in summaries if each["repeated"] == f"error asyncio: {ACCEPT_FAILED}"]
    assert summary["dropped"] >= 1
