"""`opsagent postmortem RUN_ID|TRACE`: the postmortem draft of a stored run or of a trace file, as “@opsagent
postmortem” makes it."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.cli.commands import Commands, settings_of
from bot.cli.terminal import Terminal


def register(commands: Commands) -> None:
    """Add `opsagent postmortem`."""
    postmortem = commands.add(
        "postmortem", "draft the postmortem of a stored run or a trace file, as @opsagent postmortem does", _run
    )
    postmortem.add_argument(
        "target",
        metavar="RUN_ID|TRACE",
        help="a run in the run store (opsagent memory list shows run ids), or a trace file (traces/<run id>.json)",
    )
    postmortem.add_argument("--output", type=Path, help="write the Markdown draft to this file instead of stdout")
    postmortem.add_argument(
        "--facts-only", action="store_true", help="no model: only the recorded facts, the narrative left to people"
    )


async def _run(args: argparse.Namespace, terminal: Terminal) -> int:
    from bot.cli.postmortem import postmortem_draft

    with terminal.working(f"drafting the postmortem of {args.target}…"):
        markdown = await postmortem_draft(settings_of(args), args.target, facts_only=args.facts_only)
    if args.output is None:
        terminal.data(markdown, end="")
    else:
        args.output.write_text(markdown, encoding="utf-8")
        terminal.success(f"wrote the postmortem draft to {args.output}")
    return 0
