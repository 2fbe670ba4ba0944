"""Approvals asked on the terminal, for `opsagent investigate`, `tools call` and the demo, and reading lines there:
with `investigate --interactive`, a line typed while a run goes is guidance for it, unless a question waits for it.

With no terminal to ask (a pipe, CI, a cron job) the answer is a denial: side effects fail closed.
"""

from __future__ import annotations

import asyncio
import getpass
import os
import sys
from datetime import UTC, datetime
from typing import TextIO

from rich.text import Text

from bot.cli.terminal import Terminal, labelled, printable
from kernel import DEFAULT_REDACTOR, ApprovalRequest, Approved, Denied, Guidance, RunControl

NO_TERMINAL_REASON = "there is no terminal to ask for approval (run interactively to approve)"


class TerminalApprover:
    """A confirm hook that shows the exact call and waits for y/N from whoever is at the terminal."""

    def __init__(
        self,
        terminal: Terminal,
        *,
        stdin: TextIO | None = None,
        user: str | None = None,
        lines: TypedLines | None = None,
    ) -> None:
        self._terminal = terminal
        self._stdin = stdin or sys.stdin
        self._user = user or getpass.getuser()
        self._lines = lines
        """Where the answer comes from while typed lines are read for guidance; None: read the terminal directly."""

    async def __call__(self, request: ApprovalRequest) -> Approved | Denied:
        """Approve only on an explicit yes; anything else, or no terminal, denies. The spinner stops and log
        lines wait while the question is open, so they do not land in the middle of it."""
        with self._terminal.paused():
            self._terminal.print(render_approval_request(request))
            if not self._stdin.isatty():
                self._terminal.say(f"  ✗ denied: {NO_TERMINAL_REASON}", style="red")
                return Denied(by="opsagent", reason=NO_TERMINAL_REASON)
            self._terminal.print(Text("  Approve? [y/N] ", style="bold yellow"), end="")
            typed = await (self._lines.answer() if self._lines is not None else read_line(self._stdin))
            answer = typed.strip().lower()
        if answer in ("y", "yes"):
            return Approved(by=f"{self._user} (terminal)", args_hash=request.args_hash)
        return Denied(by=f"{self._user} (terminal)", reason="denied at the terminal")


class TypedLines:
    """The lines typed at the terminal while a run goes: one goes to the question waiting for it (an approval), and
    every other non-empty line is guidance for the run `control` carries, in the name of whoever is at the terminal
    (redacted, like every text that reaches the model)."""

    def __init__(self, terminal: Terminal, stream: TextIO, *, user: str | None = None) -> None:
        self._terminal = terminal
        self._stream = stream
        self._user = user or getpass.getuser()
        self._question: asyncio.Future[str] | None = None
        self.control: RunControl | None = None
        """The run going now (set while one goes)."""

    async def answer(self) -> str:
        """The next line typed: the answer to a question asked now ("" at the end of input)."""
        self._question = asyncio.get_running_loop().create_future()
        try:
            return await self._question
        finally:
            self._question = None

    async def read(self) -> None:
        """Read lines until the end of input (or until cancelled, when the run ends)."""
        while line := await read_line(self._stream):
            if self._question is not None and not self._question.done():
                self._question.set_result(line)
            elif line.strip() and self.control is not None:
                text = DEFAULT_REDACTOR.redact(line.strip())
                self.control.guide(Guidance(f"{self._user} (terminal)", text, datetime.now(UTC)))
                self._terminal.say("✍ noted: the run reads it with its next request", style="dim")
        if self._question is not None and not self._question.done():
            self._question.set_result("")


def render_approval_request(request: ApprovalRequest) -> Text:
    """What the approver sees: the action, its exact arguments, and why the agent wants it."""
    text = Text.assemble(
        ("⚠ approval needed ", "bold yellow"),
        f"(run {request.run_id}, step {request.step}): ",
        (printable(request.call.render()), "bold"),
    )
    if request.thought:
        text.append("\n").append_text(labelled("why", request.thought, ""))
    text.append(f"\n  call hash: {request.args_hash[:16]}", style="dim")
    return text


async def read_line(stream: TextIO) -> str:
    """The next line from `stream` ("" at its end), awaited without a thread, so a cancelled run never leaves a
    reader blocked behind it; a stream with no file descriptor (a test's StringIO) is read directly."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):
        return stream.readline()
    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    loop.add_reader(fd, lambda: ready.done() or ready.set_result(None))
    try:
        await ready
    finally:
        loop.remove_reader(fd)
    line = bytearray()
    while not line.endswith(b"\n"):
        chunk = os.read(fd, 1)  # byte by byte: whatever follows the line stays for the next reader
        if not chunk:
            break
        line += chunk
    return line.decode(errors="replace")
