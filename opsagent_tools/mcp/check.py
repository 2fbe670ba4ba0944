"""`opsagent check` for MCP servers: one line per server, started with how many tools (read-only,
excluded) or why it did not start; a collision of names or a typo in `read_only` or `exclude` fails it, and each
tool left out is a warning under it."""

from __future__ import annotations

from collections.abc import Sequence

from opsagent_tools.check_result import CheckResult
from opsagent_tools.mcp.offer import printable_name
from opsagent_tools.mcp.server import McpServer
from opsagent_tools.mcp.tools import McpToolEntry, Omission, SkippedTool


def server_report(server: McpServer, offered: Sequence[McpToolEntry], left_out: Sequence[SkippedTool]) -> CheckResult:
    """`server`'s line, from the tools offered and left out of every server."""
    label = f"mcp {server.name}"
    if not server.started:
        return CheckResult(label, False, f"{server.settings.transport}: did not start: {server.failure}")
    entries = [entry for entry in offered if entry.server == server.name]
    skipped = [tool for tool in left_out if tool.server == server.name]
    read_only = sum(entry.read_only for entry in entries)
    parts = [f"{len(entries)} tools ({read_only} read-only, {len(entries) - read_only} side effects)"]
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
