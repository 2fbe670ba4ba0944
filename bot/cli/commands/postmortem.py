"""`opsagent postmortem RUN_ID`: the postmortem draft of a stored run, as “@opsagent postmortem” makes it."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.cli.commands import Commands, settings_of
from bot.cli.terminal import Terminal


def register(commands: Commands) -> None:
    """Add `opsagent postmortem`."""
    postmortem = commands.add(
        "postmortem", "draft the postmortem of a run in the run store, as @opsagent postmortem does", _run
    )
    postmortem.add_argument("run_id", metavar="RUN_ID", help="the run (opsagent memory list shows run ids)")
    postmortem.add_argument("--output", type=Path, help="write the Markdown draft to this file instead of stdout")
    postmortem.add_argument(
        "--facts-only", action="store_true", help="no model: only the recorded facts, the narrative left to people"
    )


async def _run(args: argparse.Namespace, terminal: Terminal) -> int:
    from bot.cli.postmortem import postmortem_draft

    with terminal.working(f"drafting the postmortem of run {args.run_id}…"):
        markdown = await postmortem_draft(settings_of(args), args.run_id, facts_only=args.facts_only)
    if args.output is None:
        terminal.data(markdown, end="")
    else:
        args.output.write_text(markdown, encoding="utf-8")
        terminal.success(f"wrote the postmortem draft to {args.output}")
    return 0
