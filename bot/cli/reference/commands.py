"""docs/reference/commands.md, generated from `opsagent`'s parser: each command's help, usage, arguments and
options, as `opsagent COMMAND --help` says them, and the exit codes every command shares.

To change a line of the page, change the command's `register` (its help, its arguments) and regenerate.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence

from bot.cli.main import BROKEN_PIPE_EXIT, build_parser
from bot.cli.reference.markdown import anchor, generated_note, inline
from bot.cli.session import INTERRUPTED_EXIT

USAGE_WIDTH = 100
"""Usage lines are wrapped at a fixed width, never the terminal's, so the page is the same wherever it is made."""
SHARED_EXITS = (
    (0, "the command did what it was asked"),
    (
        1,
        "it ran, and its answer is no (a command's own meaning, in its description: a run that failed, a check "
        "that did not hold)",
    ),
    (
        2,
        "a mistake to fix first, said in one line on stderr: bad arguments, a bad configuration, a file or "
        "backend that cannot be read",
    ),
    (70, "a bug in OpsAgent: the line on stderr says how to report it (`OPSAGENT_DEBUG=1` shows the traceback)"),
    (INTERRUPTED_EXIT, "interrupted (Ctrl-C)"),
    (BROKEN_PIPE_EXIT, "the reader of its output went away (`| head`), as a process killed by SIGPIPE"),
)
"""What each exit code means, for every command: `bot.cli.main.main` turns failures into 2, 70, 130 and 141."""


def commands_reference() -> str:
    """The whole page, as Markdown (ends with one newline)."""
    parser = build_parser()
    commands = list(_commands(parser, ()))
    shared = _shared_options(parser)
    lines = [
        "# Command reference",
        "",
        generated_note("the command line's parser"),
        "",
        f"{parser.description} `opsagent --help` and `opsagent COMMAND --help` say the same as this page.",
        "",
        "| Command | What it does |",
        "| --- | --- |",
        *(f"| [`{_name(path)}`](#{anchor(_name(path))}) | {inline(helped)} |" for path, helped, _ in commands),
        "",
        "## Options of every command",
        "",
        "Every command takes these, before or after its name:",
        "",
        *_option_table(shared),
        "",
        "`opsagent --version` prints the installed version.",
        "",
        "## Exit codes",
        "",
        "| Code | Meaning |",
        "| --- | --- |",
        *(f"| {code} | {inline(meaning)} |" for code, meaning in SHARED_EXITS),
        "",
    ]
    for path, helped, command in commands:
        lines += _command_lines(path, helped, command, {id(action) for action in shared})
    return "\n".join(lines).rstrip("\n") + "\n"


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], str, argparse.ArgumentParser]]:
    """Each command (and subcommand) under `parser`: its words, its one-line help, its parser, in help order."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, command in action.choices.items():
                yield (*path, name), helps.get(name, ""), command
                yield from _commands(command, (*path, name))


def _shared_options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [action for action in parser._actions if action.dest in {"config", "log_file"}]


def _command_lines(path: tuple[str, ...], helped: str, command: argparse.ArgumentParser, shared: set[int]) -> list[str]:
    lines = [
        f"## `{_name(path)}`",
        "",
        inline(helped[:1].upper() + helped[1:] + "."),
        "",
        "```text",
        _usage(command),
        "```",
        "",
    ]
    own = [
        action
        for action in command._actions
        if id(action) not in shared
        and action.dest not in {"config", "log_file"}
        and not isinstance(action, argparse._HelpAction | argparse._SubParsersAction)
        and action.help != argparse.SUPPRESS
    ]
    subcommands = [sub for sub in command._actions if isinstance(sub, argparse._SubParsersAction)]
    if own:
        lines += _option_table(own)
        lines.append("")
    for sub in subcommands:
        names = ", ".join(f"[`{_name((*path, name))}`](#{anchor(_name((*path, name)))})" for name in sub.choices)
        lines += [f"Its commands: {names}.", ""]
    return lines


def _option_table(actions: Sequence[argparse.Action]) -> list[str]:
    rows = ["| Argument | What it is |", "| --- | --- |"]
    for action in actions:
        rows.append(f"| {inline('`' + _spelled(action) + '`')} | {inline(_help_of(action))} |")
    return rows


def _spelled(action: argparse.Action) -> str:
    """An argument as `--help` spells it: `--keep DIR`, `--json`, `trace`, `[task]`, `--provider {openai,anthropic}`."""
    if not action.option_strings:
        shown = action.metavar or action.dest
        return f"[{shown}]" if action.nargs == "?" else str(shown)
    names = ", ".join(action.option_strings)
    if action.nargs == 0:
        return names
    value = action.metavar or (f"{{{','.join(map(str, action.choices))}}}" if action.choices else action.dest.upper())
    return f"{names} {value}"


def _help_of(action: argparse.Action) -> str:
    text = (action.help or "") % {"default": action.default, "prog": "opsagent"}
    if action.choices and not action.option_strings:
        text = f"{text} (one of {', '.join(map(str, action.choices))})".strip()
    if action.required and action.option_strings:
        text = f"{text} (required)".strip()
    return text


def _usage(command: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(command.prog, width=USAGE_WIDTH)
    formatter.add_usage(command.usage, command._actions, command._mutually_exclusive_groups)
    return formatter.format_help().strip()


def _name(path: tuple[str, ...]) -> str:
    return " ".join(("opsagent", *path))
