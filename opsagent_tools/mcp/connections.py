"""Every configured MCP server, connected once per process (the bot) or per command (the CLI), closed together.

`async with McpConnections(settings) as mcp:` starts the servers concurrently, each within its start timeout;
`build_tools(..., mcp=mcp)` then adds their tools synchronously. A server that fails to start adds no tools and
one line to `report()`; it never stops the others, the bot or the command.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from types import TracebackType
from typing import Self

from kernel import Tool
from opsagent_tools.check_result import CheckResult
from opsagent_tools.family import ToolFamily
from opsagent_tools.mcp.check import server_report
from opsagent_tools.mcp.server import McpServer, ServerState, quiet_sdk_logs
from opsagent_tools.mcp.settings import McpSettings
from opsagent_tools.mcp.tools import McpToolEntry, SkippedTool, server_tools


class McpConnections(ToolFamily):
    """The MCP family: the servers of one process or command, and the kernel tools their listings make; entered,
    they are started, and closed on exit."""

    def __init__(self, settings: McpSettings | None, environ: Mapping[str, str] = os.environ) -> None:
        servers = settings.servers if settings is not None else {}
        self.servers = [McpServer(name, server, environ) for name, server in servers.items()]
        self.entries: list[McpToolEntry] = []
        """Every MCP tool offered, in configuration and listing order."""
        self.skipped: list[SkippedTool] = []

    async def __aenter__(self) -> Self:
        if self.servers:
            quiet_sdk_logs()
        await asyncio.gather(*(server.start() for server in self.servers))
        for server in self.servers:
            if server.state is ServerState.UP:
                entries, skipped = server_tools(
                    server.name, server.settings, server.tools, server.call, secrets=server.secrets
                )
                self.entries += entries
                self.skipped += skipped
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.gather(*(server.close() for server in self.servers))

    def tools(self) -> list[Tool]:
        """The kernel tools to register: every MCP tool (each server one line of `load_tools`' index)."""
        return [entry.tool for entry in self.entries]

    async def check(self) -> list[CheckResult]:
        """`report()`, once entered: the servers are started by entering, not by the check."""
        return self.report()

    def report(self) -> list[CheckResult]:
        """One result per server: started with N tools (how many read-only, excluded), or why it failed;
        a collision of names fails it, and each tool left out is a warning."""
        return [server_report(server, self.entries, self.skipped) for server in self.servers]
