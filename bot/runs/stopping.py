"""Who may stop an investigation: its requester, and by default approvers and members of the installing workspace
who are not guests (`[access] who_may_stop`); the same directory look-ups as approving, and refusals in words.

A Stop voids the run's approvals and ends it for everyone in the thread, so it needs a standing like approving does.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import assert_never

import structlog

from bot.access.settings import Stoppers
from bot.approvals.broker import ApprovalBroker
from bot.approvals.outcomes import Refusal
from bot.audit.trail import AuditKind, AuditTrail
from bot.slack.mrkdwn import user_ref
from bot.store.records import RunRecord

log = structlog.get_logger("opsagent.investigations")


@dataclass(frozen=True, slots=True)
class StopAnswer:
    """What a person's Stop came to (`stopped`), and what to tell them privately."""

    stopped: bool
    text: str


class StopPolicy:
    """Decides whether a person may stop a run they did not ask for, by the approval broker's standing check."""

    def __init__(self, broker: ApprovalBroker, who: Stoppers, audit: AuditTrail) -> None:
        self._broker = broker
        self._who = who
        self._audit = audit

    async def refused(self, record: RunRecord, *, user: str, teams: Collection[str]) -> StopAnswer | None:
        """None when `user` (writing from `teams`) may stop `record`'s run; else the refusal, logged and audited,
        and what to tell them."""
        refusal = await self._refusal(user, teams, requested_by=record.requested_by)
        if refusal is None:
            return None
        log.warning("stop_refused", run_id=record.run_id, user=user, teams=list(teams), refusal=str(refusal))
        await self._audit.record(AuditKind.STOP_REFUSED, run_id=record.run_id, actor=user, refusal=str(refusal))
        return StopAnswer(stopped=False, text=self._refusal_text(refusal, requested_by=record.requested_by))

    async def _refusal(self, user: str, teams: Collection[str], *, requested_by: str) -> Refusal | None:
        """Why `user` (writing from `teams`) may not stop a run `requested_by` someone; None: they may."""
        if user == requested_by:
            return None
        standing = await self._broker.standing(user, teams)
        if standing is not Refusal.NOT_AN_APPROVER:
            return standing  # an approver (None), or refused whatever the setting: a guest, another workspace…
        match self._who:
            case Stoppers.MEMBERS:
                return None  # a member in good standing: the directory found no reason against them
            case Stoppers.APPROVERS:
                return standing
            case _:
                assert_never(self._who)

    def _refusal_text(self, refusal: Refusal, *, requested_by: str) -> str:
        """What the refused person is told (ephemeral): why, and who can stop the run instead."""
        ask = f"Ask {user_ref(requested_by)} or an approver ({self._broker.approvers()}) to stop it."
        match refusal:
            case Refusal.OTHER_WORKSPACE:
                why = "Only members of the workspace that installed OpsAgent can stop its investigations."
            case Refusal.GUEST_USER:
                why = "Guests cannot stop OpsAgent investigations."
            case Refusal.BOT_USER:
                why = "Bot users cannot stop OpsAgent investigations."
            case Refusal.DEACTIVATED_USER:
                why = "Deactivated users cannot stop OpsAgent investigations."
            case Refusal.NOT_AN_APPROVER:
                why = "Only the person who asked for this investigation and the approvers can stop it."
            case Refusal.DIRECTORY_UNAVAILABLE:
                return "Could not verify who you are, so the investigation goes on; try again."
            case (
                Refusal.UNKNOWN_APPROVAL
                | Refusal.WRONG_MESSAGE
                | Refusal.ALREADY_DECIDED
                | Refusal.EXPIRED
                | Refusal.VOIDED
                | Refusal.SELF_APPROVAL
            ):
                raise ValueError(f"{refusal} is about an approval, never a reason to refuse a Stop")
            case _:
                assert_never(refusal)
        return f"{why} {ask}"
