"""`opsagent check`: the configuration loads, the model answers, each backend is reached."""

from __future__ import annotations

import argparse

from bot.cli.commands import Commands, settings_of
from bot.cli.terminal import Terminal


def register(commands: Commands) -> None:
    """Add `opsagent check`."""
    commands.add("check", "validate the configuration, probe the model and reach each backend", _run)


async def _run(args: argparse.Namespace, terminal: Terminal) -> int:
    from bot.cli.check import run_check

    return await run_check(settings_of(args), terminal)
