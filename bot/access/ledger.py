"""What the access policy counts: when runs started (by user and by channel) and what they spent, by UTC day.

A tiny interface so that a durable, shared store can replace the in-memory one without touching the policy.
"""

from __future__ import annotations

from collections import defaultdict, deque
from datetime import date, datetime
from typing import Protocol


class RunLedger(Protocol):
    """Run starts and model spend, as the access policy reads and records them."""

    def starts_since(self, *, user: str, channel: str, since: datetime) -> tuple[list[datetime], list[datetime]]:
        """The start times (oldest first) after `since` of the user's runs, and of the channel's runs."""
        ...

    def record_start(self, *, user: str, channel: str, at: datetime) -> None:
        """Count a run that started."""
        ...

    def forget_start(self, *, user: str, channel: str, at: datetime) -> None:
        """Uncount a start recorded `at` whose run did not start after all."""
        ...

    def spent(self, day: date) -> float:
        """USD spent on `day` (UTC) by all runs, finished and in flight."""
        ...

    def record_spend(self, run_id: str, total_usd: float, at: datetime, *, final: bool = False) -> None:
        """A run's spend so far (cumulative); the growth since the last report counts on `at`'s day.
        `final`: the run ended, nothing more will come."""
        ...


class InMemoryRunLedger:
    """The ledger of one process; starts older than the window asked about and days past are dropped."""

    def __init__(self, *, keep_days: int = 2) -> None:
        self._by_user: dict[str, deque[datetime]] = defaultdict(deque)
        self._by_channel: dict[str, deque[datetime]] = defaultdict(deque)
        self._by_day: dict[date, float] = defaultdict(float)
        self._run_totals: dict[str, float] = {}
        self._keep_days = keep_days

    def starts_since(self, *, user: str, channel: str, since: datetime) -> tuple[list[datetime], list[datetime]]:
        """The start times (oldest first) after `since` of the user's runs, and of the channel's runs."""
        return _recent(self._by_user, user, since), _recent(self._by_channel, channel, since)

    def record_start(self, *, user: str, channel: str, at: datetime) -> None:
        """Count a run that started."""
        self._by_user[user].append(at)
        self._by_channel[channel].append(at)

    def forget_start(self, *, user: str, channel: str, at: datetime) -> None:
        """Uncount a start recorded `at` whose run did not start after all."""
        for starts in (self._by_user.get(user), self._by_channel.get(channel)):
            if starts is not None and at in starts:
                starts.remove(at)

    def spent(self, day: date) -> float:
        """USD spent on `day` (UTC) by all runs, finished and in flight."""
        return self._by_day.get(day, 0.0)

    def record_spend(self, run_id: str, total_usd: float, at: datetime, *, final: bool = False) -> None:
        """A run's spend so far; the growth since its last report counts on `at`'s day."""
        growth = total_usd - self._run_totals.get(run_id, 0.0)
        if growth > 0:
            self._by_day[at.date()] += growth
            self._run_totals[run_id] = total_usd
        if final:
            self._run_totals.pop(run_id, None)
        for day in [d for d in self._by_day if (at.date() - d).days >= self._keep_days]:
            del self._by_day[day]


def _recent(starts: dict[str, deque[datetime]], key: str, since: datetime) -> list[datetime]:
    times = starts.get(key)
    if times is None:
        return []
    while times and times[0] <= since:
        times.popleft()
    if not times:
        del starts[key]
    return list(times)
