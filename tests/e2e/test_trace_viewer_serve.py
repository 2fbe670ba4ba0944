"""`opsagent serve` with a `[viewer]` section, as a black box: it refuses to start without the signing secret,
and with it serves `/runs/<id>` on the bot's HTTP port beside `/healthz`."""

from __future__ import annotations

import asyncio
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

import aiohttp

from bot.viewer.server import SECRET_ENV, SECURITY_HEADERS, LinkSigner
from samples.demo_config import write_demo_config
from testkit.fakes.slack_api import SlackFake
from testkit.fakes.slack_workspace import BOT_TOKEN, SIGNING_SECRET
from testkit.servers.local_server import free_port
from worlds.viewer_bot import VIEWER_SECRET


def serve_env(config: str, slack_api_url: str) -> dict[str, str]:
    env = {
        **os.environ,
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": slack_api_url,
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        "OPENAI_API_KEY": "sk-test",
        "OPSAGENT_MODEL": "fake-gpt",
        "OPSAGENT_CONFIG": config,
        "OPSAGENT_STORE__URL": f"sqlite:///{Path(config).parent}/runs.db",
    }
    env.pop(SECRET_ENV, None)
    env.pop("OPSAGENT_LLM_BASE_URL", None)
    return env


async def serve(port: int, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "bot.cli.main", "serve", "--http", "--host", "127.0.0.1", "--port", str(port)),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
    )


async def test_serve_refuses_the_viewer_without_its_secret(tmp_path):
    port = free_port()
    extra = f'[viewer]\npublic_url = "http://127.0.0.1:{port}"\n'
    config = write_demo_config(tmp_path, datetime.now(UTC), extra=extra)
    proc = await serve(port, serve_env(str(config), "http://127.0.0.1:9/api/"))
    async with asyncio.timeout(60):
        _, stderr = await proc.communicate()
    assert proc.returncode == 2
    assert f"signs its links with {SECRET_ENV}" in stderr.decode()


async def test_serve_answers_trace_links_on_its_http_port(tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    config = write_demo_config(tmp_path, datetime.now(UTC), extra=f'[viewer]\npublic_url = "{url}"\n')
    async with SlackFake() as slack:
        proc = await serve(port, {**serve_env(str(config), slack.api_url), SECRET_ENV: VIEWER_SECRET})
        try:
            async with aiohttp.ClientSession() as http:
                async with asyncio.timeout(30):
                    while True:
                        try:
                            async with http.get(f"{url}/runs/0123456789ab") as response:
                                status, headers, page = response.status, response.headers, await response.text()
                                break
                        except aiohttp.ClientError:
                            await asyncio.sleep(0.1)
                assert status == 403
                assert "This trace link is incomplete" in page
                assert headers["Content-Security-Policy"] == SECURITY_HEADERS["Content-Security-Policy"]
                exp = 4_000_000_000
                sig = LinkSigner(VIEWER_SECRET).signature("0123456789ab", exp)
                async with http.get(f"{url}/runs/0123456789ab?exp={exp}&sig={sig}") as response:
                    assert response.status == 404
                    assert "Run not found" in await response.text()
        finally:
            proc.terminate()
            async with asyncio.timeout(30):
                await proc.wait()
