"""Telling a stuck model from noisy work that still progresses, from the run of failed steps.

The same failure again and again, back to back, is stuck; different failures in a row are noise,
and only a long streak of them stops the run.
"""

from __future__ import annotations

from typing import Literal

from kernel.budget import Budget
from kernel.stop import StopReason
from kernel.tool_errors import ErrorKind, StepError

StreakStop = Literal[StopReason.UNPARSABLE_EXHAUSTED, StopReason.TOOL_ERROR_EXHAUSTED, StopReason.LOOP_DETECTED]
"""The stops a streak of failed steps can call for."""


class ErrorStreak:
    """Counts the current streak of failed steps and how often its latest failure repeated back to back."""

    def __init__(self, budget: Budget) -> None:
        self._budget = budget
        self._length = 0
        self._only_format = True
        self._last = ""
        self._repeats = 0

    def observe(self, error: StepError | None, fingerprint: str) -> StreakStop | None:
        """Count one step's outcome; the stop reason if the streak shows the run is stuck."""
        if error is None:
            self._length = 0
            self._only_format = True
            self._last, self._repeats = "", 0
            return None
        self._length += 1
        self._only_format &= error.kind is ErrorKind.FORMAT
        self._repeats = self._repeats + 1 if fingerprint == self._last else 1
        self._last = fingerprint
        limit = self._budget.max_identical_transient_errors if error.transient else self._budget.max_identical_errors
        if self._repeats >= limit:
            return _reason_for(error.kind)
        if self._length >= self._budget.max_consecutive_errors:
            return StopReason.UNPARSABLE_EXHAUSTED if self._only_format else StopReason.TOOL_ERROR_EXHAUSTED
        return None


def _reason_for(kind: ErrorKind) -> StreakStop:
    match kind:
        case ErrorKind.FORMAT:
            return StopReason.UNPARSABLE_EXHAUSTED
        case ErrorKind.LOOP_GUARD:
            return StopReason.LOOP_DETECTED
        case _:
            return StopReason.TOOL_ERROR_EXHAUSTED
