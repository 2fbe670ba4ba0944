"""The process's open-file limit (RLIMIT_NOFILE), which every connection, socket and file counts against.

Systems often start a process with a low soft limit (1,024; 256 on macOS) under a much higher hard one: a server
raises its soft limit to the hard one at start-up, as far as the system lets it, and its connection caps are
derived from what it got (`ConnectionCaps.within`).
"""

from __future__ import annotations

import resource
from dataclasses import dataclass


@dataclass(frozen=True)
class OpenFileLimit:
    """The soft and hard limits after start-up (`resource.RLIM_INFINITY`: none), the soft one before, and why it
    could not be raised (None when it was, or was at the hard limit already)."""

    soft: int
    hard: int
    was: int
    error: str | None = None


def open_file_limit() -> int:
    """How many files the process may open now (its soft limit; `resource.RLIM_INFINITY`: no limit)."""
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def raise_open_file_limit() -> OpenFileLimit:
    """Raise the soft open-file limit to the hard one; what the limits are now (and were)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == hard:
        return OpenFileLimit(soft, hard, soft)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError) as exc:  # macOS refuses an unlimited soft limit; a sandbox may refuse any change
        return OpenFileLimit(soft, hard, soft, error=str(exc) or type(exc).__name__)
    return OpenFileLimit(hard, hard, soft)
