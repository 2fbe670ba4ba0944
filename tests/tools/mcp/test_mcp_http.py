"""MCP tools over streamable HTTP on 127.0.0.1, against the same SDK server run with its HTTP transport:
headers from the environment, a refused token, and a server that goes away and comes back."""

from __future__ import annotations

import asyncio
import contextlib

from kernel import ErrorKind, ToolRegistry
from opsagent_tools.mcp import McpConnections, McpServerSettings, McpSettings
from testkit.servers.local_server import free_port
from testkit.servers.mcp_harness import READ_ONLY, TOKEN, http_server
from worlds.dispatch import dispatch_call

ENVIRON = {"TRACKER_MCP_AUTH": f"Bearer {TOKEN}"}


def http_settings(url: str, **fields) -> McpSettings:
    server = McpServerSettings(
        url=url, headers_env={"Authorization": "TRACKER_MCP_AUTH"}, read_only=READ_ONLY, timeout_s=5, **fields
    )
    return McpSettings(servers={"tracker": server})


async def test_tools_are_listed_and_called_with_the_header_from_the_environment():
    async with http_server() as url, McpConnections(http_settings(url), ENVIRON) as mcp:
        registry = ToolRegistry(mcp.tools())
        (report,) = mcp.report()
        assert report.ok
        assert report.message.startswith(f"{url}: started; 8 tools (4 read-only, 4 side effects)")
        result = await dispatch_call(registry, "tracker__recent_incidents", service="payments", limit=1)
        assert result.text == "INC-100 payments: elevated 5xx after deploy v2.14.0"
        failed = await dispatch_call(registry, "tracker__fail_loudly", reason="x")
        assert failed.error.kind is ErrorKind.DENIED, "a side effect over HTTP is gated like any other"


async def test_a_refused_token_is_a_start_up_line_not_a_crash():
    async with http_server() as url, McpConnections(http_settings(url), {"TRACKER_MCP_AUTH": "Bearer wrong"}) as mcp:
        (report,) = mcp.report()
        assert not report.ok
        assert report.message.startswith(f"{url}: did not start:")
        assert "wrong" not in report.message
        assert mcp.tools() == []


async def test_a_server_that_goes_away_is_an_observation_and_is_reconnected_when_back():
    port = free_port()
    async with contextlib.AsyncExitStack() as stack:
        first = contextlib.AsyncExitStack()
        url = await first.enter_async_context(http_server(port))
        mcp = await stack.enter_async_context(McpConnections(http_settings(url, start_timeout_s=2), ENVIRON))
        registry = ToolRegistry(mcp.tools())
        assert (await dispatch_call(registry, "tracker__recent_incidents", service="cart", limit=1)).error is None
        await first.aclose()  # the server goes away
        gone = await dispatch_call(registry, "tracker__recent_incidents", service="cart", limit=1)
        assert "the MCP server 'tracker' closed the connection during the call" in gone.text
        down = await dispatch_call(registry, "tracker__recent_incidents", service="cart", limit=1)
        assert "is down and restarting it failed (ConnectError" in down.text, "told at once, not after a timeout"
        async with http_server(port):
            async with asyncio.timeout(20):
                # the restart is the supervisor's, on its backoff: poll the tool as the model would call it again
                while (  # noqa: ASYNC110
                    back := await dispatch_call(registry, "tracker__recent_incidents", service="cart", limit=1)
                ).error:
                    await asyncio.sleep(0.2)
            assert back.text == "INC-100 cart: elevated 5xx after deploy v2.14.0"
