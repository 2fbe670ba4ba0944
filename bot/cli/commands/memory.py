"""`opsagent memory list|forget`: the memory of past incidents, and forgetting some of it for good."""

from __future__ import annotations

import argparse

from bot.cli.commands import Commands, settings_of
from bot.cli.terminal import Terminal


def register(commands: Commands) -> None:
    """Add `opsagent memory list` and `opsagent memory forget`."""
    memory = commands.add("memory", "list the memory of past incidents, or forget some of it for good")
    under = commands.under(memory, dest="memory_command", metavar="list|forget")
    listed = under.add("list", "the remembered incidents, newest first", _list)
    listed.add_argument("--limit", type=int, default=50, help="how many to show (default 50)")
    listed.add_argument("--json", action="store_true", help="print them as JSON")
    forgetting = under.add(
        "forget", "forget one run's incident, or those older than DAYS (runs and audit stay)", _forget
    )
    which = forgetting.add_mutually_exclusive_group(required=True)
    which.add_argument("run_id", nargs="?", metavar="RUN_ID", help="the run whose incident to forget")
    which.add_argument("--older-than", type=int, metavar="DAYS", help="forget every incident older than DAYS days")


async def _list(args: argparse.Namespace, terminal: Terminal) -> int:
    from bot.cli.memory import incidents_json, list_memory, render_memory

    settings = settings_of(args)
    with terminal.working("reading the memory…"):
        incidents = await list_memory(settings, limit=args.limit)
    if args.json:
        terminal.data(incidents_json(incidents))
    else:
        terminal.report(render_memory(incidents, settings))
    return 0


async def _forget(args: argparse.Namespace, terminal: Terminal) -> int:
    from bot.cli.memory import forget

    if args.older_than is not None and args.older_than < 1:
        raise ValueError("--older-than takes a number of days, 1 or more")
    terminal.success(await forget(settings_of(args), run_id=args.run_id, older_than_days=args.older_than))
    return 0
