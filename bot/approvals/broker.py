"""The server-side record of every Slack approval, and the confirm hook the Slack bot gives the kernel.

A click proves only that Slack sent it. The gate has checked who clicked (an approver of the installing workspace);
the broker decides whether the click may settle this approval: its own message, once, in time, not self-approved.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import structlog
from pydantic import BaseModel, ConfigDict

from bot.access.identity import Approvers
from bot.approvals.outcomes import (
    ApprovalRefusal,
    ApprovalRefused,
    Decided,
    DecisionOutcome,
    refused_as_settled,
)
from bot.approvals.store import ApprovalState, ApprovalStore, InMemoryApprovalStore, PendingApproval
from bot.audit.trail import AuditKind, AuditTrail
from bot.words import BROKER_USER, RUN_STOPPED_REASON, expiry_reason
from kernel import ApprovalRequest, Approved, ConfirmHook, Deferred, Denied

log = structlog.get_logger("opsagent.approvals")


class ApproverPolicy(BaseModel):
    """How approvals work: who is named as approver, whether a requester may approve their own run's action, and
    how long an approval waits. Whether a clicker *is* an approver is the gate's question."""

    model_config = ConfigDict(frozen=True)

    approvers: Approvers = Approvers()
    allow_self_approval: bool = False
    ttl_s: float = 900


class ApprovalUI(Protocol):
    """How the broker shows approvals in Slack; the Slack app implements it."""

    async def post_request(self, approval: PendingApproval) -> str:
        """Post the approval message in the run's thread; return its message ts."""
        ...

    async def show_decision(self, approval: PendingApproval) -> None:
        """Replace the buttons with the decision line; must not wait on Slack (the run is woken after it)."""
        ...


DEFAULT_DENIAL_REASON = "denied in Slack"
FAILED_REASON = "the approval request failed ({error})"
POSTING_RECHECKS, POSTING_RECHECK_S = 20, 0.05
"""How long a click waits for its approval message's ts to be recorded (1 s) before it is refused: woken at once when
this process records it, else re-reading the store at each recheck (posted by another process)."""
RECHECK_S = 5.0
"""How often a waiting run re-reads its approval from the store (a safety net under `announce`/`wake`)."""
MISSING_REASON = "the approval record is missing (lost with an in-memory store); ask again"


def decision_of(approval: PendingApproval) -> Approved | Denied:
    """What the kernel is told about a settled approval: only `approved` lets the call run."""
    at = approval.decided_at or approval.created_at
    if approval.state is ApprovalState.APPROVED and approval.decided_by:
        return Approved(by=approval.decided_by, args_hash=approval.args_hash, at=at)
    return Denied(by=approval.decided_by or BROKER_USER, reason=approval.reason or DEFAULT_DENIAL_REASON, at=at)


class ApprovalBroker:
    """Creates approvals for the kernel's side-effect calls and settles them from authorised Slack clicks."""

    def __init__(
        self,
        *,
        policy: ApproverPolicy,
        ui: ApprovalUI,
        store: ApprovalStore | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        announce: Callable[[str], Awaitable[None]] | None = None,
        recheck_s: float = RECHECK_S,
        audit: AuditTrail | None = None,
    ) -> None:
        self._policy = policy
        self._ui = ui
        self._store: ApprovalStore = store if store is not None else InMemoryApprovalStore()
        self._clock = clock
        self._announce = announce
        """Tells other processes an approval was settled (they call `wake`); None when there is one process."""
        self._recheck_s = recheck_s
        self._audit = audit
        """Where decisions, expiries, voids and refused clicks are recorded (the run store's audit log)."""
        self._waiters: dict[str, asyncio.Future[PendingApproval]] = {}
        self._posting: dict[str, asyncio.Event] = {}
        """Approvals this process is posting: each event is set once the message's ts is recorded (or it failed)."""
        self._settled_listeners: list[Callable[[PendingApproval], None]] = []

    def on_settled(self, listener: Callable[[PendingApproval], None]) -> None:
        """Call `listener` with every approval as it leaves `pending` (approved, denied, expired or voided).

        For metrics: the kernel's step records cannot tell an expiry or a void from a denial. A failing
        listener is logged and skipped; it never undoes a decision.
        """
        self._settled_listeners.append(listener)

    def confirm_hook(self, run_id: str, channel: str, thread_ts: str, requested_by: str) -> ConfirmHook:
        """The kernel's confirm hook for one run: post the approval in its thread and pause the run.

        The run resumes with `decision(approval_id)`, here or, after a restart, in another process.
        """

        async def confirm(request: ApprovalRequest) -> Deferred:
            approval = await self._post(request, run_id=run_id, channel=channel, thread_ts=thread_ts, by=requested_by)
            return Deferred(approval_id=approval.approval_id)

        return confirm

    async def decision(self, approval_id: str) -> Approved | Denied:
        """Wait until the approval is decided, voided or expired; what the paused run resumes with.

        Cancelling the wait (a shutdown) leaves the approval pending for whoever resumes the run.
        """
        # The waiter is in place before the store is read: a wake-up that lands during the read is not lost.
        waiter = self._waiters.get(approval_id)
        if waiter is None or waiter.done():
            waiter = self._waiters[approval_id] = asyncio.get_running_loop().create_future()
        try:
            approval = await self._store.get(approval_id)
            if approval is None:
                return Denied(by=BROKER_USER, reason=MISSING_REASON, at=self._clock())
            if approval.state is ApprovalState.PENDING:
                approval = await self._wait(approval, waiter)
        finally:
            self._waiters.pop(approval_id, None)
        return decision_of(approval)

    async def wake(self, approval_id: str) -> None:
        """Another process settled this approval (a click on another replica): wake the run waiting here."""
        waiter = self._waiters.get(approval_id)
        if waiter is None or waiter.done():
            return
        current = await self._store.get(approval_id)
        if current is not None and current.state is not ApprovalState.PENDING and not waiter.done():
            waiter.set_result(current)

    async def _post(
        self, request: ApprovalRequest, *, run_id: str, channel: str, thread_ts: str, by: str
    ) -> PendingApproval:
        """Store and post the request; if it cannot be posted it is voided and the error raised (fail closed)."""
        now = self._clock()
        approval = PendingApproval(
            approval_id=secrets.token_urlsafe(16),
            run_id=run_id,
            step=request.step,
            tool=request.call.name,
            args=request.call.args,
            args_hash=request.args_hash,
            thought=request.thought,
            summary=request.summary,
            channel=channel,
            thread_ts=thread_ts,
            requested_by=by,
            created_at=now,
            expires_at=now + timedelta(seconds=self._policy.ttl_s),
        )
        recorded = self._posting[approval.approval_id] = asyncio.Event()
        try:
            await self._store.add(approval)
            log.info("approval_requested", **_audit(approval), kernel_run_id=request.run_id, user=by)
            await self._record(AuditKind.APPROVAL_REQUESTED, approval, by)
            message_ts = await self._ui.post_request(approval)
            posted = approval.model_copy(update={"message_ts": message_ts})
            if not await self._store.compare_and_set(approval.approval_id, ApprovalState.PENDING, posted):
                settled = await self._store.get(approval.approval_id)  # voided while it was being posted
                if settled is not None:
                    await self._show(settled.model_copy(update={"message_ts": message_ts}))
            return posted
        except BaseException as exc:
            stopped = isinstance(exc, asyncio.CancelledError)
            reason = RUN_STOPPED_REASON if stopped else FAILED_REASON.format(error=f"{type(exc).__name__}: {exc}")
            await self._settle(approval, ApprovalState.VOIDED, by=BROKER_USER, reason=reason)
            raise
        finally:  # a click that beat the ts's write reads the approval again now
            recorded.set()
            self._posting.pop(approval.approval_id, None)

    async def _wait(self, approval: PendingApproval, waiter: asyncio.Future[PendingApproval]) -> PendingApproval:
        """The settled approval, once decided or voided, or expired at `expires_at`.

        The store is re-read every `recheck_s`, so a decision whose announcement was lost still arrives.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (approval.expires_at - self._clock()).total_seconds()
        while True:
            left = deadline - loop.time()
            if left <= 0:
                return await self._expire(approval) or await self._current(approval)
            try:
                async with asyncio.timeout(min(left, self._recheck_s)):
                    return await asyncio.shield(waiter)
            except TimeoutError:
                current = await self._current(approval)
                if current.state is not ApprovalState.PENDING:
                    return current

    async def decide(
        self,
        approval_id: str,
        *,
        user_id: str,
        channel: str,
        message_ts: str,
        approve: bool,
        reason: str = "",
    ) -> DecisionOutcome:
        """Settle an approval from a button click by `user_id`, an approver the gate admitted, if this click may
        settle it; refusals are outcomes, not errors."""
        approval = await self._posted(await self._store.get(approval_id))
        checked = await self._check_click(approval, user_id, channel, message_ts, approve)
        if isinstance(checked, PendingApproval):
            state = ApprovalState.APPROVED if approve else ApprovalState.DENIED
            reason = reason or ("" if approve else DEFAULT_DENIAL_REASON)
            decided = await self._settle(checked, state, by=user_id, reason=reason)
            if decided is not None:
                log.info("approval_decided", **_audit(decided), user=user_id, decision=str(state), reason=reason)
                return Decided(decided)
            checked = refused_as_settled(await self._current(checked))  # another click, a stop or the expiry won
        log.warning(
            "approval_refused",
            **(_audit(approval) if approval else {"approval_id": approval_id}),
            user=user_id,
            reason=str(checked.refusal),
        )
        if approval is not None:
            await self._record(AuditKind.APPROVAL_REFUSED, approval, user_id, refusal=str(checked.refusal))
        return checked

    async def _record(self, kind: AuditKind, approval: PendingApproval, actor: str, **detail: str) -> None:
        if self._audit is not None:
            about = {key: value for key, value in _audit(approval).items() if key != "run_id"}
            await self._audit.record(kind, run_id=approval.run_id, actor=actor, **about, **detail)

    async def _posted(self, approval: PendingApproval | None) -> PendingApproval | None:
        """The approval once its message ts is recorded: a click can beat the write that follows the post."""
        for _ in range(POSTING_RECHECKS):
            if approval is None or approval.message_ts or approval.state is not ApprovalState.PENDING:
                break
            recording = self._posting.get(approval.approval_id)
            if recording is None:  # posted by another process: its write shows in the store
                await asyncio.sleep(POSTING_RECHECK_S)
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(recording.wait(), POSTING_RECHECK_S)
            approval = await self._store.get(approval.approval_id)
        return approval

    async def _check_click(
        self, approval: PendingApproval | None, user_id: str, channel: str, message_ts: str, approve: bool
    ) -> ApprovalRefused | PendingApproval:
        """Why this click may not settle this approval, checked in order; or the approval, still pending."""
        if approval is None:
            return ApprovalRefused(ApprovalRefusal.UNKNOWN_APPROVAL)
        if channel != approval.channel or not approval.message_ts or message_ts != approval.message_ts:
            return ApprovalRefused(ApprovalRefusal.WRONG_MESSAGE, approval)
        if approval.state is ApprovalState.PENDING and self._clock() >= approval.expires_at:
            approval = await self._expire(approval) or await self._current(approval)
        if approval.state is not ApprovalState.PENDING:
            return refused_as_settled(approval)
        if approve and user_id == approval.requested_by and not self._policy.allow_self_approval:
            return ApprovalRefused(ApprovalRefusal.SELF_APPROVAL, approval)
        return approval

    def approvers(self) -> Approvers:
        """Who may approve (users and user groups): a fact; each surface names them its way."""
        return self._policy.approvers

    async def void_run(
        self, run_id: str, reason: str, *, by: str = BROKER_USER, keep: frozenset[str] = frozenset()
    ) -> list[PendingApproval]:
        """Void the run's pending approvals but those in `keep` (a Stop voids all): each is a denial with
        `reason`; returns them."""
        voided = []
        for approval in await self._store.pending_for_run(run_id):
            if approval.approval_id in keep:
                continue
            settled = await self._settle(approval, ApprovalState.VOIDED, by=by, reason=reason)
            if settled is not None:
                voided.append(settled)
        return voided

    async def get(self, approval_id: str) -> PendingApproval | None:
        """The stored approval, for the Slack app and for tests."""
        return await self._store.get(approval_id)

    async def _expire(self, approval: PendingApproval) -> PendingApproval | None:
        reason = expiry_reason(self._policy.ttl_s)
        return await self._settle(approval, ApprovalState.EXPIRED, by=BROKER_USER, reason=reason)

    async def _settle(
        self, approval: PendingApproval, state: ApprovalState, *, by: str, reason: str
    ) -> PendingApproval | None:
        """The one transition out of `pending`: store it, update the message, wake the waiting hook, audit it.

        None if the approval was no longer pending (another click, the expiry or a stop got there first).
        """
        settled = approval.model_copy(
            update={"state": state, "decided_by": by, "decided_at": self._clock(), "reason": reason}
        )
        if not await self._store.compare_and_set(approval.approval_id, ApprovalState.PENDING, settled):
            return None
        if state in (ApprovalState.EXPIRED, ApprovalState.VOIDED):
            log.info(f"approval_{state}", **_audit(settled), user=by, reason=reason)
        for listener in self._settled_listeners:
            try:
                listener(settled)
            except Exception:
                log.exception("approval_listener_failed", **_audit(settled))
        # The message shows the decision before the run is woken: the run's line for the action it then takes (its
        # outcome) replaces it. The other way round, a decision line written late would hide what the action did.
        if settled.message_ts:  # else not posted (yet): there is no message to update
            await self._show(settled)
        waiter = self._waiters.get(settled.approval_id)
        if waiter is not None and not waiter.done():
            waiter.set_result(settled)
        elif self._announce is not None:
            try:
                await self._announce(settled.approval_id)
            except Exception as exc:  # the run's own process re-reads the store when its wait ends
                log.warning("approval_announce_failed", **_audit(settled), error=repr(exc))
        # The audit line after the run is woken: the decision is stored already, and the approver waits for the
        # action, not for the audit log's turn behind every run's checkpoints. Its time is taken before this yields.
        await self._record(AuditKind.APPROVAL_DECIDED, settled, by, decision=str(state), reason=reason)
        return settled

    async def _show(self, approval: PendingApproval) -> None:
        """Update the approval message; a failure is logged, never undoes the decision."""
        try:
            await self._ui.show_decision(approval)
        except Exception as exc:
            log.warning("approval_ui_update_failed", **_audit(approval), error=repr(exc))

    async def _current(self, approval: PendingApproval) -> PendingApproval:
        return await self._store.get(approval.approval_id) or approval


def _audit(approval: PendingApproval) -> dict[str, Any]:
    """The fields every audit line about an approval carries (its step: a postmortem's timeline names it); never the
    arguments themselves."""
    return {
        "approval_id": approval.approval_id,
        "run_id": approval.run_id,
        "step": approval.step,
        "tool": approval.tool,
        "args_hash": approval.args_hash,
    }
