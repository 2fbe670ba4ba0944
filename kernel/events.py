"""The typed events a run emits as it goes: the one stream the terminal, Slack and tests consume.

`Agent.events` yields them; `Agent.run` drains them and returns the final `RunResult`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from kernel.calls import ToolCall
from kernel.guidance import TakenGuidance
from kernel.trace import RunResult, Step


@dataclass(frozen=True, slots=True)
class RunStarted:
    """A run began, or resumed from its trace."""

    run_id: str
    task: str
    resumed: bool = False


@dataclass(frozen=True, slots=True)
class StepStarted:
    """The model asked for a call; it is about to be dispatched (approval may be asked first)."""

    index: int
    thought: str
    call: ToolCall
    together: tuple[int, ...] = ()
    """The steps of this turn dispatched at once with this one (its own index included, in call order): the
    turn's independent reads run in parallel. Empty when the call runs alone."""


@dataclass(frozen=True, slots=True)
class StepCompleted:
    """A step ended: its observation, error kind, timing and any approval are in `step`."""

    step: Step
    cost_usd: float = 0.0
    """What the run has cost so far, in USD: what watchers of spend across runs read while it is in flight."""


@dataclass(frozen=True, slots=True)
class GuidanceTaken:
    """A person's guidance went to the model, with the request for the steps from `taken.step` on."""

    taken: TakenGuidance


@dataclass(frozen=True, slots=True)
class RunFinished:
    """The run ended (or paused for an approval); `result` is the whole trace."""

    result: RunResult


Event = RunStarted | GuidanceTaken | StepStarted | StepCompleted | RunFinished
"""Everything a run can emit; match on it with `assert_never` in the default case."""


@dataclass(frozen=True, slots=True)
class RunStream:
    """A run's events as they happen, and its trace so far: iterate it like the events themselves.

    `snapshot()` between events is the run's checkpoint (`interrupted` until it stops), what a durable
    host saves so the run can resume after a restart.
    """

    events: AsyncIterator[Event]
    snapshot: Callable[[], RunResult]

    def __aiter__(self) -> AsyncIterator[Event]:
        return self.events
