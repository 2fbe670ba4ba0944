"""The MCP server at /mcp, called with the official `mcp` client over streamable HTTP, as Claude Code would: it lists
the tools, starts an investigation, waits for it with progress per step, and reads the verdict; a refusal is a tool
error in words; a client that hangs up mid-wait ends the wait, not the run."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import aiohttp
import httpx2
import pytest
import structlog
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bot.http_limits.limits import HttpLimits
from kernel import text_turn
from testkit.slack_bot import FINISH
from worlds.api_world import CI_TOKEN, CLAUDE_TOKEN, QUERY_TURN, WAIT_TURN, run_status

SLOW_TURN = text_turn("slow", "Why: the wait outlasts the body deadline.", seconds=1.5)
TOOLS = {"investigate", "get_investigation", "wait_for_investigation", "add_guidance", "list_investigations"}


@pytest.fixture
def app_options(app_options):
    """The server's body deadline at 1 s: an MCP call's answer streams for longer, once its body is in."""
    return {**app_options, "limits": HttpLimits(body_timeout_s=1.0)}


@contextlib.asynccontextmanager
async def mcp_client(url: str, token: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=120)) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        yield client


async def test_the_tools_are_listed_and_none_of_them_approves(harness):
    async with mcp_client(harness.url, CLAUDE_TOKEN) as mcp:
        tools = (await mcp.list_tools()).tools
        assert {tool.name for tool in tools} == TOOLS
        for tool in tools:
            assert "No tool approves anything" in (tool.description or ""), tool.name
            assert "approve" not in tool.name
        investigate = next(tool for tool in tools if tool.name == "investigate")
        assert investigate.input_schema["required"] == ["task"]
        assert investigate.output_schema is not None, "structured content has a schema"


async def test_investigate_wait_with_progress_and_read_the_verdict(harness, script):
    async with mcp_client(harness.url, CLAUDE_TOKEN) as mcp:
        script.append([QUERY_TURN, SLOW_TURN, FINISH])
        started = await mcp.call_tool("investigate", {"task": "order-service 5xx since 14:02"})
        assert not started.is_error, started.content
        run_id = started.structured_content["run_id"]
        progress: list[tuple[float, str | None]] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append((done, message))

        waited = await mcp.call_tool(
            "wait_for_investigation", {"run_id": run_id, "timeout_s": 60}, progress_callback=on_progress
        )
        assert not waited.is_error, waited.content
        assert waited.structured_content["ended"] is True
        assert progress == [
            (1.0, "1 ✓ query_metrics order-service · order-service 5xx jumped from 0.10% to 12.0% at t-10m"),
            (2.0, "2 ✓ slow 1.5 · done"),
        ]
        got = await mcp.call_tool("get_investigation", {"run_id": run_id})
        view = got.structured_content
        assert view["status"] == "finished"
        assert view["requested_by"] == "claude"
        assert view["verdict"]["rest"] or view["verdict"]["summary"] or view["verdict"]["root_cause"]
        text = got.content[0].text
        assert text.startswith(f"Investigation {run_id}: finished")
        assert "v2.14.0" in text
        listed = await mcp.call_tool("list_investigations", {"limit": 5})
        assert [i["run_id"] for i in listed.structured_content["investigations"]] == [run_id]


async def test_unknown_and_other_clients_runs_are_tool_errors_in_words(harness, script):
    async with mcp_client(harness.url, CLAUDE_TOKEN) as mcp:
        script.append([FINISH])
        async with mcp_client(harness.url, CI_TOKEN) as ci:
            theirs = (await ci.call_tool("investigate", {"task": "payments latency"})).structured_content["run_id"]
            for run_id in (theirs, "no-such-run"):
                refused = await mcp.call_tool("get_investigation", {"run_id": run_id})
                assert refused.is_error
                assert "was started with this token" in refused.content[0].text
            guided = await mcp.call_tool("add_guidance", {"run_id": theirs, "text": "look at payments"})
            assert guided.is_error
        too_long = await mcp.call_tool("investigate", {"task": "x" * 40_000})
        assert too_long.is_error, "the 8,000-character cap holds over MCP too"


async def test_mcp_without_a_token_or_with_a_wrong_one_gets_401_and_nothing_else(harness):
    async with aiohttp.ClientSession() as http:
        for headers in (
            {},
            {"Authorization": "Bearer not-a-token-of-ours"},
            {"Authorization": f"Basic {CLAUDE_TOKEN}"},
        ):
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            async with http.post(f"{harness.url}/mcp", json=body, headers=headers) as response:
                assert response.status == 401
                assert (await response.json())["code"] == "unauthorized"
                assert response.headers["WWW-Authenticate"] == 'Bearer realm="opsagent"'


async def test_a_client_that_hangs_up_mid_wait_ends_the_wait_and_the_run_goes_on(harness, claude, script):
    script.append([QUERY_TURN, WAIT_TURN, FINISH])
    first_step = asyncio.Event()

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        first_step.set()

    with structlog.testing.capture_logs() as logged:
        async with mcp_client(harness.url, CLAUDE_TOKEN) as client:
            run_id = (await client.call_tool("investigate", {"task": "checkout latency"})).structured_content["run_id"]
            waiting = asyncio.create_task(
                client.call_tool(
                    "wait_for_investigation", {"run_id": run_id, "timeout_s": 300}, progress_callback=on_progress
                )
            )
            await asyncio.wait_for(first_step.wait(), 15)
            waiting.cancel()  # the client hangs up in the middle of the wait
            with contextlib.suppress(asyncio.CancelledError):
                await waiting
        async with asyncio.timeout(15):
            while not any(entry["event"] == "mcp_wait_abandoned" for entry in logged):  # noqa: ASYNC110 - logs
                await asyncio.sleep(0.05)
    [abandoned] = [entry for entry in logged if entry["event"] == "mcp_wait_abandoned"]
    assert (abandoned["run_id"], abandoned["client"]) == (run_id, "claude")
    harness.incident.released.set()
    finished = await run_status(claude, run_id, "finished")
    assert [step["tool"] for step in finished["steps"]] == ["query_metrics", "wait_for_signal"]
