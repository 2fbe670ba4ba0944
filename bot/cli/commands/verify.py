"""`opsagent verify RUN_ID|TRACE`: check now whether a run's approved actions held, and record it with the run."""

from __future__ import annotations

import argparse

from bot.cli.commands import Commands, settings_of
from bot.cli.terminal import Terminal


def register(commands: Commands) -> None:
    """Add `opsagent verify`."""
    verify = commands.add(
        "verify",
        "check now whether a run's approved actions held (its symptom read again); exit 1 unless every one held",
        _run,
    )
    verify.add_argument(
        "target",
        metavar="RUN_ID|TRACE",
        help="a run in the run store (opsagent memory list shows run ids), or a trace file (traces/<run id>.json)",
    )


async def _run(args: argparse.Namespace, terminal: Terminal) -> int:
    from bot.cli.verify import verify

    return await verify(settings_of(args), args.target, terminal)
