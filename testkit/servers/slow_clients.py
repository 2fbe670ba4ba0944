"""A slowloris client as a process of its own: many connections from one address, each sending half a request head
and waiting; each one the server closes is opened again at once. `SlowClients` runs it against a server's URL and
reads its counts; `python -m servers.slow_clients URL SOURCE CONNECTIONS` is the process (one JSON line of counts
on stdout every 0.2 s; it stops when stdin closes).

A process of its own, so that its churn competes with the server and not with the test's fakes for one event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Self

from testkit.servers.raw_client import HALF_POST, PATIENCE_S, raw_socket

REPORT_EVERY_S = 0.2
ROOT = Path(__file__).resolve().parents[2]
"""The checkout, whose `testkit` the attacking process imports."""
COUNTS = ("opened", "busy", "timed_out", "errors")


class SlowClients:
    """`async with SlowClients(url, source, connections)`: the attack runs until the block ends; `counts` are the
    last reported: `opened`, and the server's answers before it closed one (`busy`: 503, `timed_out`: 408)."""

    def __init__(self, url: str, source: str, connections: int) -> None:
        self._args = (url, source, str(connections))
        self.counts = dict.fromkeys(COUNTS, 0)
        self._process: asyncio.subprocess.Process | None = None

    async def __aenter__(self) -> Self:
        self._process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "testkit.servers.slow_clients",
            *self._args,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._process is not None
        assert self._process.stdin is not None
        self._process.stdin.close()
        async with asyncio.timeout(PATIENCE_S):
            while await self._read():
                pass
            await self._process.wait()

    async def until(self, condition: Callable[[dict[str, int]], bool], what: str, within: float = 60.0) -> None:
        """Read the counts until `condition(counts)` holds; fail naming `what` after `within` seconds."""
        try:
            async with asyncio.timeout(within):
                while not condition(self.counts):
                    if not await self._read():
                        raise AssertionError(f"the slow clients stopped before {what}: {self.counts}")
        except TimeoutError:
            raise AssertionError(f"no {what} within {within:g} s: {self.counts}") from None

    async def _read(self) -> bool:
        assert self._process is not None
        assert self._process.stdout is not None
        line = await self._process.stdout.readline()
        if line:
            self.counts = json.loads(line)
        return bool(line)


async def _attack(url: str, source: str, connections: int) -> None:
    counts = dict.fromkeys(COUNTS, 0)

    async def one() -> None:
        while True:
            try:
                async with raw_socket(url, source) as (reader, writer):
                    counts["opened"] += 1
                    writer.write(HALF_POST)
                    await writer.drain()
                    got = await reader.read()
            except OSError:
                counts["errors"] += 1
                await asyncio.sleep(0.05)  # the server is gone or full: no busy loop
                continue
            if got.startswith(b"HTTP/1.1 503"):
                counts["busy"] += 1
            elif got.startswith(b"HTTP/1.1 408"):
                counts["timed_out"] += 1

    async def report() -> None:
        while True:
            print(json.dumps(counts), flush=True)
            await asyncio.sleep(REPORT_EVERY_S)

    stdin = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    tasks = [asyncio.create_task(one()) for _ in range(connections)] + [asyncio.create_task(report())]
    await stdin.read()
    for task in tasks:
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.gather(*tasks, return_exceptions=True)
    print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    url, source, connections = sys.argv[1:4]
    asyncio.run(_attack(url, source, int(connections)))
