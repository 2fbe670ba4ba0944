"""The one terminal object every command writes through, on real `rich` consoles: in a pipe, data byte for byte
and words whole; on a terminal, words escaped, wrapped to the width and coloured, a table's cells kept in their
columns; errors one `opsagent:` line each on stderr."""

from __future__ import annotations

import io
import re

from rich.console import Console

from bot.cli.report import Heading, Mark, StatusLine, Table
from bot.cli.terminal import Terminal

ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
HOSTILE = "a\tb\x1b[31mred\r\x07"
"""A tab, an escape sequence that would turn the terminal red, a carriage return and a bell."""


def piped() -> tuple[Terminal, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Terminal(Console(file=out, width=40), errors=Console(file=err, width=40)), out, err


def on_a_terminal(width: int = 40) -> tuple[Terminal, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    console = Console(file=out, width=width, force_terminal=True, color_system="standard")
    errors = Console(file=err, width=width, force_terminal=True, color_system="standard")
    return Terminal(console, errors=errors), out, err


def test_data_reaches_a_pipe_byte_for_byte_and_words_never_carry_control_characters():
    terminal, out, _ = piped()
    terminal.data(HOSTILE)
    terminal.data("{}", end="")
    assert out.getvalue() == HOSTILE + "\n{}"
    terminal, out, _ = piped()
    terminal.say(HOSTILE)
    assert "\x1b" not in out.getvalue()
    assert "\\x1b[31mred\\x0d\\x07" in out.getvalue(), "shown escaped, not dropped"
    terminal, out, _ = on_a_terminal()
    terminal.data(HOSTILE)
    assert "\x1b[31m" not in out.getvalue(), "on a terminal, data cannot drive it either"


def test_in_a_pipe_a_report_reads_as_plain_lines_whatever_the_width():
    terminal, out, _ = piped()
    long = "a line of words longer than the forty columns of this console"
    terminal.report(
        [
            long,
            Heading("query_metrics", "read-only"),
            StatusLine(Mark.OK, "metrics: reachable"),
            StatusLine(Mark.FAILED, "same stop", indent=2),
            Table(["tool", "calls", "by kind"], [["search_logs", "4", "timeout 1"], ["finish", "12", "-"]], right=(1,)),
        ]
    )
    assert out.getvalue().splitlines() == [
        long,
        "query_metrics [read-only]",
        "✓ metrics: reachable",
        "  ✗ same stop",
        "tool         calls  by kind",
        "search_logs      4  timeout 1",
        "finish          12  -",
    ]


def test_on_a_terminal_a_report_is_coloured_and_fits_the_width():
    terminal, out, _ = on_a_terminal(width=30)
    cells = ["search_logs", "4", "timeout 1 · bad_args 2 · denied 3 · rate_limited 4"]
    terminal.report(
        [StatusLine(Mark.FAILED, "repo orders: not readable"), Table(["tool", "calls", "by kind"], [cells])]
    )
    shown = out.getvalue()
    assert "\x1b[1;31m✗" in shown, "the mark in bold red"
    lines = ESCAPES.sub("", shown).splitlines()
    assert max(len(line) for line in lines) <= 30
    assert lines[1].split() == ["tool", "calls", "by", "kind"]
    assert lines[2].split()[:2] == ["search_logs", "4"]
    column = lines[2].index("timeout")
    assert all(not line[:column].strip() for line in lines[3:]), "the last cell wraps in its own column"
    assert "".join("".join(lines[2:]).split()) == "".join(cells).replace(" ", ""), "nothing is cut off"


def test_an_error_is_one_line_per_line_on_stderr():
    terminal, out, err = piped()
    terminal.error("opsagent.toml: [policy] mode = 1\nopsagent.toml: [tools.metrics] unknown key `urll`")
    terminal.error("")
    assert out.getvalue() == ""
    assert err.getvalue().splitlines() == [
        "opsagent: opsagent.toml: [policy] mode = 1",
        "opsagent: opsagent.toml: [tools.metrics] unknown key `urll`",
        "opsagent: ",
    ]
    terminal, _, err = on_a_terminal()
    terminal.error("no run store")
    assert err.getvalue().startswith("\x1b[31mopsagent: no run store"), "red on a terminal"


def test_a_spinner_shows_on_a_terminal_only():
    terminal, out, _ = piped()
    with terminal.working("reaching the backends…"):
        terminal.say("✓ done")
    assert out.getvalue() == "✓ done\n", "a pipe gets no spinner frames"
    terminal, out, _ = on_a_terminal()
    with terminal.working("reaching the backends…"):
        pass
    assert "reaching the backends…" in out.getvalue()
