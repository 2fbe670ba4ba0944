"""The memory of past incidents over the run store: what a finished run is remembered as, and the search the
`similar_incidents` tool makes, within the retention (`[knowledge] memory_days`).

A run is remembered when it finishes; runs that finished before the memory existed (or while the store could not
take it) are remembered by `backfill` when the bot starts. Forgotten runs (`opsagent memory forget`) stay forgotten.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import structlog

from bot.runs.saved import readable_trace
from bot.slack.permalinks import thread_url
from bot.store.ports import IncidentStore, RunLookup
from bot.store.records import RunRecord, RunStatus, utc_now
from kernel import RunResult, StopReason
from opsagent_tools.memory import PastIncident

log = structlog.get_logger("opsagent.memory")

SERVICE_LABELS = ("service", "service_name", "app", "app_kubernetes_io_name", "job", "container", "deployment")
"""Alert labels that name a service."""
SERVICE_ARGUMENTS = ("service", "workload", "deployment")
"""Tool-call arguments that name a service (a workload as `deployment/checkout` names `checkout`)."""
MAX_SERVICES, MAX_LABELS = 12, 40
SUMMARY_CHARS = 2000
BACKFILL_BATCH = 100


def remembered_incident(record: RunRecord, trace: RunResult | None, *, thread_url: str = "") -> PastIncident:
    """What a finished run is remembered as: its task, the services its alert and its tool calls named, its alert's
    labels, and its verdict (the summary, root cause and checked confidence; the last word of a run that ended
    without an answer). A run whose trace cannot be read is remembered by its task alone."""
    labels = list(dict.fromkeys(f"{k}={v}" for alert in record.alert_labels for k, v in sorted(alert.items())))
    named = [alert[key] for alert in record.alert_labels for key in SERVICE_LABELS if alert.get(key)]
    for step in trace.steps if trace is not None else ():
        args = step.call.args if step.call is not None else {}
        named += [str(args[key]).rpartition("/")[2] for key in SERVICE_ARGUMENTS if isinstance(args.get(key), str)]
    services = [name.strip().lower() for name in named if name.strip() and not any(c.isspace() for c in name.strip())]
    findings = trace.findings if trace is not None else None
    checked = trace.evidence_check if trace is not None else None
    if findings is not None:
        summary, root_cause = findings.summary, findings.root_cause
        confidence = checked.confidence if checked is not None else findings.confidence
    else:
        summary, root_cause, confidence = (trace.partial_answer or "") if trace is not None else "", "", None
    return PastIncident(
        run_id=record.run_id,
        task=record.task,
        services=tuple(dict.fromkeys(services))[:MAX_SERVICES],
        labels=tuple(labels[:MAX_LABELS]),
        summary=summary[:SUMMARY_CHARS],
        root_cause=root_cause[:SUMMARY_CHARS],
        confidence=confidence,
        outcome=trace.stop_reason if trace is not None else StopReason.INTERNAL_ERROR,
        finished_at=record.updated_at,
        thread_url=thread_url,
    )


class RunMemory:
    """`IncidentMemory` on the store's incidents, remembering `days` days; the bot remembers each run as it finishes
    (read from `runs`)."""

    def __init__(
        self, incidents: IncidentStore, runs: RunLookup, *, days: int, clock: Callable[[], datetime] = utc_now
    ) -> None:
        self._incidents = incidents
        self._runs = runs
        self.days = days
        self._clock = clock
        self._workspace_url = ""

    def link_threads(self, workspace_url: str) -> None:
        """The workspace's address (auth.test's `url`), once the Slack app knows it: incidents link their threads."""
        self._workspace_url = workspace_url

    @property
    def horizon(self) -> datetime:
        """The oldest finish time still remembered."""
        return self._clock() - timedelta(days=self.days)

    async def similar_incidents(self, query: str, *, service: str | None = None, limit: int = 5) -> list[PastIncident]:
        """The remembered incidents closest to `query`, within the retention."""
        return await self._incidents.search_incidents(query, since=self.horizon, service=service, limit=limit)

    async def remember(self, record: RunRecord) -> bool:
        """Remember one finished run (again, if it was: the newest verdict wins), then forget what aged out;
        whether it is remembered (a run forgotten on purpose, or not finished, is not)."""
        if record.status is not RunStatus.FINISHED:
            return False
        incident = remembered_incident(
            record, readable_trace(record), thread_url=thread_url(self._workspace_url, record.channel, record.thread_ts)
        )
        kept = await self._incidents.remember_incident(incident)
        aged = await self._incidents.forget_incidents_before(self.horizon)
        log.info("incident_remembered", run_id=record.run_id, kept=kept, aged_out=aged)
        return kept

    async def remember_finished(self, run_id: str) -> None:
        """Remember a run that has just finished; a failure is logged, never the run's (the next start's backfill
        remembers it)."""
        try:
            record = await self._runs.get_run(run_id)
            if record is not None:
                await self.remember(record)
        except Exception as exc:
            log.warning("incident_not_remembered", run_id=run_id, error=repr(exc)[:300])

    async def backfill(self) -> int:
        """Remember every finished run not remembered yet, oldest first; how many."""
        done: set[str] = set()
        while batch := [
            run for run in await self._incidents.runs_to_remember(limit=BACKFILL_BATCH) if run.run_id not in done
        ]:
            for record in batch:
                await self.remember(record)
                done.add(record.run_id)
        if done:
            log.info("incidents_backfilled", runs=len(done))
        return len(done)
