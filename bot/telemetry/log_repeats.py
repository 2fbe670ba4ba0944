"""Repeated warnings and errors, limited: the first `burst` of one event in an interval are written, the rest are
counted, and one line says how many were dropped (`log_repeats_dropped`) when the interval is over.

A flood of one event would otherwise write tens of megabytes a minute and hide everything else: a client churning
connections (one line per connection refused), or asyncio failing to accept past the open-file limit (it logs each
failed `accept()`, up to 100 a loop tick). Info lines are never limited: each (a run's start and end, an approval)
is a fact someone may look up.

An event is its level and name (structlog's) or its level, logger and first line (the standard library's, as
asyncio and aiohttp log): a library's line names its failing socket or task on the next lines. The count of an
interval is written at the next line logged after it ends, or when the process exits.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

import structlog

BURST = 10
"""Lines of one event written per interval."""
INTERVAL_S = 10.0
MAX_EVENTS = 1000
"""Distinct events counted at once; the next ones are counted together as one (`OTHER_EVENTS`)."""
OTHER_EVENTS = "(other events)"
SUMMARY = "log_repeats_dropped"
LIMITED_METHODS = frozenset({"warning", "warn", "error", "exception", "critical", "fatal"})
"""structlog's methods whose lines are limited (the rest are below a warning)."""
KEY_CHARS = 200

log = structlog.get_logger("opsagent.log")


@dataclass
class _Window:
    ends: float
    written: int = 0
    dropped: int = 0


@dataclass(frozen=True)
class Dropped:
    """`count` lines of `event` were not written in an interval now over."""

    event: str
    count: int


class RepeatLimiter:
    """Counts each event's lines per interval, thread-safe; a structlog processor (`__call__`) and a filter of
    the standard library's handlers (`filter`) in front of the same writer."""

    def __init__(
        self, *, burst: int = BURST, interval_s: float = INTERVAL_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.burst, self.interval_s = burst, interval_s
        self._clock = clock
        self._lock = threading.Lock()
        self._windows: dict[str, _Window] = {}
        self._next_end = float("inf")

    def admit(self, event: str) -> tuple[bool, list[Dropped]]:
        """Whether a line of `event` is written now, and the counts of intervals that have ended since the last
        line (to write first)."""
        now = self._clock()
        with self._lock:
            ended = self._ended(now) if now >= self._next_end else []
            if event not in self._windows and len(self._windows) >= MAX_EVENTS:
                event = OTHER_EVENTS
            window = self._windows.get(event)
            if window is None:
                window = self._windows[event] = self._window(now)
            return self._count(window), ended

    def pending(self) -> list[Dropped]:
        """The counts of intervals not over yet, which end now (at exit, or when logging is set up again)."""
        with self._lock:
            return self._ended(float("inf"))

    def __call__(self, _logger: Any, method: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        """As a structlog processor: drops a limited line (`structlog.DropEvent`), writing due counts first."""
        event = str(event_dict.get("event", ""))
        if event == SUMMARY:
            return event_dict
        if method not in LIMITED_METHODS:
            if self._clock() >= self._next_end:  # an unlocked peek: at worst a count waits for the next line
                self.write(self._ended_now())
            return event_dict
        written, ended = self.admit(f"{method} {event}"[:KEY_CHARS])
        self.write(ended)
        if not written:
            raise structlog.DropEvent
        return event_dict

    def filter(self, record: logging.LogRecord) -> bool:
        """As a filter of a standard-library handler: False for a limited line, writing due counts first."""
        if record.levelno < logging.WARNING:
            return True
        first_line = str(record.msg).partition("\n")[0]
        written, ended = self.admit(f"{record.levelname.lower()} {record.name}: {first_line}"[:KEY_CHARS])
        self.write(ended)
        return written

    def write(self, dropped: list[Dropped]) -> None:
        """One line for each event whose lines were dropped (through structlog, so shaped and redacted as ours)."""
        for each in dropped:
            log.warning(SUMMARY, dropped=each.count, repeated=each.event, interval_s=self.interval_s)

    def _ended_now(self) -> list[Dropped]:
        with self._lock:
            return self._ended(self._clock())

    def _window(self, now: float) -> _Window:
        window = _Window(ends=now + self.interval_s)
        self._next_end = min(self._next_end, window.ends)
        return window

    def _count(self, window: _Window) -> bool:
        if window.written < self.burst:
            window.written += 1
            return True
        window.dropped += 1
        return False

    def _ended(self, now: float) -> list[Dropped]:
        over = [event for event, window in self._windows.items() if window.ends <= now]
        ended = [Dropped(event, window.dropped) for event in over if (window := self._windows.pop(event)).dropped]
        self._next_end = min((window.ends for window in self._windows.values()), default=float("inf"))
        return ended
