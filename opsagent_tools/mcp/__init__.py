"""MCP servers as tools: each configured server's tools as `<server>__<tool>`, behind the kernel's dispatch.

Every MCP tool is a side effect unless the operator lists it as read-only; servers are supervised and restarted.
"""

from opsagent_tools.mcp.connections import McpConnections
from opsagent_tools.mcp.offer import printable_name
from opsagent_tools.mcp.settings import McpServerSettings, McpSettings
from opsagent_tools.mcp.tools import McpToolEntry, ToolCaller, full_name, server_tools

__all__ = [
    "McpConnections",
    "McpServerSettings",
    "McpSettings",
    "McpToolEntry",
    "ToolCaller",
    "full_name",
    "printable_name",
    "server_tools",
]
