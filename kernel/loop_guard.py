"""Catching a model that repeats itself: repeated calls are not run, repeated results stop the run.

An identical successful call within the last few steps is refused with a warning; a warned
call that comes back later with the very same result means an almost certain loop.
"""

from __future__ import annotations

from kernel.calls import ToolCall

DEFAULT_WINDOW = 5
"""Steps back in which an identical successful call is refused (beyond the immediately previous)."""


class LoopGuard:
    """Remembers recent successful calls and the calls it already warned about, for one run."""

    def __init__(self, window: int = DEFAULT_WINDOW) -> None:
        self._window = window
        self._last_success: dict[str, tuple[int, int]] = {}
        self._warned: dict[str, int] = {}

    def check(self, call: ToolCall, step: int) -> int | None:
        """The step of an identical successful call within the window, if this call repeats one."""
        seen = self._last_success.get(call.key)
        if seen is None or step - seen[0] > self._window:
            return None
        self._warned[call.key] = seen[1]
        return seen[0]

    def record(self, call: ToolCall, step: int, observation: str, *, ok: bool) -> bool:
        """Remember an executed call; True when it was warned before and returned the same result again."""
        if not ok:
            return False
        key = call.key
        digest = hash(observation)
        self._last_success[key] = (step, digest)
        return self._warned.get(key) == digest
