"""The run's wall-clock deadline and its cancellation, shared by every model and tool call.

One monotonic deadline caps each awaited call at the time left; `cancel()` ends them at once. A run keeps a
single alarm for all its calls instead of a timer per call (the cost of two timers a step was measurable).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from enum import Enum
from types import TracebackType

from kernel.guidance import Guidance


class RunControl:
    """Deadline and cancellation for one run: pass one in to be able to stop the run from outside.

    `cancel()` is safe to call from any coroutine on the run's event loop, before or during the run.
    """

    def __init__(self) -> None:
        self._deadline: float | None = None
        self._scopes: set[_Scope] = set()
        self._cancel_reason: str | None = None
        self._alarm: asyncio.TimerHandle | None = None
        self._alarm_at = math.inf
        self.paused_s = 0.0
        """Seconds spent waiting for humans, excluded from the run's elapsed time and deadline."""
        self._guidance: list[tuple[Guidance, int]] = []

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
        loop = asyncio.get_running_loop()
        for scope in self._scopes:
            loop.call_soon(scope.expire)  # an expiring scope is already unwinding: `expire` leaves it be

    def guide(self, guidance: Guidance, *, before_turn: int = 0) -> None:
        """Give the run what a person said: the model reads it with its next request (a request in flight is not
        interrupted; a run waiting for an approval reads it once it goes on). Several before one turn are read
        together, in the order given. `before_turn`: not before the run's model turn of that number (a replay puts
        guidance back where the run took it)."""
        self._guidance.append((guidance, before_turn))

    def take_guidance(self, turn: int) -> list[Guidance]:
        """The guidance due before model turn `turn` (0-based), in the order given; taken, so given once."""
        due = [guidance for guidance, before in self._guidance if before <= turn]
        self._guidance = [(guidance, before) for guidance, before in self._guidance if before > turn]
        return due

    def start(self, seconds: float) -> None:
        """Set the deadline `seconds` from now (called by the loop when the run starts or resumes)."""
        self._deadline = asyncio.get_running_loop().time() + seconds

    def end(self) -> None:
        """The run stopped (or paused): drop its alarm, so nothing keeps the run alive until the alarm was due."""
        if self._alarm is not None:
            self._alarm.cancel()
        self._alarm, self._alarm_at = None, math.inf

    def left(self) -> float:
        """Seconds until the deadline (negative once passed); infinite before `start`."""
        if self._deadline is None:
            return float("inf")
        return self._deadline - asyncio.get_running_loop().time()

    def limit(self, seconds: float | None = None) -> _Scope:
        """Cap the enclosed await at `seconds` (None: no cap of its own) and at the deadline.

        Raises TimeoutError past either. Usable as `with` or `async with`.
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
            with _Scope(self, None):
                yield
        finally:
            waited = loop.time() - began
            self.paused_s += waited
            if self._deadline is not None:
                self._deadline += waited

    def _watch(self, scope: _Scope) -> None:
        """Register an entered scope; make sure the alarm rings no later than the scope's time is up.

        The alarm is only moved earlier, never later: a scope that ends before its time leaves the alarm where it
        is, and when it rings with nothing due it moves on to the next scope's time (or stays off). So a run sets
        one timer every tool timeout's worth of seconds, not one per call.
        """
        self._scopes.add(scope)
        when = scope.when
        if when is None or when >= self._alarm_at:
            return
        loop = asyncio.get_running_loop()
        if when <= loop.time():
            loop.call_soon(scope.expire)  # at the first await, as asyncio.timeout does with a passed deadline
            return
        if self._alarm is not None:
            self._alarm.cancel()
        self._alarm, self._alarm_at = loop.call_at(when, self._ring), when

    def _ring(self) -> None:
        """The alarm: expire every scope whose time is up, and set the alarm for the next one, if any."""
        self._alarm, self._alarm_at = None, math.inf
        loop = asyncio.get_running_loop()
        now, upcoming = loop.time(), math.inf
        for scope in list(self._scopes):
            when = scope.when
            if when is None:
                continue
            if when <= now:
                scope.expire()
            elif when < upcoming:
                upcoming = when
        if upcoming < math.inf:
            self._alarm, self._alarm_at = loop.call_at(upcoming, self._ring), upcoming


class _State(Enum):
    CREATED = "created"
    ENTERED = "entered"
    EXPIRING = "expiring"
    EXPIRED = "expired"
    EXITED = "exited"


class _Scope:
    """One awaited call's time limit, registered with its `RunControl`, whose alarm or `cancel()` cuts it short.

    It works as `asyncio.timeout_at` does (the task is cancelled, and the cancellation leaves the scope as
    TimeoutError unless someone else cancelled the task too), without a timer of its own. A plain class with
    slots and a synchronous `with`: it is on every step's hot path.
    """

    __slots__ = ("_cancelling", "_control", "_state", "_task", "when")

    def __init__(self, control: RunControl, when: float | None) -> None:
        self._control = control
        self.when = asyncio.get_running_loop().time() if control.cancelled else when
        """When the time is up (loop time); None: only a cancel ends it. A passed time ends it at the first await."""
        self._state = _State.CREATED
        self._task: asyncio.Task[object] | None = None
        self._cancelling = 0

    @property
    def expired(self) -> bool:
        """Whether this scope's own deadline (or a cancel) cut the await short."""
        return self._state is _State.EXPIRING or self._state is _State.EXPIRED

    def expire(self) -> None:
        """Cut the enclosed await short, unless it already ended or is already unwinding."""
        if self._state is _State.ENTERED:
            assert self._task is not None
            self._task.cancel()
            self._state = _State.EXPIRING

    def __enter__(self) -> None:
        if self._state is not _State.CREATED:
            raise RuntimeError("a time limit can be entered once")
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a time limit must be used inside a task")
        self._task, self._cancelling, self._state = task, task.cancelling(), _State.ENTERED
        self._control._watch(self)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._control._scopes.discard(self)
        if self._state is _State.EXPIRING:
            self._state = _State.EXPIRED
            assert self._task is not None
            if self._task.uncancel() <= self._cancelling and exc_type is asyncio.CancelledError:
                raise TimeoutError from exc  # our cancellation, and nobody else's: the time is up
        else:
            self._state = _State.EXITED

    async def __aenter__(self) -> None:
        self.__enter__()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.__exit__(exc_type, exc, tb)
