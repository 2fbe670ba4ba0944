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
from opsagent_tools.mcp.offer import printable_name
from opsagent_tools.mcp.search import mcp_search_tool
from opsagent_tools.mcp.server import McpServer, ServerState, quiet_sdk_logs
from opsagent_tools.mcp.settings import McpSettings
from opsagent_tools.mcp.tools import McpToolEntry, Omission, SkippedTool, server_tools


class McpConnections:
    """The MCP servers of one process or command, and the kernel tools their listings make."""

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
        """The kernel tools to register: every MCP tool, and `mcp_search` when some are deferred to it."""
        tools = [entry.tool for entry in self.entries]
        if any(tool.deferred for tool in tools):
            tools.append(mcp_search_tool(self.entries))
        return tools

    def report(self) -> list[CheckResult]:
        """One result per server: started with N tools (how many read-only, deferred, excluded), or why it failed;
        a collision of names fails it, and each tool left out is a warning."""
        return [self._report(server) for server in self.servers]

    def _report(self, server: McpServer) -> CheckResult:
        label = f"mcp {server.name}"
        if not server.started:
            return CheckResult(label, False, f"{server.settings.transport}: did not start: {server.failure}")
        entries = [entry for entry in self.entries if entry.server == server.name]
        skipped = [tool for tool in self.skipped if tool.server == server.name]
        read_only = sum(entry.read_only for entry in entries)
        parts = [f"{len(entries)} tools ({read_only} read-only, {len(entries) - read_only} side effects)"]
        if entries and entries[0].tool.deferred:
            parts.append(f"more than max_tools = {server.settings.max_tools}: offered through mcp_search")
        if server.listing_cut:
            parts.append("the listing was cut at the client's cap")
        listed = {definition.name for definition in server.tools}
        excluded = len(listed & set(server.settings.exclude))
        if excluded:
            parts.append(f"{excluded} excluded (exclude)")
        collisions = dict.fromkeys(tool.reason for tool in skipped if tool.omission is Omission.COLLISION)
        parts += [f"configuration error: {reason}" for reason in collisions]
        # A typo in read_only leaves a tool a side effect, in exclude leaves it offered: the operator must hear of it.
        settings = server.settings
        typos = {
            "read_only": sorted(set(settings.read_only) - listed),
            "exclude": sorted(set(settings.exclude) - listed),
        }
        parts += [
            f"{setting} names tools the server does not list: {', '.join(names)}"
            for setting, names in typos.items()
            if names
        ]
        unfit = [tool for tool in skipped if tool.omission is Omission.UNFIT]
        warnings = tuple(f"left out {printable_name(tool.mcp_name)}: {tool.reason}" for tool in unfit)
        ok = not collisions and not any(typos.values())
        return CheckResult(label, ok, f"{server.settings.transport}: started; " + "; ".join(parts), warnings)
