"""The failures a test injects into the fake Slack Web API: faults on the next calls or on every call,
rate limits on a token bucket, and hangs; the server asks here before it handles a call."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Fault:
    """How a call fails: its HTTP status, Slack's error code (a default by status when None), `Retry-After`."""

    status: int
    error: str | None
    retry_after: int | None


@dataclass
class RateLimit:
    per_second: float
    per_channel: bool
    per_message: bool
    burst: int
    retry_after: int | None
    buckets: dict[str, tuple[float, float]] = field(default_factory=dict)


class InjectedFaults:
    """What `SlackFake` will do wrong, by method name: set with `fail_next`, `fail_always`, `rate_limit`,
    `hang`, and undone with `clear_faults`."""

    def __init__(self) -> None:
        self._faults: dict[str, deque[Fault]] = defaultdict(deque)
        self._always: dict[str, Fault] = {}
        self._limits: dict[str, list[RateLimit]] = defaultdict(list)
        self._hangs: dict[str, list[Any]] = {}

    def fail_next(
        self,
        method: str,
        *,
        times: int = 1,
        status: int = 429,
        retry_after: int | None = None,
        error: str | None = None,
    ) -> None:
        """The next `times` calls to `method` fail before anything else is checked.

        429 sends `Retry-After` (default 1 s; Slack never sends 0) and `{"ok": false, "error": "ratelimited"}`;
        500/503 send `fatal_error`/`service_unavailable` (and `Retry-After` only when given); status 200 with
        `error=` sends a plain Slack error such as `not_in_channel`.
        """
        if status == 429 and retry_after is None:
            retry_after = 1
        self._faults[method].extend(Fault(status, error, retry_after) for _ in range(times))

    def fail_always(self, method: str, error: str, *, status: int = 200, retry_after: int | None = None) -> None:
        """Every authenticated call to `method` answers `error` until `clear_faults`, e.g.
        `fail_always("assistant.threads.setStatus", "feature_not_enabled")` or `("usergroups.users.list",
        "plan_upgrade_required")`; with status 429 (an outage of rate limits) `Retry-After` defaults to 1 s."""
        if status == 429 and retry_after is None:
            retry_after = 1
        self._always[method] = Fault(status, error, retry_after)

    def rate_limit(
        self,
        method: str = "chat.postMessage",
        *,
        per_second: float = 1.0,
        per_channel: bool = True,
        per_message: bool = False,
        burst: int = 1,
        retry_after: int | None = None,
    ) -> None:
        """Emulates a rate limit (by default chat.postMessage's ~1 msg/s per channel) with a token bucket on the
        server's `clock`: a call beyond it gets HTTP 429 with `Retry-After` (whole seconds, at least 1).
        `per_message`: one bucket per message (`channel` and `ts`: chat.update's ~1 update/s per message). Limits
        add up: a call must pass every one set for its method (a per-message and a workspace limit, say)."""
        self._limits[method].append(RateLimit(per_second, per_channel, per_message, burst, retry_after))

    def hang(self, method: str, seconds: float, *, times: int | None = 1) -> None:
        """The next `times` calls to `method` (every call when None) wait `seconds` before being handled.

        aiohttp keeps handling after the client gives up, so a timed-out call may still take effect, as on Slack.
        """
        self._hangs[method] = [seconds, times]

    def clear_faults(self, method: str | None = None) -> None:
        for table in (self._faults, self._always, self._limits, self._hangs):
            if method is None:
                table.clear()
            else:
                table.pop(method, None)

    def _queued_fault(self, method: str) -> Fault | None:
        """The next `fail_next` fault of `method`, taken off its queue; None when there is none."""
        queue = self._faults.get(method)
        return queue.popleft() if queue else None

    def _standing_fault(self, method: str) -> Fault | None:
        """The `fail_always` fault of `method`; None when it has none."""
        return self._always.get(method)

    async def _wait_if_hanging(self, method: str, closing: asyncio.Event) -> None:
        """Wait out a `hang` on `method`, if any; a closing server (`closing` set) ends the wait at once."""
        hang = self._hangs.get(method)
        if hang is None:
            return
        seconds, times = hang
        if times is not None:
            hang[1] = times - 1
            if hang[1] <= 0:
                del self._hangs[method]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(closing.wait(), seconds)

    def _rate_limited(self, method: str, params: dict[str, Any], now: float) -> int | None:
        """Seconds to wait when this call is over any of the method's limits; None when it may go ahead (and then
        it takes a token from each)."""
        refills = []
        for limit in self._limits.get(method, []):
            if limit.per_message:
                key = f"{params.get('channel')}/{params.get('ts')}"
            else:
                key = str(params.get("channel") or params.get("channel_id") or "") if limit.per_channel else ""
            tokens, last = limit.buckets.get(key, (float(limit.burst), now))
            refills.append((limit, key, min(float(limit.burst), tokens + (now - last) * limit.per_second)))
        short = [(limit, tokens) for limit, _, tokens in refills if tokens < 1.0]
        for limit, key, tokens in refills:
            limit.buckets[key] = (tokens if short else tokens - 1.0, now)
        if not short:
            return None
        return max(limit.retry_after or max(1, math.ceil((1.0 - tokens) / limit.per_second)) for limit, tokens in short)
