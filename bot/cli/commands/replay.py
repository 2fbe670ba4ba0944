"""`opsagent replay TRACE`: re-run a trace's recorded model turns on today's kernel and tools."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bot.cli.commands import Commands, settings_of
from bot.cli.terminal import Terminal


def register(commands: Commands) -> None:
    """Add `opsagent replay`."""
    replay = commands.add(
        "replay", "re-run a trace's recorded model turns on today's kernel and tools (side effects dry-run)", _run
    )
    replay.add_argument("trace", type=Path, help="the trace file to replay")
    replay.add_argument("--json", action="store_true", help="print the comparison as JSON")


async def _run(args: argparse.Namespace, terminal: Terminal) -> int:
    from bot.cli.replay import render_report, replay_trace
    from kernel import load_trace

    trace = load_trace(args.trace)
    with terminal.working(f"replaying run {trace.run_id}…"):
        report = await replay_trace(trace, settings_of(args))
    if args.json:
        terminal.data(json.dumps(report.to_dict(), indent=2))
    else:
        terminal.report(render_report(report))
    return 1 if report.divergent else 0
