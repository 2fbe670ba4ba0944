"""The commands over what the run store remembers: `memory list|forget`, `postmortem RUN_ID` and `eval export
--feedback DIR`; `main` registers the first two with `add_store_commands` and routes `eval export` here.

Their modules load when a command runs, so the other commands start without the store's drivers.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from bot.settings import Settings, load_settings

Command = Callable[[str, str], argparse.ArgumentParser]
"""`main`'s maker of one command's parser (its name and help), with the options every command takes."""


def add_store_commands(command: Command, common: argparse.ArgumentParser) -> None:
    """Add `memory list|forget` and `postmortem` to the command line."""
    memory = command("memory", "list the memory of past incidents, or forget some of it for good")
    memory_commands = memory.add_subparsers(dest="memory_command", required=True, metavar="list|forget")
    listed = memory_commands.add_parser("list", help="the remembered incidents, newest first", parents=[common])
    listed.add_argument("--limit", type=int, default=50, help="how many to show (default 50)")
    listed.add_argument("--json", action="store_true", help="print them as JSON")
    listed.set_defaults(handler=_memory_list)
    forgetting = memory_commands.add_parser(
        "forget", help="forget one run's incident, or those older than DAYS (runs and audit stay)", parents=[common]
    )
    which = forgetting.add_mutually_exclusive_group(required=True)
    which.add_argument("run_id", nargs="?", metavar="RUN_ID", help="the run whose incident to forget")
    which.add_argument("--older-than", type=int, metavar="DAYS", help="forget every incident older than DAYS days")
    forgetting.set_defaults(handler=_memory_forget)

    postmortem = command("postmortem", "draft the postmortem of a run in the run store, as @opsagent postmortem does")
    postmortem.add_argument("run_id", metavar="RUN_ID", help="the run (opsagent memory list shows run ids)")
    postmortem.add_argument("--output", type=Path, help="write the Markdown draft to this file instead of stdout")
    postmortem.add_argument(
        "--facts-only", action="store_true", help="no model: only the recorded facts, the narrative left to people"
    )
    postmortem.set_defaults(handler=_postmortem)


async def eval_export(args: argparse.Namespace) -> int:
    """`opsagent eval export --feedback DIR`: the rated runs as scenario files; exit 1 when a run's file could not
    be written (the others are), 0 when every rated run was exported or cannot be a scenario (each says why)."""
    from bot.cli.stored import existing_store
    from bot.eval.export import rated_scenarios, write_scenarios
    from bot.eval.tools import catalogue_names

    if str(args.scenarios) != "export" or args.feedback is None:
        raise ValueError("to export rated runs as scenarios, run: opsagent eval export --feedback DIR")
    async with existing_store(_settings(args)) as store:
        texts, left_out = await rated_scenarios(store.feedback, store.runs, catalogue_names())
    written, not_written = write_scenarios(texts, args.feedback, catalogue_names())
    left_out += not_written
    for run in left_out:
        print(f"{'failed' if run.failed else 'skipped'} {run.run_id}: {run.why}", file=sys.stderr)
    rated = len(written) + len(left_out)
    failed = sum(run.failed for run in left_out)
    skipped = f"; {len(left_out) - failed} skipped" if len(left_out) > failed else ""
    not_done = f"; {failed} failed (see above)" if failed else ""
    print(
        f"exported {len(written)} of {rated} rated run{'s' if rated != 1 else ''} as scenarios in {args.feedback}"
        f"{skipped}{not_done}"
    )
    for path in written:
        print(f"  {path}")
    return 1 if failed else 0


async def _memory_list(args: argparse.Namespace) -> int:
    from bot.cli.memory import list_memory

    print(await list_memory(_settings(args), limit=args.limit, as_json=args.json))
    return 0


async def _memory_forget(args: argparse.Namespace) -> int:
    from bot.cli.memory import forget

    if args.older_than is not None and args.older_than < 1:
        raise ValueError("--older-than takes a number of days, 1 or more")
    print(await forget(_settings(args), run_id=args.run_id, older_than_days=args.older_than))
    return 0


async def _postmortem(args: argparse.Namespace) -> int:
    from bot.cli.postmortem import postmortem_draft, write_draft

    markdown = await postmortem_draft(_settings(args), args.run_id, facts_only=args.facts_only)
    print(write_draft(markdown, args.output), end="" if args.output is None else "\n")
    return 0


def _settings(args: argparse.Namespace) -> Settings:
    return load_settings(getattr(args, "config", None))
