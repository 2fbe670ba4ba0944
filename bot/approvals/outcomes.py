"""What a click on an approval button comes to: decided, or refused for a named reason with a message.

The broker decides; these types and the refusal checks that need no store are kept apart so the broker
reads as the state machine it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from bot.approvals.directory import SlackUser
from bot.approvals.store import ApprovalState, PendingApproval

BROKER_USER = "opsagent"
"""Who decides when no human did: an expiry, a stopped run, a request that could not be posted."""


class Refusal(StrEnum):
    """Why a click did not decide anything."""

    UNKNOWN_APPROVAL = "unknown_approval"
    WRONG_MESSAGE = "wrong_message"
    ALREADY_DECIDED = "already_decided"
    EXPIRED = "expired"
    VOIDED = "voided"
    OTHER_WORKSPACE = "other_workspace"
    BOT_USER = "bot_user"
    DEACTIVATED_USER = "deactivated_user"
    GUEST_USER = "guest_user"
    NOT_AN_APPROVER = "not_an_approver"
    SELF_APPROVAL = "self_approval"
    DIRECTORY_UNAVAILABLE = "directory_unavailable"


REFUSAL_MESSAGES: dict[Refusal, str] = {
    Refusal.UNKNOWN_APPROVAL: "This approval is not known (it may be from before a restart or forged).",
    Refusal.WRONG_MESSAGE: "This button does not belong to the approval message it was clicked on; nothing was done.",
    Refusal.ALREADY_DECIDED: "Already {state} by <@{user}> at {when}.",
    Refusal.EXPIRED: "This approval expired at {when}.",
    Refusal.VOIDED: "The run was stopped; nothing will run.",
    Refusal.OTHER_WORKSPACE: "Only members of the workspace that installed OpsAgent can approve its actions.",
    Refusal.BOT_USER: "Bot users cannot approve OpsAgent actions.",
    Refusal.DEACTIVATED_USER: "Deactivated users cannot approve OpsAgent actions.",
    Refusal.GUEST_USER: "Guests cannot approve OpsAgent actions.",
    Refusal.NOT_AN_APPROVER: "You are not an approver for OpsAgent actions. Approvers: {approvers}.",
    Refusal.SELF_APPROVAL: "You started this run, so someone else must approve this action. You can still deny it.",
    Refusal.DIRECTORY_UNAVAILABLE: "Could not verify you are an approver; try again.",
}
"""What the clicker is told (ephemerally), by refusal; `{…}` are filled in per click."""


@dataclass(frozen=True, slots=True)
class Decided:
    """The click decided the approval; `message` is the clicker's ephemeral confirmation."""

    approval: PendingApproval
    message: str


@dataclass(frozen=True, slots=True)
class Refused:
    """The click decided nothing; `message` is for an ephemeral reply to the clicker."""

    refusal: Refusal
    message: str
    approval: PendingApproval | None = None

    @classmethod
    def because(cls, refusal: Refusal, approval: PendingApproval | None = None, **details: str) -> Refused:
        """The refusal with its user-facing message."""
        return cls(refusal, REFUSAL_MESSAGES[refusal].format(**details), approval)


DecisionOutcome = Decided | Refused


def slack_date(moment: datetime) -> str:
    """A time that Slack shows in the reader's time zone, with a UTC fallback."""
    utc = moment.astimezone(UTC)
    return f"<!date^{int(utc.timestamp())}^{{date_short_pretty}} {{time}}|{utc:%Y-%m-%d %H:%M} UTC>"


def refused_as_settled(approval: PendingApproval) -> Refused:
    """The refusal of a click on an approval that is no longer pending."""
    match approval.state:
        case ApprovalState.EXPIRED:
            return Refused.because(Refusal.EXPIRED, approval, when=slack_date(approval.expires_at))
        case ApprovalState.VOIDED:
            return Refused.because(Refusal.VOIDED, approval)
        case _:
            when = slack_date(approval.decided_at or approval.created_at)
            user = approval.decided_by or BROKER_USER
            return Refused.because(Refusal.ALREADY_DECIDED, approval, state=approval.state, user=user, when=when)


def account_refusal(user: SlackUser, team_id: str) -> Refusal | None:
    """Why this Slack account may not approve anything, whoever it is: another workspace, a bot, a guest."""
    if user.team_id != team_id:
        return Refusal.OTHER_WORKSPACE
    if user.deleted:
        return Refusal.DEACTIVATED_USER
    if user.is_bot:
        return Refusal.BOT_USER
    if user.is_restricted or user.is_ultra_restricted:
        return Refusal.GUEST_USER
    return None
