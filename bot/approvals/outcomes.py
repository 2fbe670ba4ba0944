"""What a click on an approval button comes to: decided, or refused for a named reason with a message.

The gate has already checked who clicked (an approver of the installing workspace); these are the refusals of
the approval itself, kept apart so the broker reads as the state machine it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from bot.approvals.store import ApprovalState, PendingApproval

BROKER_USER = "opsagent"
"""Who decides when no human did: an expiry, a stopped run, a request that could not be posted."""


class ApprovalRefusal(StrEnum):
    """Why an approver's click did not decide anything."""

    UNKNOWN_APPROVAL = "unknown_approval"
    WRONG_MESSAGE = "wrong_message"
    ALREADY_DECIDED = "already_decided"
    EXPIRED = "expired"
    VOIDED = "voided"
    SELF_APPROVAL = "self_approval"


REFUSAL_MESSAGES: dict[ApprovalRefusal, str] = {
    ApprovalRefusal.UNKNOWN_APPROVAL: "This approval is not known (it may be from before a restart or forged).",
    ApprovalRefusal.WRONG_MESSAGE: "This button does not belong to the approval message it was clicked on; "
    "nothing was done.",
    ApprovalRefusal.ALREADY_DECIDED: "Already {state} by <@{user}> at {when}.",
    ApprovalRefusal.EXPIRED: "This approval expired at {when}.",
    ApprovalRefusal.VOIDED: "The run was stopped; nothing will run.",
    ApprovalRefusal.SELF_APPROVAL: "You started this run, so someone else must approve this action. "
    "You can still deny it.",
}
"""What the clicker is told (ephemerally), by refusal; `{…}` are filled in per click."""


@dataclass(frozen=True, slots=True)
class Decided:
    """The click decided the approval; `message` is the clicker's ephemeral confirmation."""

    approval: PendingApproval
    message: str


@dataclass(frozen=True, slots=True)
class ApprovalRefused:
    """The click decided nothing; `message` is for an ephemeral reply to the clicker."""

    refusal: ApprovalRefusal
    message: str
    approval: PendingApproval | None = None

    @classmethod
    def because(
        cls, refusal: ApprovalRefusal, approval: PendingApproval | None = None, **details: str
    ) -> ApprovalRefused:
        """The refusal with its user-facing message."""
        return cls(refusal, REFUSAL_MESSAGES[refusal].format(**details), approval)


DecisionOutcome = Decided | ApprovalRefused


def slack_date(moment: datetime) -> str:
    """A time that Slack shows in the reader's time zone, with a UTC fallback."""
    utc = moment.astimezone(UTC)
    return f"<!date^{int(utc.timestamp())}^{{date_short_pretty}} {{time}}|{utc:%Y-%m-%d %H:%M} UTC>"


def refused_as_settled(approval: PendingApproval) -> ApprovalRefused:
    """The refusal of a click on an approval that is no longer pending."""
    match approval.state:
        case ApprovalState.EXPIRED:
            return ApprovalRefused.because(ApprovalRefusal.EXPIRED, approval, when=slack_date(approval.expires_at))
        case ApprovalState.VOIDED:
            return ApprovalRefused.because(ApprovalRefusal.VOIDED, approval)
        case _:
            when = slack_date(approval.decided_at or approval.created_at)
            user = approval.decided_by or BROKER_USER
            return ApprovalRefused.because(
                ApprovalRefusal.ALREADY_DECIDED, approval, state=approval.state, user=user, when=when
            )
