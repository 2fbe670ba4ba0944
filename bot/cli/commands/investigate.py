"""`opsagent investigate TASK`: one investigation with the configured model and tools, then follow-ups."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.cli.commands import Commands, settings_of
from bot.cli.terminal import Terminal


def register(commands: Commands) -> None:
    """Add `opsagent investigate`."""
    run = commands.add("investigate", "investigate TASK with the configured model and tools", _run)
    run.add_argument("task", nargs="?", help="what to investigate (with --scripted: the demo's task by default)")
    run.add_argument("--trace", type=Path, help="where to save the trace (default: traces/<run id>.json)")
    run.add_argument("--interactive", action="store_true", help="then take follow-up questions, as a Slack thread")
    run.add_argument(
        "--scripted", action="store_true", help="play the demo's scripted model (for `opsagent demo --keep` backends)"
    )


async def _run(args: argparse.Namespace, terminal: Terminal) -> int:
    from bot.cli.demo import DEMO_TASK
    from bot.cli.investigate import investigate

    settings = settings_of(args)
    if args.scripted and args.interactive:
        raise ValueError("--interactive needs a model: --scripted plays one scripted investigation")
    task = (args.task or "").strip()  # a blank task is no task: the model would be asked to investigate nothing
    if not args.scripted and not task:
        raise ValueError('say what to investigate: opsagent investigate "order-service 5xx jumped to 12%"')
    return await investigate(
        settings,
        task or DEMO_TASK,
        terminal,
        trace=args.trace,
        interactive=args.interactive,
        scripted=args.scripted,
    )
