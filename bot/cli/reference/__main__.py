"""`python -m bot.cli.reference [--check] [DIR]`: write the generated reference pages into DIR (default
docs/reference), or with `--check` write nothing and exit 1 naming each page that is not current."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from bot.cli.reference.commands import commands_reference
from bot.cli.reference.configuration import configuration_reference
from bot.cli.reference.markdown import GENERATED_BY
from bot.cli.terminal import Terminal

PAGES: dict[str, Callable[[], str]] = {
    "configuration.md": configuration_reference,
    "commands.md": commands_reference,
}
"""Each generated page of docs/reference and what makes it."""
DEFAULT_DIRECTORY = Path("docs/reference")


def stale_pages(directory: Path) -> list[str]:
    """The pages under `directory` that differ from what the models and the parser make now (or are missing)."""
    return [
        name
        for name, make in PAGES.items()
        if not (directory / name).is_file() or (directory / name).read_text(encoding="utf-8") != make()
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Write (or with `--check`, compare) the pages; returns the exit code."""
    parser = argparse.ArgumentParser(prog=GENERATED_BY, description=__doc__)
    parser.add_argument("directory", nargs="?", type=Path, default=DEFAULT_DIRECTORY)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page is not current")
    args = parser.parse_args(argv)
    terminal = Terminal()
    if args.check:
        stale = stale_pages(args.directory)
        for name in stale:
            terminal.error(f"{args.directory / name} is not current: run `{GENERATED_BY}` to regenerate it")
        return 1 if stale else 0
    args.directory.mkdir(parents=True, exist_ok=True)
    for name, make in PAGES.items():
        (args.directory / name).write_text(make(), encoding="utf-8")
        terminal.success(f"wrote {args.directory / name}")
    terminal.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
