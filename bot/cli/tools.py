"""The configured tools on the terminal: opened under a spinner with each MCP server's trouble said once, listed
as an operator reads them (`opsagent tools list`), and called through the very dispatch the agent uses
(`opsagent tools call`: validation, policy, approvals, redaction, limits)."""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any

from bot.agent import Toolset, opened_toolset
from bot.cli.report import Heading, Report
from bot.cli.terminal import Terminal
from bot.cli.terminal_approval import TerminalApprover
from bot.settings import Settings
from kernel import DEFAULT_REDACTOR, CallContext, Dispatcher, RunControl, Tool, ToolCall, ToolRegistry
from opsagent_tools.mcp import McpToolEntry, printable_name
from opsagent_tools.memory import IncidentMemory

NO_TOOLS = (
    "no tools are configured: add [tools.metrics], [tools.logs], [tools.repos], [tools.kubernetes], "
    "[tools.actions], [tools.mcp.servers.<name>] or [knowledge] runbooks"
)


@contextlib.asynccontextmanager
async def shown_toolset(
    settings: Settings, terminal: Terminal, *, memory: IncidentMemory | None = None
) -> AsyncIterator[Toolset]:
    """The configured toolset (with `similar_incidents` over `memory` when given), opened under a spinner, closed
    on exit. A server that did not start or is misconfigured, and each tool left out, is said once on stderr; the
    command goes on with the other tools."""
    async with contextlib.AsyncExitStack() as stack:
        with terminal.working("starting the tools…"):
            toolset = await stack.enter_async_context(opened_toolset(settings, memory=memory))
        for report in toolset.mcp.report():
            if not report.ok:
                terminal.warn(f"opsagent: {report.name}: {report.message}")
            for warning in report.warnings:
                terminal.warn(f"opsagent: {report.name}: {warning}")
        yield toolset


async def list_tools(settings: Settings, terminal: Terminal, *, as_json: bool) -> int:
    """Show every registered tool in words for people: what it does and its arguments (or, as JSON, the
    model-facing specs); 1 when a configured MCP server did not start, whose tools are then missing from the list."""
    async with shown_toolset(settings, terminal) as toolset:
        registry, entries = toolset.tools, {entry.name: entry for entry in toolset.mcp.entries}
        down = [server.name for server in toolset.mcp.servers if not server.started]
        if as_json:
            terminal.data(json.dumps([_tool_json(tool, entries.get(tool.name)) for tool in registry], indent=2))
        elif len(registry):
            terminal.report(render_tools(registry, entries))
        elif not down:
            terminal.say(NO_TOOLS)
    if down:
        servers = len(toolset.mcp.servers)
        terminal.error(
            f"{len(down)} of {servers} MCP server{'' if servers == 1 else 's'} did not start ({', '.join(down)}): "
            f"{'their tools are' if len(down) > 1 else 'its tools are'} not listed; the reason is above, and "
            "`opsagent check` checks them again"
        )
    return 1 if down else 0


async def call_tool(settings: Settings, terminal: Terminal, name: str, arguments_json: str) -> int:
    """Run tool `name` with `arguments_json` and show the observation the model would see; 1 when it failed, shown
    in the words for people (the model's hint is not theirs)."""
    try:
        arguments = json.loads(arguments_json)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f'--args is not valid JSON ({exc}); pass an object such as \'{{"service": "order"}}\''
        ) from exc
    if not isinstance(arguments, dict):
        raise ValueError("--args must be a JSON object")
    call = ToolCall(name=name, args=arguments)
    async with shown_toolset(settings, terminal) as toolset:
        dispatcher = Dispatcher(
            toolset.tools,
            policy=settings.policy,
            confirm=TerminalApprover(terminal),
            redactor=DEFAULT_REDACTOR,
            control=RunControl(),
        )
        with terminal.working(f"running {name}…"):
            outcome = await dispatcher.dispatch(
                call, CallContext(run_id=f"cli-{uuid.uuid4().hex[:8]}", step=1, call=call)
            )
    terminal.data(outcome.error.said if outcome.error else outcome.text)
    return 1 if outcome.error else 0


def render_tools(registry: ToolRegistry, mcp_entries: Mapping[str, McpToolEntry]) -> Report:
    """Each tool: its name and flags, its summary for people (`Tool.summary`, never the model's description) and
    its arguments' names, a blank line between tools."""
    parts: list[str | Heading] = []
    for tool in registry:
        if parts:
            parts.append("")
        parts.append(Heading(tool.name, _tool_flags(tool, mcp_entries.get(tool.name))))
        if tool.summary:
            parts.append(f"  {tool.summary}")
        parts.append(f"  arguments: {_argument_names(tool)}")
    return parts


def _argument_names(tool: Tool) -> str:
    """ "service (required), metric, window"; "none" for a tool without arguments."""
    parameters = tool.spec.parameters
    required = set(parameters.get("required", ()))
    names = [f"{name} (required)" if name in required else name for name in parameters.get("properties", {})]
    return ", ".join(names) or "none"


def _tool_flags(tool: Tool, entry: McpToolEntry | None) -> str:
    """What an operator needs to know about a tool beyond its description: read-only or a side effect, and
    where it comes from."""
    flags = ["side effect: needs approval" if tool.side_effect else "read-only"]
    if tool.always:
        flags.append("offered every turn ([tools] always)")
    if entry is not None:
        flags.insert(0, f"MCP server {entry.server}, tool {printable_name(entry.mcp_name)}")
        if entry.read_only:
            flags[-1] = "read-only (listed in read_only)"
        if entry.read_only_hint and tool.side_effect:
            flags.append("the server says readOnlyHint = true: not trusted; list it in read_only if it only reads")
    return "; ".join(flags)


def _tool_json(tool: Tool, entry: McpToolEntry | None) -> dict[str, Any]:
    """The model-facing spec, plus what the operator needs: side effects, and an MCP tool's origin."""
    data: dict[str, Any] = {**tool.spec.model_dump(), "side_effect": tool.side_effect, "always": tool.always}
    if entry is not None:
        data["mcp"] = {"server": entry.server, "tool": entry.mcp_name, "read_only_hint": entry.read_only_hint}
    return data
