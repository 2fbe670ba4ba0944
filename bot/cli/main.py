"""The `opsagent` command line: the top parser, each command added by its own module (`bot.cli.commands`), and the
one place where whatever goes wrong becomes words for a person.

Every command writes through one `Terminal`. Whatever goes wrong, a person gets one clear line on stderr, never a
traceback, and a non-zero exit.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import traceback
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from bot.cli.commands import (
    Commands,
    check,
    demo,
    evaluate,
    init,
    investigate,
    memory,
    postmortem,
    replay,
    serve,
    stats,
    tools,
    verify,
)
from bot.cli.session import INTERRUPTED_EXIT
from bot.cli.terminal import Terminal
from bot.store.protocol import SchemaVersionError, StoreUnavailableError
from bot.telemetry.log_setup import configure_logging

COMMANDS = (init, demo, investigate, verify, replay, stats, evaluate, tools, memory, postmortem, check, serve)
"""The command modules, in the order `opsagent --help` lists them."""
PERSON_FACING = (ValueError, OSError, StoreUnavailableError, SchemaVersionError)
"""Failures whose message says what to fix (Slack's, `SlackUnavailableError`, is an OSError): said as they
are, exit 2."""
BROKEN_PIPE_EXIT = 141
"""As a process killed by SIGPIPE: the reader (`| head`) went away."""
DEBUG_ENV = "OPSAGENT_DEBUG"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `opsagent` console script; returns the process exit code."""
    args = build_parser().parse_args(argv)
    configure_logging(json=args.command == "serve", file=getattr(args, "log_file", None))
    terminal = Terminal()
    try:
        code = asyncio.run(args.run(args, terminal))
        terminal.flush()  # inside the try: a reader that went away fails here, not at exit
        return code
    except KeyboardInterrupt:
        terminal.error("interrupted")
        return INTERRUPTED_EXIT
    except BrokenPipeError:
        terminal.drop_output()
        return BROKEN_PIPE_EXIT
    except PERSON_FACING as exc:
        terminal.error(str(exc) or type(exc).__name__)
        return 2
    except Exception as exc:
        if os.environ.get(DEBUG_ENV):
            traceback.print_exc()
        terminal.error(
            f"unexpected {type(exc).__name__}: {exc}. This is a bug: please report it with the command "
            f"you ran ({DEBUG_ENV}=1 shows the details)."
        )
        return 70


def build_parser() -> argparse.ArgumentParser:
    """`opsagent`'s parser: the options every command takes, `--version`, and each command's own parser."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--config",
        type=Path,
        default=argparse.SUPPRESS,
        help="the configuration file (default: $OPSAGENT_CONFIG, ./opsagent.toml); before or after the command",
    )
    common.add_argument(
        "--log-file", type=Path, default=argparse.SUPPRESS, help="write log lines to this file instead of stderr"
    )
    parser = argparse.ArgumentParser(
        prog="opsagent", description="OpsAgent: an incident-response agent.", parents=[common]
    )
    parser.add_argument("--version", action="version", version=f"opsagent {_version()}")
    commands = Commands(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"), common)
    for command in COMMANDS:
        command.register(commands)
    return parser


def _version() -> str:
    try:
        return version("opsagent")
    except PackageNotFoundError:  # run from a checkout without an install
        return "unknown (not installed)"


if __name__ == "__main__":
    sys.exit(main())
