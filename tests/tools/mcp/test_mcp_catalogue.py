"""No catalogue cap: a server's tools, however many, cost a run one line of `load_tools`' index until the model
loads one, which is then called by its full name through the same dispatch; restarts with backoff after a crash."""

from __future__ import annotations

import asyncio
import re

import pytest

from kernel import Agent, ErrorKind, ScriptedModel, ToolFailure, ToolRegistry, text_turn
from opsagent_tools.mcp import McpConnections, McpSettings
from opsagent_tools.mcp.server import McpServer, ServerState
from testkit.servers.mcp_harness import READ_ONLY, TOKEN, stdio_settings
from worlds.dispatch import dispatch_call

EXTRA = 25
LOAD_TOOLS = "load_tools"


@pytest.fixture
def environ(tmp_path):
    return {"OPS_TOKEN": TOKEN, "OPS_NOTES_FILE": str(tmp_path / "notes.txt")}


@pytest.fixture
async def large(environ):
    """The test server with 25 more tools (33 in all)."""
    read_only = [*READ_ONLY, *(f"lookup_topic{i}" for i in range(EXTRA))]
    settings = McpSettings(
        servers={"big": stdio_settings("--extra", str(EXTRA), "--page-size", "10", read_only=read_only)}
    )
    async with McpConnections(settings, environ) as mcp:
        yield mcp, ToolRegistry(mcp.tools())


async def test_however_many_tools_a_server_has_a_run_sends_one_line_for_it_not_their_schemas(large):
    mcp, registry = large
    assert len(registry) == 8 + EXTRA, "no cap: every tool the server lists is registered"
    model = ScriptedModel([text_turn("finish", "Known: nothing to do.", answer="nothing (no step).")])
    await Agent(llm=model, tools=registry).run("say hello")
    [request] = model.requests
    [index] = [spec for spec in request.tools if spec.name == LOAD_TOOLS]
    [line] = [line for line in index.description.splitlines() if "MCP server 'big'" in line]
    assert line.startswith("- MCP server 'big' (its tools' text is the server's): big__")
    listed = line.split(": ", 1)[1].split(", ")
    assert "«" not in index.description, "the index quotes none of the server's text"
    offered = [spec.name for spec in request.tools if spec.name.startswith("big__")]
    assert len(offered) == 2, "only a core of the server's tools comes in full"
    assert sorted(listed + offered) == sorted(registry.names()), "the rest are each named in the index"
    (report,) = mcp.report()
    assert "33 tools" in report.message
    assert "mcp_search" not in report.message


async def test_load_tools_finds_a_servers_tools_by_query_and_a_run_calls_one_by_its_full_name(large):
    _, registry = large
    model = ScriptedModel(
        [
            text_turn(LOAD_TOOLS, "Known: nothing. Why: find the topic's tool.", query="topic7"),
            text_turn("big__lookup_topic7", "Known: the tool (step 1).", query="checkout"),
            text_turn("finish", "Known: all.", answer="the records (step 2)."),
        ]
    )
    result = await Agent(llm=model, tools=registry).run("what happened to checkout?")
    assert result.ok
    assert result.steps[0].observation == "Loaded big__lookup_topic7: offered in full from your next turn on."
    assert result.steps[1].ok
    first, second = ([spec.name for spec in request.tools] for request in model.requests[:2])
    assert "big__lookup_topic7" not in first
    assert "big__lookup_topic7" in second, "loaded: offered in full from the next turn on"
    assert result.offered[1] == tuple(name for name in second if name.startswith("big__"))


async def test_an_unknown_tool_lists_every_registered_tool(large):
    _, registry = large
    result = await dispatch_call(registry, "big__no_such_tool")
    assert result.error.kind is ErrorKind.UNKNOWN_TOOL
    assert "'big__lookup_topic24'" in result.text


async def test_a_crashed_server_is_restarted_with_backoff_until_it_starts_again(environ, tmp_path):
    marker = tmp_path / "started-once"
    server = McpServer("ops", stdio_settings("--refuse-restart", str(marker)), environ, backoff=(0.3,))
    await server.start()
    try:
        assert server.state is ServerState.UP
        await _call_fails(server, "crash", "closed the connection during the call")
        await _call_fails(
            server,
            "recent_incidents",
            "restarting it failed (it exited during start-up; its last stderr line: error: the tracker's database is gone)",
        )
        marker.unlink()  # the dependency is back: the next attempt, after its backoff, starts
        result = await _until_up(server)
        assert result.content[0].text.startswith("INC-100 checkout")
        assert server.restarts >= 2
    finally:
        await server.close()
    assert server.state is ServerState.CLOSED


async def _call_fails(server, tool, message):
    with pytest.raises(ToolFailure, match=re.escape(message)):
        await server.call(tool, {"service": "checkout"} if tool != "crash" else {})


async def _until_up(server):
    async with asyncio.timeout(15):
        while True:
            try:
                return await server.call("recent_incidents", {"service": "checkout", "limit": 1})
            except ToolFailure:
                await asyncio.sleep(0.1)
