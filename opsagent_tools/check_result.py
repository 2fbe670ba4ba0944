"""What `opsagent check` says about one backend: its name, whether it answered, and one line about it.

Kept apart so every tool family reports in the same shape, and probes its backend the same way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from kernel import ToolFailure


@dataclass(frozen=True)
class CheckResult:
    """One backend's answer to `opsagent check`."""

    name: str
    ok: bool
    message: str
    warnings: tuple[str, ...] = ()
    """What works but needs the operator's eye (an MCP tool left out), one line each; they do not fail the check."""


async def probe(name: str, check: Callable[[], Awaitable[str]]) -> CheckResult:
    """`check()` as one result: its line when it answers, or what failed. The check is called here, so a client
    that cannot even be made (a missing secret, an unreadable kubeconfig) fails this result, not the others."""
    try:
        message = await check()
    except (ToolFailure, ValueError, OSError) as exc:
        return CheckResult(name, False, str(exc))
    return CheckResult(name, True, message)
