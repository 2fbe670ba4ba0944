"""What `opsagent check` says about one backend: its name, whether it answered, and one line about it.

Kept apart so every backend family (the tool set, the MCP servers) reports in the same shape.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CheckResult:
    """One backend's answer to `opsagent check`."""

    name: str
    ok: bool
    message: str
    warnings: tuple[str, ...] = ()
    """What works but needs the operator's eye (an MCP tool left out), one line each; they do not fail the check."""
