"""Guidance: a mention in the thread of a running investigation, given to that run with the model's next request.

Kept in the run store first (so it survives a restart and reaches whichever replica carries the run, once), then
announced; the replica carrying the run hands what it has not given yet to the run's control. The person sees a ✍️
on their message at once, a line in the summary when the run takes it, and the verdict lists what shaped it.
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from bot.access.askers import requester
from bot.access.refusals import AccessRefused
from bot.audit.trail import AuditKind, AuditTrail
from bot.gate.gate import Admitted, Gate
from bot.gate.requests import Guidance as GuidanceRequest
from bot.runs.active import ActiveRun
from bot.runs.supervisor import RunSupervisor
from bot.runs.topics import GUIDANCE_TOPIC
from bot.slack.outbox import Outbox
from bot.slack.summary import too_late_words
from bot.store.ports import Dedupe, GuidanceLog, RunLookup, Topics
from bot.store.protocol import StoreUnavailableError
from bot.store.records import GuidanceRecord, RunRecord, RunStatus, utc_now
from kernel import Guidance, RunResult

log = structlog.get_logger("opsagent.guidance")

ACKNOWLEDGED = "writing_hand"
"""The reaction a kept message of guidance gets (✍️)."""
TOO_LATE_TTL_S = 86_400.0
"""How long a "came too late" answer is remembered as given (no replica says it twice)."""


@dataclass(frozen=True, slots=True)
class Kept:
    """The guidance is kept for its run (its `seq`), announced and acknowledged."""

    guidance: GuidanceRecord


@dataclass(frozen=True, slots=True)
class NotKept:
    """The run store could not keep it: nothing reached the run; the person can say it again."""


GuidanceOutcome = Kept | AccessRefused | NotKept


class RunGuidance:
    """Keeps the guidance the gate admitted, and gives it to the runs this process carries."""

    def __init__(
        self,
        *,
        store: GuidanceLog,
        runs: RunLookup,
        dedupe: Dedupe,
        topics: Topics,
        gate: Gate,
        supervisor: RunSupervisor,
        outbox: Outbox,
        audit: AuditTrail,
    ) -> None:
        self._log = store
        self._runs = runs
        self._dedupe = dedupe
        self._topics = topics
        self._gate = gate
        self._supervisor = supervisor
        self._outbox = outbox
        self._audit = audit

    async def given(self, admitted: Admitted[GuidanceRequest]) -> GuidanceOutcome:
        """A person's guidance for a running investigation: kept (unless the run holds `[access] max_guidance`),
        acknowledged with ✍️, and announced to whichever replica carries the run."""
        request = admitted.request
        record = GuidanceRecord(
            run_id=request.run.run_id,
            user=requester(request.asker),
            name=admitted.name,
            text=request.text,
            message_ts=request.place.message_ts,
            at=utc_now(),
        )
        try:
            kept = await self._log.add_guidance(record, limit=self._gate.settings.max_guidance)
        except StoreUnavailableError as exc:
            log.error("guidance_not_kept", run_id=record.run_id, error=str(exc)[:300])
            return NotKept()
        if kept is None:
            return await self._gate.guidance_full(admitted)
        if kept.message_ts:
            self._outbox.enqueue("reactions_add", request.place.channel, timestamp=kept.message_ts, name=ACKNOWLEDGED)
        await self._audit.record(AuditKind.GUIDANCE_GIVEN, run_id=kept.run_id, actor=kept.user, seq=kept.seq)
        log.info("guidance_kept", run_id=kept.run_id, seq=kept.seq, user=kept.user)
        await self.deliver(kept.run_id)  # here at once, when this process carries the run
        try:
            await self._topics.notify(GUIDANCE_TOPIC, kept.run_id)
            ended = await self._runs.get_run(kept.run_id)
        except StoreUnavailableError as exc:  # the carrying replica reads the log when the run resumes or goes on
            log.warning("guidance_announce_failed", run_id=kept.run_id, error=str(exc)[:200])
            return Kept(kept)
        if ended is not None and ended.status is RunStatus.FINISHED:  # it ended as this came: no run will take it
            await self.too_late(ended, [kept])
        return Kept(kept)

    async def deliver(self, run_id: str) -> None:
        """Give the run (if this process carries it) the guidance it has not been given yet, in order."""
        run = self._supervisor.active.get(run_id)
        if run is None:
            return
        for kept in await self._log.guidance_for(run_id):
            ref = str(kept.seq)
            if ref not in run.guided:
                run.guided.add(ref)
                run.control.guide(Guidance(by=kept.name or kept.user, text=kept.text, at=kept.at, ref=ref))

    async def resumed(self, run: ActiveRun, checkpoint: RunResult | None) -> None:
        """A run starts or resumes here: what its checkpoint took is given; what came meanwhile goes to it now. Added
        to what this process gave it already: a message kept as the run started may have been given it before this."""
        if checkpoint is not None:
            run.guided.update(taken.guidance.ref for taken in checkpoint.guidance)
        await self.deliver(run.run_id)

    async def ended(self, record: RunRecord, result: RunResult) -> None:
        """A run ended: whoever gave it guidance it did not take (it came after the model's last request) is told."""
        taken = {t.guidance.ref for t in result.guidance}
        left = [kept for kept in await self._log.guidance_for(result.run_id) if str(kept.seq) not in taken]
        await self.too_late(record, left)

    async def too_late(self, record: RunRecord, left: list[GuidanceRecord]) -> None:
        """Tell each person whose guidance the ended run never took, once per message however many replicas see it
        (the run's end, and a message kept just as it ended, both look). A run posted in no channel has no thread to
        say it in: its API client reads in the run's events which guidance the run took."""
        if not record.channel:
            return
        told: dict[str, list[str]] = {}
        for kept in left:
            if await self._dedupe.remember(f"guidance-too-late:{kept.run_id}:{kept.seq}", TOO_LATE_TTL_S):
                told.setdefault(kept.user, []).append(kept.text)
        for user, said in told.items():
            self._outbox.enqueue(
                "chat_postMessage", record.channel, thread_ts=record.thread_ts, text=too_late_words(user, said)
            )
