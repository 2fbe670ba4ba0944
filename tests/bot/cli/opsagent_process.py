"""`opsagent` run as a person runs it: the installed console script in a subprocess, its output and exit code.

The environment is the test's, less anything that names a model, Slack or colour, so each test says what it sets.
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass
from pathlib import Path

OPSAGENT = Path(sys.executable).with_name("opsagent")
UNSET_PREFIXES = ("OPSAGENT_", "OPENAI_", "ANTHROPIC_", "SLACK_")
UNSET = ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "COLUMNS")
RUN_TIMEOUT_S = 90


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
    return Ran(proc.returncode, out.decode(), err.decode())
