"""The command line's shape: each command module registers itself and is in `main`'s list, every command it adds
has a handler, and every word reaches the person through the one terminal object."""

from __future__ import annotations

import argparse
import ast
import importlib
import pkgutil
from pathlib import Path

import bot.cli
import bot.cli.commands
from bot.cli.main import COMMANDS, build_parser

CLI = Path(bot.cli.__file__).parent
TERMINAL = CLI / "terminal.py"


def test_every_command_module_is_registered_by_main():
    modules = {
        importlib.import_module(f"bot.cli.commands.{info.name}")
        for info in pkgutil.iter_modules(bot.cli.commands.__path__)
    }
    assert modules == set(COMMANDS), "a command module main does not register, or one main lists that is gone"
    assert all(callable(module.register) for module in COMMANDS)


def leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], object]:
    """Each command and subcommand (`tools list`) with the handler its parser sets."""
    choices = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    if not choices:
        return {path: parser.get_default("run")}
    return {leaf: run for name, sub in choices[0].choices.items() for leaf, run in leaves(sub, (*path, name)).items()}


def test_every_command_has_a_handler():
    handlers = leaves(build_parser())
    assert {"stats", "serve", "check", "init"} <= {path[0] for path in handlers}
    assert {("tools", "list"), ("tools", "call"), ("memory", "list"), ("memory", "forget")} <= set(handlers)
    assert [path for path, run in handlers.items() if not callable(run)] == []


def writes_around_the_terminal(path: Path) -> list[str]:
    """Each `print(…)`, and each use of sys.stdout or sys.stderr, in a module: where it is."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        match node:
            case ast.Call(func=ast.Name(id="print")):
                found.append(f"{path.name}:{node.lineno} print(")
            case ast.Attribute(value=ast.Name(id="sys"), attr="stdout" | "stderr" as stream):
                found.append(f"{path.name}:{node.lineno} sys.{stream}")
    return found


def test_nothing_in_the_command_line_writes_around_the_terminal():
    modules = sorted(CLI.rglob("*.py"))
    assert TERMINAL in modules
    assert writes_around_the_terminal(TERMINAL) != [], "the check sees writes where there are some"
    assert [where for path in modules if path != TERMINAL for where in writes_around_the_terminal(path)] == []
