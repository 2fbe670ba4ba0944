"""A wall clock that moves only when the test moves it, for what counts wall time: limits, leases, expiries.

It starts at `T0`, a fixed instant that the tests' expected dates and times are written against.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

T0 = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)


class ManualClock:
    """Called, it tells `now`; set `now` or `advance` it to move time on."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)
