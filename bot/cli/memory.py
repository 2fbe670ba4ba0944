"""`opsagent memory list|forget`: what the memory of past incidents holds, and deleting from it for good.

The memory lives in the run store (`[store] url`); forgetting an incident keeps its run and audit log, and a
forgotten run is never remembered again. `opsagent check` reports the memory through `memory_check`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta

from bot.cli.report import Report, Table
from bot.cli.stored import existing_store, missing_file
from bot.settings import Settings
from bot.store.factory import open_store
from bot.store.protocol import SchemaVersionError, StoreUnavailableError
from bot.store.records import utc_now
from opsagent_tools.check_result import CheckResult
from opsagent_tools.memory import PastIncident, check_memory
from opsagent_tools.time_words import time_ago

SUMMARY_CHARS = 70


async def list_memory(settings: Settings, *, limit: int) -> list[PastIncident]:
    """The remembered incidents, newest first, `limit` at most."""
    async with existing_store(settings) as store:
        return await store.memory.incidents(limit=limit)


def incidents_json(incidents: Sequence[PastIncident]) -> str:
    """The incidents as JSON, for programs."""
    return json.dumps([incident.model_dump(mode="json") for incident in incidents], indent=2)


def render_memory(incidents: Sequence[PastIncident], settings: Settings) -> Report:
    """The incidents as a table, and how long they are kept."""
    if not incidents:
        return [f"no incidents remembered yet ({_retention(settings)})"]
    now = utc_now()
    rows = [_row(incident, now) for incident in incidents]
    header = ["run", "finished", "services", "outcome", "feedback", "summary"]
    return [Table(header, rows), f"{len(incidents)} shown ({_retention(settings)})"]


async def forget(settings: Settings, *, run_id: str | None, older_than_days: int | None) -> str:
    """Forget one run's incident, or every incident older than a number of days; what was done."""
    async with existing_store(settings) as store:
        if run_id is not None:
            if not await store.memory.forget_incident(run_id):
                raise ValueError(f"no run {run_id} in the run store: `opsagent memory list` shows the remembered ones")
            return f"forgot run {run_id}: it is out of the memory for good (its run and audit log stay)"
        assert older_than_days is not None  # the parser asks for one of the two
        count = await store.memory.forget_incidents_before(utc_now() - timedelta(days=older_than_days))
        return f"forgot {count} incident{'s' if count != 1 else ''} finished more than {older_than_days} days ago"


async def memory_check(settings: Settings) -> CheckResult | None:
    """The memory's line in `opsagent check`: how many incidents, the newest; None when the memory is off.

    A SQLite store that does not exist yet is not created (the bot creates it); a store that cannot be read fails."""
    if not settings.knowledge.memory:
        return None
    if (missing := missing_file(settings.store.url)) is not None:
        return CheckResult("memory", True, f"no run store at {missing} yet: `opsagent serve` creates it")
    store = open_store(settings.store.url)
    try:
        return await check_memory(store.memory, now=utc_now(), kept=_retention(settings))
    except SchemaVersionError:
        return CheckResult("memory", False, "the run store is not migrated yet: `opsagent serve` migrates it at start")
    except StoreUnavailableError as exc:
        return CheckResult("memory", False, str(exc))
    finally:
        await store.close()


def _row(incident: PastIncident, now: datetime) -> list[str]:
    summary = " ".join((incident.root_cause or incident.summary or incident.task).split())
    feedback = f"👍{incident.helpful} 👎{incident.wrong}" if incident.helpful or incident.wrong else "-"
    return [
        incident.run_id,
        time_ago(incident.finished_at, now),
        ", ".join(incident.services) or "-",
        str(incident.outcome),
        feedback,
        summary if len(summary) <= SUMMARY_CHARS else summary[: SUMMARY_CHARS - 1] + "…",
    ]


def _retention(settings: Settings) -> str:
    return f"kept {settings.knowledge.memory_days} days, [knowledge] memory_days"
