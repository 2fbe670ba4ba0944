"""`opsagent stats DIR`: what a directory of traces says about the agent in use."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bot.cli.commands import Commands
from bot.cli.terminal import Terminal


def register(commands: Commands) -> None:
    """Add `opsagent stats`."""
    stats = commands.add("stats", "summarise every trace under DIR: success, steps, tokens, tool errors", _run)
    stats.add_argument("directory", type=Path, metavar="DIR")
    stats.add_argument("--json", action="store_true", help="print the summary as JSON")


async def _run(args: argparse.Namespace, terminal: Terminal) -> int:
    from bot.cli.stats import collect_stats, render_stats

    summary = collect_stats(args.directory, warn=terminal.warn)
    if args.json:
        terminal.data(json.dumps(summary.to_dict(), indent=2))
    else:
        terminal.report(render_stats(summary))
    return 0
