"""`opsagent tools list|call`: the configured tools, or one of them called through the agent's dispatch."""

from __future__ import annotations

import argparse

from bot.cli.commands import Commands, settings_of
from bot.cli.terminal import Terminal


def register(commands: Commands) -> None:
    """Add `opsagent tools list` and `opsagent tools call`."""
    tools = commands.add("tools", "list the configured tools, or call one through the agent's dispatch")
    under = commands.under(tools, dest="tools_command", metavar="list|call")
    listing = under.add("list", "the registered tools: what each does and its arguments", _list)
    listing.add_argument("--json", action="store_true", help="print the model-facing specs as JSON")
    call = under.add("call", "run one tool and print the observation the model would see", _call)
    call.add_argument("name")
    call.add_argument("--args", default="{}", help="the arguments as a JSON object")


async def _list(args: argparse.Namespace, terminal: Terminal) -> int:
    from bot.cli.tools import list_tools

    return await list_tools(settings_of(args), terminal, as_json=args.json)


async def _call(args: argparse.Namespace, terminal: Terminal) -> int:
    from bot.cli.tools import call_tool

    return await call_tool(settings_of(args), terminal, args.name, args.args)
