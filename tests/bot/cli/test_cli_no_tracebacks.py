"""No traceback reaches a person: Ctrl-C cancels a run and keeps its trace, Slack trouble at start-up is one line,
a closed pipe is quiet, and hints name configuration keys that exist."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import tokenize
from datetime import UTC, datetime
from pathlib import Path

import pytest
from opsagent_process import environment, opsagent, start

from bot.settings import Settings
from samples.demo_config import write_demo_config
from testkit.fakes.model_server import FakeModelServer, Reply, closed_port_url, openai_completion, openai_tool_call
from testkit.fakes.slack_api import SlackFake
from testkit.servers.local_server import free_port

ROOT = Path(__file__).resolve().parents[3]


async def test_ctrl_c_in_investigate_cancels_the_run_and_saves_its_partial_trace(tmp_path):
    config = write_demo_config(tmp_path, datetime.now(UTC))
    async with FakeModelServer() as server:
        call = openai_tool_call("c1", "query_metrics", {"service": "order-service", "metric": "http_5xx_rate"})
        server.script(Reply(openai_completion(None, tool_calls=[call])), Reply(openai_completion("…"), delay=60))
        env = environment(OPSAGENT_LLM_BASE_URL=f"{server.url}/v1", OPSAGENT_LLM_MODEL="fake-gpt")
        proc = await start(
            "--config", config, "investigate", "order-service 5xx?", "--trace", "t.json", cwd=tmp_path, env=env
        )
        async with asyncio.timeout(60):
            while len(server.requests) < 2:  # noqa: ASYNC110 - the state lives in the fake server
                await asyncio.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        async with asyncio.timeout(30):
            out, err = await proc.communicate()
    assert proc.returncode == 130, err.decode()
    assert "Traceback" not in err.decode()
    text = out.decode()
    assert "■ Ctrl-C: stopping the run" in text
    assert "■ Stopped by a user (cancelled at the terminal (Ctrl-C))" in text
    assert "1 step · " in text, "the query it made; the cancelled model turn is no step"
    saved = json.loads((tmp_path / "t.json").read_text())
    assert saved["stop_reason"] == "cancelled"
    assert [step["call"]["name"] for step in saved["steps"]] == ["query_metrics"]


async def serve_against(tmp_path: Path, api_url: str, token: str) -> tuple[int, str]:
    config = write_demo_config(tmp_path, datetime.now(UTC))
    env = environment(
        SLACK_BOT_TOKEN=token,
        SLACK_SIGNING_SECRET="signing-secret",
        SLACK_API_URL=api_url,
        OPENAI_API_KEY="sk-not-used",
        OPSAGENT_STORE__URL=f"sqlite:///{tmp_path / 'runs.db'}",
    )
    ran = await opsagent("--config", config, "serve", "--http", "--port", free_port(), cwd=tmp_path, env=env)
    return ran.code, ran.err


async def test_serve_with_a_bad_token_says_so_in_one_line(tmp_path):
    async with SlackFake() as slack:
        code, err = await serve_against(tmp_path, slack.api_url, "xoxb-revoked")
    assert code == 2
    assert err.splitlines() == [
        "opsagent: Slack refused the bot token (auth.test) (invalid_auth): check SLACK_BOT_TOKEN "
        "(the app's token, from api.slack.com/apps)"
    ]


async def test_serve_with_slack_unreachable_says_so_in_one_line(tmp_path):
    url = f"{closed_port_url()}/api/"
    code, err = await serve_against(tmp_path, url, "xoxb-any")
    assert code == 2
    [line] = err.splitlines()
    assert line.startswith(f"opsagent: cannot reach Slack at {url} during the bot token (auth.test) (")
    assert line.endswith("): check the network, a proxy, or SLACK_API_URL")


@pytest.mark.parametrize("command", [("tools", "list"), ("demo",)], ids=["a report", "a run"])
async def test_a_reader_that_goes_away_is_no_error(tmp_path, command):
    config = write_demo_config(tmp_path, datetime.now(UTC))
    read_end, write_end = os.pipe()
    os.close(read_end)  # `opsagent tools list | head`, once head has read its lines and gone
    try:
        proc = await start("--config", config, *command, cwd=tmp_path, stdout=write_end)
    finally:
        os.close(write_end)
    async with asyncio.timeout(60):
        _, err = await proc.communicate()
    assert proc.returncode == 141
    assert err.decode() == ""


async def test_an_unreachable_prometheus_names_the_key_to_fix(tmp_path):
    (tmp_path / "opsagent.toml").write_text(f'[tools.metrics]\nurl = "{closed_port_url()}"\n')
    ran = await opsagent("tools", "call", "query_metrics", "--args", '{"service": "order-service"}', cwd=tmp_path)
    assert ran.code == 1
    assert "check tools.metrics.url and that the server is up" in ran.out


def test_every_key_a_hint_names_exists():
    """Messages name keys as `tools.logs.loki.url`: each one in a string of the code must be a path through the
    settings."""
    named = {
        match
        for path in [*ROOT.glob("opsagent_tools/**/*.py"), *ROOT.glob("bot/**/*.py")]
        for text in _strings(path)
        for match in re.findall(r"(?<![\w.])(tools(?:\.[a-z_]+)+)(?![\w.(])", text)
        if match != "tools.py"
    }
    assert {"tools.metrics.url", "tools.logs.loki.url", "tools.actions.webhook.url"} <= named
    missing = [path for path in sorted(named) if not _resolves(path.split("."))]
    assert missing == []
    unprefixed = {  # "check metrics.prometheus.url" named no key: the sections live under [tools]
        match
        for path in [*ROOT.glob("opsagent_tools/**/*.py"), *ROOT.glob("bot/**/*.py")]
        for text in _strings(path)
        for match in re.findall(r"(?<![\w./])((?:metrics|logs|repos|actions)(?:\.[a-z_]+)+)(?![\w.(])", text)
    }
    assert unprefixed <= {"metrics.jsonl"}


def _strings(path: Path) -> list[str]:
    with path.open("rb") as source:
        return [token.string for token in tokenize.tokenize(source.readline) if token.type == tokenize.STRING]


def _resolves(keys: list[str]) -> bool:
    model: object = Settings
    for key in keys:
        fields = getattr(model, "model_fields", None)
        if fields is None or key not in fields:
            return False
        annotation = fields[key].annotation
        members = [annotation, *getattr(annotation, "__args__", ())]
        model = next((m for m in members if hasattr(m, "model_fields")), None)
        if model is None:
            return key == keys[-1]
    return True
