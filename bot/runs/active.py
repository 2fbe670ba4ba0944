"""A run this process carries, and what may follow every run's events besides its thread.

Shared by the service, durability, admission and the observers (metrics, spans), so none imports the service; and
what is told of an approved action that succeeded (its checks are scheduled above, in `bot.verification`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from kernel import Event, RunControl, Step


@dataclass
class ActiveRun:
    """One investigation carried by this process."""

    run_id: str
    channel: str
    thread_ts: str
    requested_by: str
    control: RunControl
    task: asyncio.Task[None] | None = None
    taken_over: bool = False
    """Another replica holds the run now: this process drops it without a word in the thread."""
    guided: set[str] = field(default_factory=set)
    """The guidance given to the run so far (its refs: the numbers the run store gave them)."""
    stopped_by: str = ""
    """Who stopped the run (a Slack user id, or `alertmanager`), once someone has: a fact the thread renders."""

    def stop(self, by: str) -> None:
        """Cancel the run for a Stop by `by` (the first Stop is the one remembered)."""
        self.stopped_by = self.stopped_by or by
        self.control.cancel(stopped_by(self.stopped_by))


class RunObserver(Protocol):
    """Something that follows every run's events besides the thread: metrics, tracing, the trace viewer.

    It sees each run as one stream (one `RunStarted`, its steps, one `RunFinished`); a pause for approval
    is not an end: the paused step completes again once decided. After a restart the resuming process's
    observers see the rest of the run, starting with a `RunStarted(resumed=True)`.
    """

    def observe(self, run: ActiveRun, event: Event) -> None:
        """Take one event of `run`; must not block or raise (a failing observer is logged and skipped)."""
        ...


ActionRan = Callable[[str, Step, str], Awaitable[None]]
"""Told when an approved side effect succeeds: the run's id, its step, and the ts of its approval message (the
action's one line; "" when unknown). The checks of approved actions (`bot.verification`) schedule one; must not
raise."""


def stopped_by(who: str) -> str:
    """The cancel reason (the trace's `detail`) of a run someone stopped, in plain text: `who` as the store keeps it
    (`RunRecord.stop_requested_by`, a user id). Surfaces show who stopped from `ActiveRun.stopped_by`, not from this."""
    return f"stopped by {who}"
