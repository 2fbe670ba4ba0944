"""Guidance: what a person tells a running investigation ("it's not the gateway, payments deployed at 14:02").

A host hands guidance to the run's `RunControl` at any time; the loop gives it to the model with its **next**
request, as a user message in the person's name, and keeps it in the conversation for the rest of the run. It
is not fenced as data: it comes from a person the host admitted, with their authority. The host redacts it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic.dataclasses import dataclass

GUIDANCE_TEMPLATE = "Guidance from {by} at {time} UTC, for this investigation: {text}"
"""How the model reads a person's guidance (a user message between two of its turns)."""


@dataclass(frozen=True, slots=True)
class Guidance:
    """What a person said to the run, and who: `by` is how the model is told who (e.g. "Maria (on-call)")."""

    by: str
    text: str
    at: datetime
    ref: str = ""
    """The host's id for it (the message it came in): what lets the host tell which guidance a run has taken."""

    def message(self) -> str:
        """The guidance as the model reads it."""
        return GUIDANCE_TEMPLATE.format(by=self.by, time=f"{self.at.astimezone(UTC):%H:%M}", text=self.text)


@dataclass(frozen=True, slots=True)
class TakenGuidance:
    """Guidance as the run took it: before model turn `turn` (0-based; so after `turn` turns), which asked for the
    steps from `step` on. Kept in the trace, so a resumed run and a replay give it to the model at the same place."""

    guidance: Guidance
    turn: int
    step: int
