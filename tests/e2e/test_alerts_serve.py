"""`opsagent serve --http` with an `[alertmanager]` section, as a black box: without the token it refuses to
start and says which variable to set; with it, `POST /alertmanager` is served, guarded and opens a thread."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import aiohttp

from bot.alerts.settings import TOKEN_ENV
from samples.demo_config import write_demo_config
from testkit.fakes.model_server import FakeModelServer, Reply, openai_completion, openai_tool_call
from testkit.fakes.slack_api import SlackFake
from testkit.servers.bot_process import serve, serve_env
from testkit.servers.local_server import free_port
from testkit.slack_bot import CHANNEL
from worlds.alert_bot import ALERTNAME, TOKEN, alert, notification


async def test_serve_refuses_to_start_the_receiver_without_a_token(tmp_path: Path) -> None:
    config = write_demo_config(tmp_path, datetime.now(UTC), extra=f'[alertmanager]\nchannel = "{CHANNEL}"\n')
    async with SlackFake() as slack, FakeModelServer() as model:
        process = await serve(serve_env(config, slack, model), free_port())
        output, _ = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 2
    assert f"opsagent: [alertmanager] is configured but {TOKEN_ENV} is not set" in output.decode()


async def test_serve_answers_alertmanager_and_opens_the_thread(tmp_path: Path) -> None:
    config = write_demo_config(tmp_path, datetime.now(UTC), extra=f'[alertmanager]\nchannel = "{CHANNEL}"\n')
    port = free_port()
    url = f"http://127.0.0.1:{port}/alertmanager"
    body = json.dumps(notification(alert("fp-1"))).encode()
    async with SlackFake() as slack, FakeModelServer() as model:
        finish = openai_tool_call("c1", "finish", {"answer": "The alert is real: order-service 5xx."})
        model.script(Reply(openai_completion(None, tool_calls=[finish])))
        process = await serve(serve_env(config, slack, model, **{TOKEN_ENV: TOKEN}), port)
        try:
            async with aiohttp.ClientSession() as http, asyncio.timeout(60):
                while True:
                    try:
                        async with http.post(url, data=body) as response:
                            assert response.status == 401
                            break
                    except aiohttp.ClientConnectionError:
                        await asyncio.sleep(0.1)  # not listening yet
                headers = {"Authorization": f"Bearer {TOKEN}"}
                async with http.post(url, data=body, headers=headers) as response:
                    assert response.status == 200
                while not any(f.completed for f in slack.files.values()):  # noqa: ASYNC110 - another process
                    await asyncio.sleep(0.1)
        finally:
            process.terminate()
            await asyncio.wait_for(process.communicate(), 30)
    [top] = [m for m in slack.messages(CHANNEL) if not m.is_reply]
    assert top.text.startswith(f"🚨 {ALERTNAME} is firing")
    [trace] = slack.files.values()
    assert trace.thread_ts == top.ts
    assert json.loads(trace.content)["answer"] == "The alert is real: order-service 5xx."
