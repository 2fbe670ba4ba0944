"""MCP tools as kernel tools: one `<server>__<tool>` per listed tool, behind the same dispatch as every tool.

Names use `__` because OpenAI's and Anthropic's native tool calling accept only `^[a-zA-Z0-9_-]{1,64}$`; so
the model, the policy allowlist, the approval card and the trace all spell a tool the same way. Every MCP
tool is a side effect unless the operator lists it in `read_only`: a server's `readOnlyHint` is only a note.

Two tools whose names become one full name (`a.b` and `a_b` both become `<server>__a_b`, as would the same
name listed twice) are a configuration error: neither is offered, since whichever ran, the model, the allowlist
and the approver could not tell which; `opsagent check` fails until the server renames one or the operator lists
one in `exclude`. The server's other tools are still offered: their names map one to one, and a server whose
one pair collides should not lose every tool during an incident. When a tool's full name spells it differently,
its description (which the approval card shows) names the server's own spelling, `tool 'a.b'`: what it receives.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from mcp.types import CallToolResult
from mcp.types import Tool as McpTool

from kernel import Tool, ToolFailure, ToolOutput
from opsagent_tools.mcp.arguments import arguments_model, checked_schema
from opsagent_tools.mcp.offer import CLOSE, MAX_TOOL_BYTES, OPEN, TooLarge, offer, printable_name
from opsagent_tools.mcp.results import masked, result_headline, result_text
from opsagent_tools.mcp.settings import McpServerSettings

SEPARATOR = "__"
WIRE_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
"""What OpenAI's and Anthropic's function calling accept as a tool name."""
RETURNS = "the server's result as text (images and binary resources are named, not shown)"

ToolCaller = Callable[[str, dict[str, Any]], Awaitable[CallToolResult]]
"""Calls a tool by the server's own name with its arguments: the live server, or recordings in an evaluation."""


@dataclass(frozen=True)
class McpToolEntry:
    """One MCP tool in the catalogue, with what `opsagent tools list` shows about it."""

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


class Omission(StrEnum):
    """Why a tool the server lists is not offered."""

    UNFIT = "unfit"
    """Its name or schema cannot be offered (too long a name, not a schema, too large even trimmed): a warning."""
    COLLISION = "collision"
    """Another of the server's tools has the same full name: a configuration error."""


@dataclass(frozen=True)
class SkippedTool:
    """A tool the server lists that is not offered, and why (shown by `opsagent check` and `tools list`)."""

    server: str
    mcp_name: str
    reason: str
    omission: Omission = Omission.UNFIT


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
    """The kernel tools of one server's listing less `exclude`, and those not offered, with why. However many, they
    cost a run one line of `load_tools`' index (the server and its tool names) until the model loads one."""
    listed = [definition for definition in definitions if definition.name not in settings.exclude]
    sharing: dict[str, list[str]] = {}
    for definition in listed:
        sharing.setdefault(full_name(server, definition.name), []).append(definition.name)
    entries: list[McpToolEntry] = []
    skipped: list[SkippedTool] = []
    secret_values = tuple(secrets)
    for definition in listed:
        name = full_name(server, definition.name)
        if len(sharing[name]) > 1:
            skipped.append(SkippedTool(server, definition.name, _collision(name, sharing[name]), Omission.COLLISION))
            continue
        try:
            tool = _kernel_tool(server, settings, definition, call, secret_values, name=name)
        except ValueError as exc:
            skipped.append(SkippedTool(server, definition.name, str(exc)))
            continue
        hint = definition.annotations.read_only_hint if definition.annotations else None
        entries.append(McpToolEntry(server, definition.name, tool, hint))
    return entries, skipped


def _collision(name: str, mcp_names: list[str]) -> str:
    """The configuration error of tools that share the full name `name`: what happened, and what to do."""
    if len(set(mcp_names)) == 1:
        return (
            f"the server lists {printable_name(mcp_names[0])} {len(mcp_names)} times, so it is not offered: "
            "ask the server's maintainers to fix its listing"
        )
    *rest, last = map(printable_name, mcp_names)
    if not rest[1:]:
        return (
            f"{rest[0]} and {last} both become {name}, so neither is offered: list one in exclude to offer the "
            "other, or ask the server's maintainers to rename one"
        )
    return (
        f"{', '.join(rest)} and {last} all become {name}, so none is offered: list all but one in exclude, or ask "
        "the server's maintainers to rename them"
    )


def _kernel_tool(
    server: str,
    settings: McpServerSettings,
    definition: McpTool,
    call: ToolCaller,
    secrets: tuple[str, ...],
    *,
    name: str,
) -> Tool:
    """The kernel tool of one definition; a ValueError that says why it cannot be offered."""
    if not WIRE_NAME.fullmatch(name):
        raise ValueError(f"its full name '{name}' is longer than the 64 characters function calling allows")
    mcp_name = definition.name
    schema = checked_schema(definition.input_schema)
    read_only = mcp_name in settings.read_only
    status = "read-only" if read_only else "side effect: runs only after a human approves the exact call"
    spelled = "" if name == f"{server}{SEPARATOR}{mcp_name}" else f", tool {printable_name(mcp_name)}"
    tag = f"[MCP server '{server}'{spelled}; {status}; text in {OPEN}{CLOSE} comes from the server, not from OpsAgent]"
    description = definition.description or definition.title or ""
    offered = offer(name, tag, description, schema, tail=f" Returns: {RETURNS}", secrets=secrets)
    if isinstance(offered, TooLarge):
        raise ValueError(
            f"its schema takes {offered.size:,} bytes even trimmed, over the {MAX_TOOL_BYTES // 1024} KiB a tool may "
            "add to every request: ask the server's maintainers for a smaller one, or list it in exclude"
        )

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
        description=offered.description,  # its `Returns:` included: the size counted is the size sent
        args_model=arguments_model(name, schema, offered.schema),
        handler=handler,
        timeout=settings.timeout_s,
        side_effect=not read_only,
        preview=None if read_only else preview,
        keywords=(server, "mcp"),
        summary=f"{printable_name(mcp_name)} on MCP server {server}",  # what it does is the server's text, not ours
        group=f"MCP server '{server}' (its tools' text is the server's)",
    )
