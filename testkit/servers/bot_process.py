"""`opsagent serve --http` as a real process for the black-box and fault tests: its environment, its open-file
limit, start, kill -9.

A `BotProcess` logs to a file (a chatty process never blocks on a full pipe, and a killed one leaves its log
for the failure message), answers signed mentions and clicks on its own port, and dies by SIGKILL on demand.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Self

import aiohttp
import pytest

from testkit.fakes.model_server import FakeModelServer
from testkit.fakes.slack_api import SlackFake
from testkit.fakes.slack_requests import app_mention_event, block_actions_payload, signed_action, signed_event
from testkit.fakes.slack_workspace import BOT_TOKEN, BOT_USER_ID, SIGNING_SECRET, TEAM_ID
from testkit.servers.local_server import free_port

STARTUP_TIMEOUT_S = 60.0
"""How long a process may take to answer /healthz (imports and migrations on a busy 2-core machine)."""


def serve_env(config: Path, slack: SlackFake, model: FakeModelServer, **extra: str) -> dict[str, str]:
    """The environment of a served bot: this test's Slack, model and config, nothing of the caller's own."""
    prefixes = ("OPSAGENT_", "SLACK_", "OPENAI_", "ANTHROPIC_")
    return {
        **{key: value for key, value in os.environ.items() if not key.startswith(prefixes)},
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": slack.api_url,
        "OPENAI_BASE_URL": model.url,
        "OPENAI_API_KEY": "sk-test",
        "OPSAGENT_MODEL": "fake-gpt",
        "OPSAGENT_CONFIG": str(config),
        "OPSAGENT_STORE__URL": f"sqlite:///{config.parent}/runs.db",
        **extra,
    }


WITH_OPEN_FILES = (
    "import resource, runpy; resource.setrlimit(resource.RLIMIT_NOFILE, ({soft}, {hard})); "
    "runpy.run_module('bot.cli.main', run_name='__main__')"
)
"""`python -c` code that runs the command line under a given open-file limit (soft, hard): as a process started
by a system with those limits (`ulimit -n`), before anything of ours runs."""


async def serve(
    env: dict[str, str],
    port: int,
    *,
    output: Any = asyncio.subprocess.PIPE,
    open_files: tuple[int, int] | None = None,
) -> asyncio.subprocess.Process:
    """Start `opsagent serve --http` on 127.0.0.1:`port`; stdout and stderr go to `output`; `open_files`: the
    process's open-file limit (soft, hard), else the caller's."""
    if open_files is None:
        program: tuple[str, ...] = ("-m", "bot.cli.main")
    else:
        program = ("-c", WITH_OPEN_FILES.format(soft=open_files[0], hard=open_files[1]))
    return await asyncio.create_subprocess_exec(
        *(sys.executable, *program, "serve", "--http", "--host", "127.0.0.1", "--port", str(port)),
        env=env,
        stdout=output,
        stderr=asyncio.subprocess.STDOUT,
        stdin=asyncio.subprocess.DEVNULL,
    )


class BotProcess:
    """One life of the served bot: `async with` starts it and waits for /healthz; leaving kills what is left."""

    def __init__(self, env: dict[str, str], log: Path, *, open_files: tuple[int, int] | None = None) -> None:
        self.env = env
        self.log = log
        self.open_files = open_files
        self.port = free_port()
        self.process: asyncio.subprocess.Process | None = None
        self.http = aiohttp.ClientSession()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> Self:
        with self.log.open("ab") as output:
            self.process = await serve(self.env, self.port, output=output, open_files=self.open_files)
        async with asyncio.timeout(STARTUP_TIMEOUT_S):
            while not await self._healthy():
                if self.process.returncode is not None:
                    pytest.fail(f"the bot exited with {self.process.returncode} while starting:\n{self.tail()}")
                await asyncio.sleep(0.1)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self.process is not None and self.process.returncode is None:
            await self.kill()
        await self.http.close()

    async def _healthy(self) -> bool:
        try:
            async with self.http.get(f"{self.url}/healthz") as response:
                return response.status == 200
        except aiohttp.ClientError:
            return False

    async def kill(self) -> None:
        """SIGKILL: no shutdown, no goodbye in the threads, no lease released (a crash, an OOM kill)."""
        assert self.process is not None
        self.process.kill()
        await self.process.wait()

    async def terminate(self) -> int:
        """SIGTERM, the graceful stop; the exit status."""
        assert self.process is not None
        self.process.terminate()
        return await asyncio.wait_for(self.process.wait(), 60)

    def tail(self, chars: int = 6000) -> str:
        """The end of the process's log, for failure messages."""
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""

    def logged(self) -> list[dict[str, Any]]:
        """The JSON log lines written so far (by every life that shared this log file)."""
        lines = self.log.read_text(errors="replace").splitlines() if self.log.exists() else []
        entries = []
        for line in lines:
            if line.startswith("{"):
                with contextlib.suppress(ValueError):
                    entries.append(json.loads(line))
        return entries

    async def post(self, body: bytes, headers: dict[str, str]) -> int:
        """POST a signed request to /slack/events; the HTTP status."""
        async with self.http.post(f"{self.url}/slack/events", data=body, headers=headers) as response:
            return response.status

    async def mention(self, slack: SlackFake, channel: str, user: str, text: str) -> str:
        """`user` mentions the bot in `channel` (the message lands in the fake Slack first); its ts."""
        message = slack.add_message(channel, f"<@{BOT_USER_ID}> {text}", user=user)
        body, headers = signed_event(SIGNING_SECRET, app_mention_event(channel, user, message.text, message.ts))
        assert await self.post(body, headers) == 200
        return message.ts

    async def click(
        self, slack: SlackFake, channel: str, user: str, action_id: str, value: str, message_ts: str, thread_ts: str
    ) -> int:
        """`user` clicks a button of the bot's message `message_ts`; the HTTP status of the signed POST."""
        payload = block_actions_payload(
            user,
            TEAM_ID,
            channel,
            message_ts,
            thread_ts,
            action_id,
            value,
            response_url=slack.response_url(channel, message_ts, user=user),
        )
        return await self.post(*signed_action(SIGNING_SECRET, payload))
