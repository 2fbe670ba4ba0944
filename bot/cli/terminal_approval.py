"""Approvals asked on the terminal, for `opsagent investigate`, `tools call` and the demo.

With no terminal to ask (a pipe, CI, a cron job) the answer is a denial: side effects fail closed.
"""

from __future__ import annotations

import asyncio
import getpass
import sys
from typing import TextIO

from kernel import ApprovalRequest, Approved, Denied

NO_TERMINAL_REASON = "there is no terminal to ask for approval (run interactively to approve)"


class TerminalApprover:
    """A confirm hook that shows the exact call and waits for y/N from whoever is at the terminal."""

    def __init__(self, *, stdin: TextIO | None = None, stdout: TextIO | None = None, user: str | None = None) -> None:
        self._stdin = stdin or sys.stdin
        self._stdout = stdout or sys.stdout
        self._user = user or getpass.getuser()

    async def __call__(self, request: ApprovalRequest) -> Approved | Denied:
        """Approve only on an explicit yes; anything else, or no terminal, denies."""
        print(render_approval_request(request), file=self._stdout, flush=True)
        if not self._stdin.isatty():
            print(f"  ✗ denied: {NO_TERMINAL_REASON}", file=self._stdout, flush=True)
            return Denied(by="opsagent", reason=NO_TERMINAL_REASON)
        print("  Approve? [y/N] ", end="", file=self._stdout, flush=True)
        answer = (await asyncio.to_thread(self._stdin.readline)).strip().lower()
        if answer in ("y", "yes"):
            return Approved(by=f"{self._user} (terminal)", args_hash=request.args_hash)
        return Denied(by=f"{self._user} (terminal)", reason="denied at the terminal")


def render_approval_request(request: ApprovalRequest) -> str:
    """What the approver sees: the action, its exact arguments, and why the agent wants it."""
    lines = [f"⚠ approval needed (run {request.run_id}, step {request.step}): {request.call.render()}"]
    if request.thought:
        lines.append(f"  why: {request.thought}")
    lines.append(f"  call hash: {request.args_hash[:16]}")
    return "\n".join(lines)
