"""What is remembered of one finished investigation, and the one question the memory answers.

Plain data and a protocol: the bot's run store keeps and searches the incidents, the tool only reads them.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import AwareDatetime, BaseModel, ConfigDict

from kernel import Confidence, StopReason


class PastIncident(BaseModel):
    """One finished investigation as the memory keeps it: what was asked, where, what it concluded, and what
    people said of the answer. Every text is redacted before it is kept."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    task: str
    services: tuple[str, ...] = ()
    """The services it was about: its alert's labels and the services its tool calls named."""
    labels: tuple[str, ...] = ()
    """Its alert's labels as `name=value`, one alert's after another (none for a run a person asked for)."""
    summary: str = ""
    root_cause: str = ""
    confidence: Confidence | None = None
    """The confidence the evidence gate allowed (not merely the one stated)."""
    outcome: StopReason
    """How the run ended: `finish` with an answer, or the reason it stopped without one."""
    finished_at: AwareDatetime
    thread_url: str = ""
    """The Slack thread it ran in, when known."""
    helpful: int = 0
    """People who rated the answer 👍."""
    wrong: int = 0
    """People who rated the answer 👎."""
    corrections: tuple[str, ...] = ()
    """The reasons given with the 👎 ratings: often the corrected answer."""

    @property
    def disputed(self) -> bool:
        """More people rated the answer wrong than helpful: its root cause must not be relied on."""
        return self.wrong > self.helpful


class IncidentMemory(Protocol):
    """The past incidents a deployment remembers (the bot's run store, within its retention)."""

    async def similar_incidents(self, query: str, *, service: str | None = None, limit: int = 5) -> list[PastIncident]:
        """The remembered incidents closest to `query` (full-text, best first), of `service` only when given."""
        ...
