"""What a click on an approval button comes to: decided, or refused for a named reason. Facts, not words
(`bot.slack.approval_words` says them to the clicker).

The gate has already checked who clicked (an approver of the installing workspace); these are the refusals of
the approval itself, kept apart so the broker reads as the state machine it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from bot.approvals.store import ApprovalState, PendingApproval


class ApprovalRefusal(StrEnum):
    """Why an approver's click did not decide anything."""

    UNKNOWN_APPROVAL = "unknown_approval"
    WRONG_MESSAGE = "wrong_message"
    ALREADY_DECIDED = "already_decided"
    EXPIRED = "expired"
    VOIDED = "voided"
    SELF_APPROVAL = "self_approval"


@dataclass(frozen=True, slots=True)
class Decided:
    """The click decided the approval: `approval` holds the decision (its state, who, when)."""

    approval: PendingApproval


@dataclass(frozen=True, slots=True)
class ApprovalRefused:
    """The click decided nothing, for `refusal`: facts for `bot.slack.approval_words` to say to the clicker.
    `approval` (when known) holds the rest: its state, who decided it and when, when it expired."""

    refusal: ApprovalRefusal
    approval: PendingApproval | None = None


DecisionOutcome = Decided | ApprovalRefused


def refused_as_settled(approval: PendingApproval) -> ApprovalRefused:
    """The refusal of a click on an approval that is no longer pending."""
    match approval.state:
        case ApprovalState.EXPIRED:
            return ApprovalRefused(ApprovalRefusal.EXPIRED, approval)
        case ApprovalState.VOIDED:
            return ApprovalRefused(ApprovalRefusal.VOIDED, approval)
        case _:
            return ApprovalRefused(ApprovalRefusal.ALREADY_DECIDED, approval)
