"""A scenario's memory of past incidents: its recorded incidents remembered in a run store of the evaluation's
own (a temporary SQLite file), so `similar_incidents` searches them as production does, full text and all.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime, timedelta

from bot.eval.scenarios import RecordedIncident
from bot.runs.memory import RunMemory
from bot.store.factory import opened_store
from bot.store.records import FeedbackRecord, Rating, RunRecord, RunStatus
from opsagent_tools.memory import PastIncident
from opsagent_tools.memory.settings import DEFAULT_MEMORY_DAYS

CHANNEL = "C0EVALPAST"


class NoIncidents:
    """The memory the catalogue is described with (its tools' names and descriptions): never searched."""

    async def similar_incidents(self, query: str, *, service: str | None = None, limit: int = 5) -> list[PastIncident]:
        """Nothing: only the catalogue's description is read."""
        return []


@asynccontextmanager
async def scenario_memory(incidents: Sequence[RecordedIncident], *, now: datetime) -> AsyncIterator[RunMemory]:
    """The incidents remembered, each as a finished run with its ratings, for the duration of the block."""
    with tempfile.TemporaryDirectory(prefix="opsagent-eval-memory-") as directory:
        async with opened_store(f"sqlite:///{directory}/memory.db") as store:
            for number, incident in enumerate(incidents, 1):
                run_id, finished = f"past-{number}", now - timedelta(days=incident.days_ago)
                await store.runs.create_run(
                    RunRecord(
                        run_id=run_id,
                        channel=CHANNEL,
                        thread_ts=f"{finished.timestamp():.6f}",
                        requested_by="evaluation",
                        task=incident.task,
                        status=RunStatus.FINISHED,
                        created_at=finished,
                        updated_at=finished,
                    )
                )
                fields = incident.model_dump(include={"task", "summary", "root_cause", "confidence", "outcome"})
                remembered = PastIncident(
                    run_id=run_id,
                    services=tuple(incident.services),
                    labels=tuple(incident.labels),
                    finished_at=finished,
                    **fields,
                )
                await store.memory.remember_incident(remembered)
                for rating in _ratings(run_id, incident, finished):
                    await store.feedback.record_feedback(rating)
            yield RunMemory(store.memory, store.runs, days=DEFAULT_MEMORY_DAYS, clock=lambda: now)


def _ratings(run_id: str, incident: RecordedIncident, at: datetime) -> list[FeedbackRecord]:
    """One rating per person: the 👍s, then the 👎s, the first of which carry the corrections."""
    reasons = list(incident.corrections)
    downs = max(incident.wrong, len(reasons))
    ups = [FeedbackRecord(run_id=run_id, user=f"U0UP{n}", rating=Rating.UP, at=at) for n in range(incident.helpful)]
    return ups + [
        FeedbackRecord(
            run_id=run_id, user=f"U0DOWN{n}", rating=Rating.DOWN, reason=reasons[n] if n < len(reasons) else "", at=at
        )
        for n in range(downs)
    ]
