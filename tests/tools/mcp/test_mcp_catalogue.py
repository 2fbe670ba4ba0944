"""The catalogue cap: a server with more tools than `max_tools` is offered through `mcp_search`, and a tool
found there is called by its full name through the same dispatch; restarts with backoff after a crash."""

from __future__ import annotations

import asyncio
import re

import pytest

from kernel import Agent, ErrorKind, ScriptedModel, ToolFailure, ToolRegistry, text_turn
from opsagent_tools.mcp import MCP_SEARCH_TOOL, McpConnections, McpSettings
from opsagent_tools.mcp.server import McpServer, ServerState
from testkit.servers.mcp_harness import READ_ONLY, TOKEN, stdio_settings
from worlds.dispatch import dispatch_call

EXTRA = 25


@pytest.fixture
def environ(tmp_path):
    return {"OPS_TOKEN": TOKEN, "OPS_NOTES_FILE": str(tmp_path / "notes.txt")}


@pytest.fixture
async def large(environ):
    """The test server with 25 more tools (33 in all) than the default cap of 20 lets into every turn."""
    read_only = [*READ_ONLY, *(f"lookup_topic{i}" for i in range(EXTRA))]
    settings = McpSettings(
        servers={"big": stdio_settings("--extra", str(EXTRA), "--page-size", "10", read_only=read_only)}
    )
    async with McpConnections(settings, environ) as mcp:
        yield mcp, ToolRegistry(mcp.tools())


async def test_a_server_past_the_cap_sends_no_schema_every_turn_only_mcp_search(large):
    mcp, registry = large
    assert len(registry) == 8 + EXTRA + 1
    assert [spec.name for spec in registry.specs()] == [MCP_SEARCH_TOOL]
    assert "'big' (33 tools)" in registry.get(MCP_SEARCH_TOOL).description
    (report,) = mcp.report()
    assert "more than max_tools = 20: offered through mcp_search" in report.message


async def test_mcp_search_finds_tools_by_keyword_with_their_schemas(large):
    _, registry = large
    found = await dispatch_call(registry, MCP_SEARCH_TOOL, query="topic7 records")
    assert found.error is None
    first = found.text.split("\n\n")[1]
    assert first.startswith(
        "big__lookup_topic7\n  [MCP server 'big'; read-only; text in «» comes from the server, not from OpsAgent] "
        "«Looks up topic7 records by query.»"
    )
    assert '"required":["query"]' in first
    incidents = await dispatch_call(registry, MCP_SEARCH_TOOL, query="incidents", limit=1)
    assert "big__recent_incidents" in incidents.text
    assert incidents.headline == "1 MCP tool: big__recent_incidents"
    nothing = await dispatch_call(registry, MCP_SEARCH_TOOL, query="kubernetes")
    assert nothing.error.kind is ErrorKind.EXCEPTION
    assert "no MCP tool matches 'kubernetes'" in nothing.text


async def test_a_tool_found_by_search_is_called_by_its_full_name_in_a_run(large):
    _, registry = large
    model = ScriptedModel(
        [
            text_turn(MCP_SEARCH_TOOL, "Known: nothing. Why: find the tracker's tool.", query="incidents"),
            text_turn("big__recent_incidents", "Known: the tool (step 1).", service="checkout", limit=1),
            text_turn("finish", "Known: all.", answer="INC-100 (step 2)."),
        ]
    )
    result = await Agent(llm=model, tools=registry).run("what incidents does checkout have?")
    assert result.ok
    assert result.steps[1].observation.startswith("INC-100 checkout: elevated 5xx after deploy v2.14.0")
    offered = model.requests[0].tools
    assert "big__recent_incidents" not in [spec.name for spec in offered]


async def test_an_unknown_tool_lists_only_the_tools_offered_every_turn(large):
    _, registry = large
    result = await dispatch_call(registry, "big__no_such_tool")
    assert result.error.kind is ErrorKind.UNKNOWN_TOOL
    assert "Available tools: 'mcp_search'." in result.text


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
