"""The commands of `opsagent`, one module each. A module's `register(commands)` adds its parser (arguments, help)
and the handler that runs it; `bot.cli.main` calls each module's `register` in a fixed order and dispatches.

Registering imports nothing heavy: a handler imports the work of its command when it runs, so `opsagent stats` or
`opsagent --help` start without the tools, the Slack app or the store's drivers.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from bot.cli.terminal import Terminal

if TYPE_CHECKING:
    from bot.settings import Settings

Handler = Callable[[argparse.Namespace, Terminal], Awaitable[int]]
"""Runs a parsed command, showing everything on the terminal; returns the exit code. What a person must fix is
raised as a ValueError or OSError, which `main` words on stderr (exit 2)."""


class Commands:
    """Where a command module adds itself: `opsagent`'s commands, or one command's own (`tools list|call`).

    Every parser takes the options all commands take (`--config`, `--log-file`), before or after its name.
    """

    def __init__(
        self,
        choices: argparse._SubParsersAction[argparse.ArgumentParser],
        common: argparse.ArgumentParser,
        *,
        described: bool = True,
    ) -> None:
        self._choices = choices
        self._common = common
        self._described = described

    def add(self, name: str, help: str, run: Handler | None = None) -> argparse.ArgumentParser:
        """The parser of command `name`, which `run` handles (a command made of subcommands has none)."""
        description = help if self._described else None
        parser = self._choices.add_parser(name, help=help, description=description, parents=[self._common])
        if run is not None:
            parser.set_defaults(run=run)
        return parser

    def under(self, parser: argparse.ArgumentParser, *, dest: str, metavar: str) -> Commands:
        """The subcommands of the command `parser` parses, as `tools list|call`."""
        choices = parser.add_subparsers(dest=dest, required=True, metavar=metavar)
        return Commands(choices, self._common, described=False)


def settings_of(args: argparse.Namespace) -> Settings:
    """The configuration the command line names (`--config`, else $OPSAGENT_CONFIG, else ./opsagent.toml)."""
    from bot.settings import load_settings

    return load_settings(getattr(args, "config", None))
