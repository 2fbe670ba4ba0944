"""The run's wall-clock deadline and its cancellation, shared by every model and tool call.

One monotonic deadline caps each awaited call at the time left; `cancel()` ends them at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType


class RunControl:
    """Deadline and cancellation for one run: pass one in to be able to stop the run from outside.

    `cancel()` is safe to call from any coroutine on the run's event loop, before or during the run.
    """

    def __init__(self) -> None:
        self._deadline: float | None = None
        self._scopes: set[asyncio.Timeout] = set()
        self._cancel_reason: str | None = None
        self.paused_s = 0.0
        """Seconds spent waiting for humans, excluded from the run's elapsed time and deadline."""

    @property
    def cancelled(self) -> bool:
        """Whether `cancel()` was called."""
        return self._cancel_reason is not None

    @property
    def cancel_reason(self) -> str:
        """Who or what cancelled the run, as given to `cancel()`."""
        return self._cancel_reason or ""

    def cancel(self, reason: str = "cancelled") -> None:
        """Stop the run: the call in flight is cut off and the run ends with `cancelled`."""
        if self._cancel_reason is None:
            self._cancel_reason = reason
        now = asyncio.get_running_loop().time()
        for scope in self._scopes:
            if not scope.expired():  # an expiring scope is already unwinding; it cannot be rescheduled
                scope.reschedule(now)

    def start(self, seconds: float) -> None:
        """Set the deadline `seconds` from now (called by the loop when the run starts or resumes)."""
        self._deadline = asyncio.get_running_loop().time() + seconds

    def left(self) -> float:
        """Seconds until the deadline (negative once passed); infinite before `start`."""
        if self._deadline is None:
            return float("inf")
        return self._deadline - asyncio.get_running_loop().time()

    def limit(self, seconds: float | None = None) -> _Scope:
        """Cap the enclosed await at `seconds` (None: no cap of its own) and at the deadline.

        Raises TimeoutError past either.
        """
        when = self._deadline
        if seconds is not None:
            own = asyncio.get_running_loop().time() + seconds
            when = own if when is None else min(own, when)
        return _Scope(self, when)

    @asynccontextmanager
    async def paused(self) -> AsyncIterator[None]:
        """Stop the clock while a human decides: the wait does not eat the investigation's deadline.

        Cancellation still reaches the wait.
        """
        loop = asyncio.get_running_loop()
        began = loop.time()
        try:
            async with _Scope(self, None):
                yield
        finally:
            waited = loop.time() - began
            self.paused_s += waited
            if self._deadline is not None:
                self._deadline += waited


class _Scope:
    """One awaited call's timeout, registered with its `RunControl` so `cancel()` can cut it short.

    A plain class rather than a generator-based context manager: it is on every step's hot path.
    """

    __slots__ = ("_control", "_timeout")

    def __init__(self, control: RunControl, when: float | None) -> None:
        self._control = control
        self._timeout = asyncio.timeout_at(asyncio.get_running_loop().time() if control.cancelled else when)
        # An already-passed `when` raises TimeoutError at the first await, as asyncio.timeout does.

    @property
    def expired(self) -> bool:
        """Whether this scope's own deadline (or a cancel) cut the await short."""
        return self._timeout.expired()

    async def __aenter__(self) -> None:
        await self._timeout.__aenter__()
        self._control._scopes.add(self._timeout)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        self._control._scopes.discard(self._timeout)
        return await self._timeout.__aexit__(exc_type, exc, tb)
