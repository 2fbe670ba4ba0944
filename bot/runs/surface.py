"""Where a run shows itself while it runs: what the service and the durable run tell it, and nothing of how.

A run asked for in a channel shows itself in its Slack thread (`bot.slack.run_thread.RunThread`); a run posted in no
channel (an API run without one) shows itself nowhere (`bot.runs.quiet.QuietRun`). The service picks one per run.
"""

from __future__ import annotations

from typing import Protocol

from kernel import RunResult, Step, TakenGuidance, ToolCall


class RunSurface(Protocol):
    """A run's presence for people: told of its start, its steps, the guidance it takes and its end. Each call
    returns at once (posting is queued) and never raises: a surface failing never ends a run."""

    async def opened(self) -> None:
        """A new run has started."""
        ...

    async def resumed(self, checkpoint: RunResult | None) -> None:
        """A saved run is picked up again (after a restart, or by another replica) from `checkpoint`."""
        ...

    def interrupted(self, steps: int) -> None:
        """The process is stopping: the run, saved after `steps` steps, continues in the next one."""
        ...

    def step_started(self, index: int, call: ToolCall, *, together: tuple[int, ...] = ()) -> None:
        """A call is about to run (`together`: with these steps, at once)."""
        ...

    def step(self, step: Step, *, approval_ts: str = "") -> None:
        """A step ended (or waits for an approval); `approval_ts`: its approval message, once decided."""
        ...

    def guidance_taken(self, taken: TakenGuidance) -> None:
        """The run gave a person's guidance to the model."""
        ...

    def finished(self, result: RunResult, *, stopped_by: str = "") -> None:
        """The run ended with `result`; `stopped_by`: who stopped it, when someone did."""
        ...

    def reply(self, text: str) -> None:
        """Words of ours about the run (it paused, it failed inside OpsAgent), where its people read."""
        ...
