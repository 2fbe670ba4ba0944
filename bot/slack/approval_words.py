"""Approvals said in Slack: who may approve (real mentions, so they are notified), a refused approval in a line, why a
click on an approval's button decided nothing, and the check of an approved action (did it hold?).

The broker and the trace give facts (`bot.approvals.outcomes`, `bot.verdict.Refusal`); the words, the mentions and
the `<!date^…>` times (each reader sees their own time zone) are made here, and only here.
"""

from __future__ import annotations

from typing import assert_never

from bot.access.identity import Approvers
from bot.approvals.outcomes import ApprovalRefusal, ApprovalRefused
from bot.slack.mrkdwn import clip_literal, inline_code, slack_date, user_ref
from bot.verdict import Refusal
from bot.words import BROKER_USER, verification_words, verified_values
from kernel import Verification

REASON_CHARS = 300
"""A refusal's reason is cut to this in a line."""
CHECK_TEXT_CHARS = 200
"""Each text of a check (the metric, a value, why it is inconclusive) is cut to this in a line."""


def approver_mentions(approvers: Approvers) -> str:
    """The approvers as Slack mentions (users, then user groups), which notify them."""
    named = [f"<@{user}>" for user in sorted(approvers.users)] + [f"<!subteam^{g}>" for g in sorted(approvers.groups)]
    return ", ".join(named) or "none are configured"


def refusal_line(refusal: Refusal) -> str:
    """A refused approval in mrkdwn (`Refusal.said`): "denied by <@U…> at <!date^…>: not during peak traffic"."""
    return refusal.said(
        person=user_ref,
        moment=lambda at: slack_date(at, "{time}"),
        text=lambda reason: clip_literal(reason, REASON_CHARS),
    )


def verification_line(verification: Verification) -> str:
    """A check of an action in mrkdwn (`verification_words`): "verified <!date^…>: http_5xx_rate 12.0% → 0.20% ▁▇▁ ·
    held"; what the metrics backend said is escaped."""
    return verification_words(
        verification,
        moment=lambda at: slack_date(at, "{time}"),
        text=lambda said: clip_literal(" ".join(said.split()), CHECK_TEXT_CHARS),
    )


def did_not_hold_words(verification: Verification, *, step: int, call: str, approver: str) -> str:
    """The reply that tells the approver their action did not hold (a mention, so it notifies them): "⚠️ @sam, the
    action you approved did not hold: *6* `rollback_deployment …` · http_5xx_rate 12.0% → 11.8% ▁▇█ at 14:09
    (before the incident: 0.10%). …"."""
    v = verification
    what = "did not hold" if v.check <= 1 else "is not holding at its second check"
    values = verified_values(v, text=lambda said: clip_literal(" ".join(said.split()), CHECK_TEXT_CHARS))
    before = f" (before the incident: {clip_literal(v.baseline, CHECK_TEXT_CHARS)})" if v.baseline else ""
    return (
        f"⚠️ {user_ref(approver)}, the action you approved {what}: *{step}* {inline_code(call)} · {values} at "
        f"{slack_date(v.at, '{time}')}{before}. The symptom is still there: look again, or mention me in this "
        "thread to investigate further."
    )


def click_refused_text(refused: ApprovalRefused) -> str:
    """What the clicker is told, for them only, when their click on an approval's button decided nothing."""
    approval = refused.approval
    match refused.refusal:
        case ApprovalRefusal.UNKNOWN_APPROVAL:
            return "This approval is not known (it may be from before a restart or forged)."
        case ApprovalRefusal.WRONG_MESSAGE:
            return "This button does not belong to the approval message it was clicked on; nothing was done."
        case ApprovalRefusal.ALREADY_DECIDED if approval is not None:
            when = slack_date(approval.decided_at or approval.created_at)
            return f"Already {approval.state} by {user_ref(approval.decided_by or BROKER_USER)} at {when}."
        case ApprovalRefusal.EXPIRED if approval is not None:
            return f"This approval expired at {slack_date(approval.expires_at)}."
        case ApprovalRefusal.ALREADY_DECIDED | ApprovalRefusal.EXPIRED:
            return "This approval is no longer pending; nothing was done."
        case ApprovalRefusal.VOIDED:
            return "The run was stopped; nothing will run."
        case ApprovalRefusal.SELF_APPROVAL:
            return "You started this run, so someone else must approve this action. You can still deny it."
        case _:
            assert_never(refused.refusal)
