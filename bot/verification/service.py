"""Checking approved actions on time, on whichever replica: each check is kept in the run store when it is scheduled,
claimed by one replica once due, run, said (the audit log, the action's line, a reply when it did not hold), and
written into the run's trace once the run has finished (the verdict in the summary then shows it).

A check survives a restart and a take-over: it is in the store from the moment the action ran, and a replica that dies
holding one lets another take it when its lease runs out. Each replica looks for due checks every `POLL_S` seconds,
and sooner when it scheduled one itself.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from datetime import datetime, timedelta

import structlog

from bot.audit.trail import AuditKind, AuditTrail
from bot.runs.saved import readable_trace
from bot.slack.checks import CheckMessages
from bot.store.ports import CheckSchedule, RunRecords
from bot.store.protocol import StoreUnavailableError
from bot.store.records import ScheduledCheck, utc_now
from bot.verification.settings import VerificationSettings
from bot.verification.symptoms import SymptomChecker, check_action
from kernel import Step, Verification, VerificationOutcome

log = structlog.get_logger("opsagent.verification")

POLL_S = 5.0
"""How often a replica looks for due checks it did not schedule itself (another replica's, or from before a restart)."""
WAKE_MARGIN_S = 0.05
"""A replica looks for a check it scheduled this long after it falls due (the store's clock must have passed it)."""


class ActionChecks:
    """The checks of approved actions, for this replica (`replica`): scheduled as actions succeed, run by `run`."""

    def __init__(
        self,
        *,
        settings: VerificationSettings,
        schedule: CheckSchedule,
        runs: RunRecords,
        checker: SymptomChecker | None,
        audit: AuditTrail,
        messages: CheckMessages,
        replica: str,
        lease_ttl_s: float,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.settings = settings
        self._schedule, self._runs, self._checker = schedule, runs, checker
        self._audit, self._messages = audit, messages
        self._replica, self._lease_ttl_s, self._clock = replica, lease_ttl_s, clock
        self._soonest: datetime | None = None
        """The earliest check this replica scheduled and has not looked for since."""
        self._wake = asyncio.Event()

    async def action_ran(self, run_id: str, step: Step, approval_ts: str) -> None:
        """An approved side effect (`step`) succeeded just now: its first check is kept, due `after_s` from now.
        Nothing when verification is off; a store that is down loses the check (logged), never the run."""
        if not self.settings.enabled or step.approval is None:
            return
        now = self._clock()
        due = ScheduledCheck(
            run_id=run_id,
            step=step.index,
            check=1,
            due_at=now + timedelta(seconds=self.settings.after_s),
            action_at=now,
            approval_ts=approval_ts,
            approver=step.approval.by,
        )
        try:
            await self._schedule.schedule_check(due)
        except StoreUnavailableError as exc:
            log.error("check_not_scheduled", run_id=run_id, step=step.index, error=str(exc)[:300])
            return
        log.info("check_scheduled", run_id=run_id, step=step.index, due_at=due.due_at.isoformat())
        self._expect(due.due_at)

    async def run(self) -> None:
        """Run the checks that fall due, on this replica and others', until cancelled."""
        while True:
            try:
                await self.run_due()
            except Exception as exc:  # the store may be restarting: look again shortly
                log.warning("checks_failed", error=repr(exc)[:300])
            self._wake.clear()
            wait = POLL_S
            if self._soonest is not None:
                wait = min(wait, max((self._soonest - self._clock()).total_seconds(), 0.0) + WAKE_MARGIN_S)
                self._soonest = None if wait < POLL_S else self._soonest  # awake by then: forgotten
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=wait)

    def _expect(self, due_at: datetime) -> None:
        """A check this replica scheduled is due at `due_at`: look for it then, rather than at the next poll."""
        self._soonest = min(self._soonest or due_at, due_at)
        self._wake.set()

    async def run_due(self) -> int:
        """Run every check that is due, or waiting to be written into its finished run's trace, that this replica
        can claim; how many it handled."""
        handled = 0
        while (check := await self._schedule.claim_check(self._replica, self._lease_ttl_s)) is not None:
            handled += 1
            if check.result is None:
                await self._check(check)
            else:
                await self._record(check, check.result)
        return handled

    async def _check(self, check: ScheduledCheck) -> None:
        """Make the check, schedule the next one, keep the result (if this replica still holds the check), say it,
        and write it into the run's trace when the run has finished."""
        record = await self._runs.get_run(check.run_id)
        trace = readable_trace(record) if record is not None else None
        if record is None or trace is None:  # nothing to check it against: it is dropped, and said in the logs
            log.warning("check_dropped", run_id=check.run_id, step=check.step, why="no readable trace")
            await self._schedule.check_done(check)
            return
        found = await check_action(
            trace, check.step, check.check, action_at=check.action_at, at=self._clock(), checker=self._checker
        )
        recheck_s = self.settings.recheck_after_s
        if check.check == 1 and recheck_s and found.outcome is not VerificationOutcome.NOT_VERIFIED:
            due_at = check.action_at + timedelta(seconds=recheck_s)
            await self._schedule.schedule_check(check.model_copy(update={"check": 2, "due_at": due_at}))
            self._expect(due_at)
        if not await self._schedule.check_ran(check, found, self._replica):
            log.warning("check_taken_over", run_id=check.run_id, step=check.step, check=check.check)
            return
        log.info("action_checked", run_id=check.run_id, step=check.step, check=check.check, outcome=str(found.outcome))
        await audit_check(self._audit, check.run_id, found)
        self._messages.checked(
            trace,
            found,
            channel=record.channel,
            thread_ts=record.thread_ts,
            approval_ts=check.approval_ts,
            approver=check.approver,
        )
        await self._record(check, found)

    async def _record(self, check: ScheduledCheck, found: Verification) -> None:
        """Write the check into its run's trace once the run has finished (until then it waits in the store), and
        show it in the verdict."""
        try:
            written = await self._runs.record_verification(check.run_id, found)
        except ValueError as exc:  # a trace nobody can read, or one that kept changing: the check stays in the log
            log.warning("check_not_recorded", run_id=check.run_id, step=check.step, error=str(exc)[:300])
            await self._schedule.check_done(check)
            return
        if not written:  # the run goes on: the check waits in the store, and is claimed again once the run ends
            return
        await self._schedule.check_done(check)
        record = await self._runs.get_run(check.run_id)
        trace = readable_trace(record) if record is not None else None
        if record is not None and trace is not None:
            self._messages.recorded(
                trace, channel=record.channel, summary_ts=record.summary_ts, stopped_by=record.stop_requested_by
            )


async def audit_check(audit: AuditTrail, run_id: str, found: Verification) -> None:
    """The check in the audit log (never raises): the action's step, the check's number, its outcome and values."""
    await audit.record(
        AuditKind.ACTION_VERIFIED,
        run_id=run_id,
        step=found.step,
        check=found.check,
        outcome=str(found.outcome),
        metric=found.metric,
        before=found.before,
        now=found.now,
    )
