"""MCP tools as kernel tools: one `<server>__<tool>` per listed tool, behind the same dispatch as every tool.

Names use `__` because OpenAI's and Anthropic's native tool calling accept only `^[a-zA-Z0-9_-]{1,64}$`; so
the model, the policy allowlist, the approval card and the trace all spell a tool the same way. Every MCP
tool is a side effect unless the operator lists it in `read_only`: a server's `readOnlyHint` is only a note.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from mcp.types import CallToolResult
from mcp.types import Tool as McpTool

from kernel import Tool, ToolFailure, ToolOutput
from opsagent_tools.mcp.arguments import arguments_model
from opsagent_tools.mcp.results import masked, result_headline, result_text
from opsagent_tools.mcp.settings import McpServerSettings

SEPARATOR = "__"
WIRE_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
"""What OpenAI's and Anthropic's function calling accept as a tool name."""
MAX_DESCRIPTION_CHARS = 1024
"""A server's description is untrusted text shown to the model every turn: long ones are cut."""

ToolCaller = Callable[[str, dict[str, Any]], Awaitable[CallToolResult]]
"""Calls a tool by the server's own name with its arguments: the live server, or recordings in an evaluation."""


@dataclass(frozen=True)
class McpToolEntry:
    """One MCP tool in the catalogue, with what `opsagent tools list` and `mcp_search` show about it."""

    server: str
    mcp_name: str
    """The server's own name for the tool (what `read_only` lists and what is sent to the server)."""
    tool: Tool
    read_only_hint: bool | None
    """What the server claims; shown to the operator, never trusted."""

    @property
    def name(self) -> str:
        """The full name the model calls: `<server>__<tool>`."""
        return self.tool.name

    @property
    def read_only(self) -> bool:
        """Whether the operator listed it in `read_only` (else it is a side effect)."""
        return not self.tool.side_effect


@dataclass(frozen=True)
class SkippedTool:
    """A tool the server lists that is not offered, and why (shown by `opsagent check` and `tools list`)."""

    server: str
    mcp_name: str
    reason: str


def full_name(server: str, mcp_name: str) -> str:
    """The name the model calls: the server's name, `__`, the tool's name with anything the wire refuses as `_`."""
    return f"{server}{SEPARATOR}{re.sub(r'[^a-zA-Z0-9_-]', '_', mcp_name)}"


def server_tools(
    server: str,
    settings: McpServerSettings,
    definitions: Sequence[McpTool],
    call: ToolCaller,
    *,
    secrets: Iterable[str] = (),
) -> tuple[list[McpToolEntry], list[SkippedTool]]:
    """The kernel tools of one server's listing (deferred to `mcp_search` past `max_tools`), and those skipped."""
    entries: list[McpToolEntry] = []
    skipped: list[SkippedTool] = []
    deferred = len(definitions) > settings.max_tools
    secret_values = tuple(secrets)
    for definition in definitions:
        name = full_name(server, definition.name)
        problem = _name_problem(name, {entry.name for entry in entries})
        if problem is None:
            try:
                tool = _kernel_tool(server, settings, definition, call, secret_values, name=name, deferred=deferred)
            except ValueError as exc:
                problem = str(exc)
        if problem is not None:
            skipped.append(SkippedTool(server, definition.name, problem))
            continue
        hint = definition.annotations.read_only_hint if definition.annotations else None
        entries.append(McpToolEntry(server, definition.name, tool, hint))
    return entries, skipped


def _name_problem(name: str, taken: set[str]) -> str | None:
    if not WIRE_NAME.fullmatch(name):
        return f"its full name '{name}' is longer than the 64 characters function calling allows"
    if name in taken:
        return f"another of the server's tools already has the full name '{name}'"
    return None


def _kernel_tool(
    server: str,
    settings: McpServerSettings,
    definition: McpTool,
    call: ToolCaller,
    secrets: tuple[str, ...],
    *,
    name: str,
    deferred: bool,
) -> Tool:
    mcp_name = definition.name
    read_only = mcp_name in settings.read_only
    description = " ".join((definition.description or definition.title or "(no description)").split())
    if len(description) > MAX_DESCRIPTION_CHARS:
        description = description[:MAX_DESCRIPTION_CHARS] + " …"
    status = "read-only" if read_only else "side effect: runs only after a human approves the exact call"
    description = f"{description} [MCP server '{server}'; {status}]"

    async def handler(arguments: dict[str, Any]) -> ToolOutput:
        result = await call(mcp_name, arguments)
        text = masked(result_text(result), secrets)
        if result.is_error:
            raise ToolFailure(f"the MCP server '{server}' reports an error: {text}")
        return ToolOutput(text, headline=result_headline(text))  # a server's links are not ours to vouch for

    async def preview(arguments: dict[str, Any]) -> dict[str, Any]:
        return {"mcp_server": server, "tool": mcp_name, "arguments": arguments}

    return Tool(
        name=name,
        description=description,
        args_model=arguments_model(name, definition.input_schema),
        handler=handler,
        timeout=settings.timeout_s,
        side_effect=not read_only,
        returns="the server's result as text (images and binary resources are named, not shown)",
        preview=None if read_only else preview,
        deferred=deferred,
    )
