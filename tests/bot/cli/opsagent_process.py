"""`opsagent` run as a person runs it: the installed console script in a subprocess, its output and exit code.

The environment is the test's, less anything that names a model, Slack or colour, so each test says what it sets.
"""

from __future__ import annotations

import asyncio
import os
import pty
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

OPSAGENT = Path(sys.executable).with_name("opsagent")
UNSET_PREFIXES = ("OPSAGENT_", "OPENAI_", "ANTHROPIC_", "SLACK_")
UNSET = ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "COLUMNS")
RUN_TIMEOUT_S = 90
PRINTED: list[tuple[tuple[str, ...], str]] = []
"""Each run's arguments and all it printed, for the check that no words for the model reach the terminal
(tests/bot/cli/conftest.py)."""


@dataclass(frozen=True)
class Ran:
    """What the person saw."""

    code: int
    out: str
    err: str


def environment(**extra: str) -> dict[str, str]:
    """The test process's environment without model, Slack or colour settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(UNSET_PREFIXES) and k not in UNSET}
    return env | extra


async def start(
    *args: object, cwd: Path, env: dict[str, str] | None = None, **options: object
) -> asyncio.subprocess.Process:
    """`opsagent ARGS` started in `cwd`, with pipes for stdout and stderr (stdin: /dev/null unless given)."""
    options.setdefault("stdin", asyncio.subprocess.DEVNULL)
    options.setdefault("stdout", asyncio.subprocess.PIPE)
    options.setdefault("stderr", asyncio.subprocess.PIPE)
    return await asyncio.create_subprocess_exec(
        str(OPSAGENT), *map(str, args), cwd=cwd, env=env if env is not None else environment(), **options
    )


async def opsagent(*args: object, cwd: Path, env: dict[str, str] | None = None, stdin: bytes | None = None) -> Ran:
    """Run `opsagent ARGS` to its end (stdin: the given bytes, else /dev/null); 90 s at most."""
    proc = await start(
        *args, cwd=cwd, env=env, stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL
    )
    async with asyncio.timeout(RUN_TIMEOUT_S):
        out, err = await proc.communicate(stdin)
    assert proc.returncode is not None
    PRINTED.append((tuple(map(str, args)), out.decode() + err.decode()))
    return Ran(proc.returncode, out.decode(), err.decode())


async def on_a_terminal(
    *args: object,
    cwd: Path,
    env: dict[str, str],
    columns: int = 120,
    term: str = "xterm-256color",
    stdin_too: bool = False,
    stderr_too: bool = False,
    answers: Mapping[bytes, bytes] | None = None,
    alongside: Callable[[int], Awaitable[None]] | None = None,
) -> tuple[int, str]:
    """Run `opsagent ARGS` with stdout (and with `stdin_too`, `stderr_too` those) on a pseudo-terminal `columns` wide,
    as in a person's shell; its exit code and what it showed there. Each prompt of `answers` (what shows → the line
    typed) is answered the first time it shows; `alongside(terminal)` may type into the terminal meanwhile."""
    leader, follower = pty.openpty()
    streams = (
        {"stdout": follower} | ({"stdin": follower} if stdin_too else {}) | ({"stderr": follower} if stderr_too else {})
    )
    proc = await start(*args, cwd=cwd, env=env | {"TERM": term, "COLUMNS": str(columns)}, **streams)
    os.close(follower)
    typing = asyncio.ensure_future(alongside(leader)) if alongside is not None else None
    waiting = dict(answers or {})
    shown = bytearray()
    loop = asyncio.get_running_loop()
    while True:
        try:
            chunk = await loop.run_in_executor(None, os.read, leader, 65536)
        except OSError:  # the terminal closes with the process
            break
        if not chunk:
            break
        shown += chunk
        for prompt in [prompt for prompt in waiting if prompt in shown]:
            os.write(leader, waiting.pop(prompt))
    os.close(leader)
    if typing is not None:
        await typing
    async with asyncio.timeout(30):
        await proc.wait()
    assert proc.returncode is not None
    PRINTED.append((tuple(map(str, args)), shown.decode(errors="replace")))
    return proc.returncode, shown.decode(errors="replace")
