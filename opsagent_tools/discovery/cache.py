"""The per-process cache of `discover` answers: each kept for a time-to-live, the oldest dropped beyond a bound.

What exists changes slowly (services, labels, indices), and an investigation asks the same listing more than once.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable


class DiscoveryCache:
    """At most `max_entries` answers, each for `ttl_s` seconds from when it was stored."""

    def __init__(self, ttl_s: float, max_entries: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s, self.max_entries, self._clock = ttl_s, max_entries, clock
        self._entries: OrderedDict[Hashable, tuple[float, str]] = OrderedDict()

    def get(self, key: Hashable) -> str | None:
        """The answer stored under `key`, if it is younger than the time-to-live."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        stored_at, text = entry
        if self._clock() - stored_at >= self.ttl_s:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return text

    def put(self, key: Hashable, text: str) -> None:
        """Keep `text` under `key`, dropping the least recently used answers beyond the bound."""
        self._entries[key] = (self._clock(), text)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
