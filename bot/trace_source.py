"""Where the trace viewer finds a run's trace: a one-method protocol, and the runs this process has seen.

The protocol is tiny so that a durable store can stand in for the in-memory source without the viewer
changing; the in-memory one follows the investigations through the `RunObserver` seam.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Protocol, assert_never

from bot.investigations import ActiveRun
from kernel import Event, RunFinished, RunResult, RunStarted, StepCompleted, StepStarted


class TraceSource(Protocol):
    """Finds the trace of a run by its id."""

    async def __call__(self, run_id: str) -> RunResult | None:
        """The run's latest trace, or None when this source does not know the run."""
        ...


class RecentRuns:
    """The traces of the last `capacity` runs this process finished, least recently used dropped first.

    A `RunObserver` (fed by the investigation service) and a `TraceSource`; it forgets on restart.
    """

    def __init__(self, capacity: int = 200) -> None:
        if capacity < 1:
            raise ValueError(f"RecentRuns needs room for at least one run, not {capacity}")
        self.capacity = capacity
        self._results: OrderedDict[str, RunResult] = OrderedDict()

    def observe(self, run: ActiveRun, event: Event) -> None:
        """Keep the trace of each finished (or paused) run; the events before that carry nothing to keep."""
        match event:
            case RunFinished(result=result):
                self._results[result.run_id] = result
                self._results.move_to_end(result.run_id)
                while len(self._results) > self.capacity:
                    self._results.popitem(last=False)
            case RunStarted() | StepStarted() | StepCompleted():
                pass
            case _:
                assert_never(event)

    async def __call__(self, run_id: str) -> RunResult | None:
        """The run's trace if it is among the kept ones."""
        result = self._results.get(run_id)
        if result is not None:
            self._results.move_to_end(run_id)
        return result
