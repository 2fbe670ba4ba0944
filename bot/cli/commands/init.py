"""`opsagent init`: write a commented opsagent.toml from flags or a few questions, then check it."""

from __future__ import annotations

import argparse

from bot.cli import init
from bot.cli.commands import Commands
from bot.cli.terminal import Terminal


def register(commands: Commands) -> None:
    """Add `opsagent init` and its flags."""
    init.add_arguments(
        commands.add("init", "write a commented opsagent.toml from flags or a few questions, then check it", _run)
    )


async def _run(args: argparse.Namespace, terminal: Terminal) -> int:
    from bot.cli.check import run_check
    from bot.settings import load_settings

    answers = init.answers_from(args)
    if answers is None:
        terminal.say("No flags given: a few questions (an empty answer skips a section).", style="bold")
        answers = await init.ask(terminal)
    init.write_config(args.output, init.render_config(answers), force=args.force)
    configured = ", ".join(init.summary(answers)) or "nothing yet (every section is a commented example)"
    terminal.success(f"wrote {args.output}: {configured}")
    terminal.say(f"checking it (again later with: opsagent --config {args.output} check)…", style="dim")
    return await run_check(load_settings(args.output), terminal)
