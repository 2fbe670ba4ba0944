"""The audit trail: who did what to which run, and when, appended to the run store (append-only there).

Every run, tool call, approval decision, side effect and check of an action is one event; a failure to write one is logged,
and only the side-effect journal (which must not act without its record) lets it stop the work.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol

import structlog
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

log = structlog.get_logger("opsagent.audit")


class AuditEvent(BaseModel):
    """One line of the append-only audit log: what happened, to which run, who did it, when."""

    model_config = ConfigDict(frozen=True)

    seq: int = 0
    """Assigned by the store; 0 on an event not yet written."""
    at: AwareDatetime
    kind: str
    """e.g. run_started, tool_call, approval_decided, side_effect_started/done/failed, run_finished, refused."""
    run_id: str = ""
    actor: str = ""
    detail: dict[str, Any] = Field(default_factory=dict)


class AuditSink(Protocol):
    """Where audit events are appended: what the trail writes through (the run store's `AuditLog`)."""

    async def audit(self, event: AuditEvent) -> None:
        """Append one event, its details redacted, in one insert; raise if it cannot be kept.

        Not re-sent after a dropped connection (a second copy would be a second event): the run store's
        `StoreUnavailableError` then says the outcome is unknown. Once kept, an event is never changed or deleted.
        """
        ...


class AuditLog(AuditSink, Protocol):
    """The append-only audit log: appended to through its sink, read back for a run's drafts."""

    async def audit_log(self, *, run_id: str | None = None, limit: int = 1000) -> list[AuditEvent]:
        """The latest `limit` events (of one run, or of all), oldest first, each with the `seq` the log gave it."""
        ...


class AuditKind(StrEnum):
    """What an audit event records."""

    RUN_STARTED = "run_started"
    RUN_RESUMED = "run_resumed"
    RUN_FINISHED = "run_finished"
    RUN_INTERRUPTED = "run_interrupted"
    STOP_REQUESTED = "stop_requested"
    REQUEST_REFUSED = "request_refused"
    """The gate turned a request away (who, which request, which rule)."""
    TOOL_CALL = "tool_call"
    APPROVAL_REQUESTED = "approval_requested"
    APPROVAL_DECIDED = "approval_decided"
    APPROVAL_REFUSED = "approval_refused"
    SIDE_EFFECT_STARTED = "side_effect_started"
    SIDE_EFFECT_DONE = "side_effect_done"
    SIDE_EFFECT_FAILED = "side_effect_failed"
    ALERT_FIRED = "alert_fired"
    """An Alertmanager group opened a thread (and started its run): when its alerts started."""
    ALERT_RESOLVED = "alert_resolved"
    """Alertmanager reported the group resolved: when its alerts ended."""
    GUIDANCE_GIVEN = "guidance_given"
    """A person told a running investigation something (kept for it; the trace says when the run took it)."""
    ACTION_VERIFIED = "action_verified"
    """An approved action was checked a while after it ran: did the symptom go away (its outcome and values)?"""
    FEEDBACK_GIVEN = "feedback_given"
    """A person rated a run's verdict (👍/👎), or said why a 👎."""


ACTOR_NAME = "actor_name"
"""The detail that keeps the name a person had when they acted (the event's `actor` is their user id)."""
NAME_WAIT_S = 1.0
"""How long an event waits for its actor's name (the gate has usually just looked them up: no wait at all)."""

NameLookup = Callable[[str], Awaitable[str]]
"""The name a person is shown by, from their user id; "" when unknown (never raises)."""


def names_in(events: Iterable[AuditEvent]) -> dict[str, str]:
    """Who the events name, by actor: the name each had when they last acted (`ACTOR_NAME`), for surfaces that
    show people by name (the trace viewer, the drafts); an actor without one is left out."""
    return {e.actor: e.detail[ACTOR_NAME] for e in events if e.actor and isinstance(e.detail.get(ACTOR_NAME), str)}


class AuditTrail:
    """Appends audit events to the store; `record` never raises, `require` does (for the side-effect journal).
    With `names`, an event `record`s keeps its actor's name as they acted (`ACTOR_NAME`)."""

    def __init__(
        self,
        sink: AuditSink,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        names: NameLookup | None = None,
    ) -> None:
        self._sink = sink
        self._clock = clock
        self._names = names

    async def record(self, kind: AuditKind, *, run_id: str = "", actor: str = "", **detail: Any) -> None:
        """Append one event, with its actor's name when it is a person's; if the store cannot take it, say so in the
        logs and go on."""
        at = self._clock()
        try:
            if (name := await self._name(actor)) and ACTOR_NAME not in detail:
                detail[ACTOR_NAME] = name
            await self._append(at, kind, run_id, actor, detail)
        except Exception as exc:
            log.error("audit_write_failed", kind=str(kind), run_id=run_id, actor=actor, error=repr(exc)[:300])

    async def _name(self, actor: str) -> str:
        if not actor or self._names is None:
            return ""
        try:
            return await asyncio.wait_for(self._names(actor), NAME_WAIT_S)
        except TimeoutError:  # Slack is slow: the event is kept without the name, at once
            return ""

    async def require(self, kind: AuditKind, *, run_id: str = "", actor: str = "", **detail: Any) -> None:
        """Append one event, raising if the store cannot take it."""
        await self._append(self._clock(), kind, run_id, actor, detail)

    async def _append(self, at: datetime, kind: AuditKind, run_id: str, actor: str, detail: dict[str, Any]) -> None:
        await self._sink.audit(AuditEvent(at=at, kind=kind, run_id=run_id, actor=actor, detail=detail))
