"""Approvals said in Slack, from the broker's facts: who may approve as mentions, a refusal in a line, and why a click
decided nothing, with who decided and when as each reader's own time."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.access.identity import Approvers
from bot.approvals.outcomes import ApprovalRefusal, ApprovalRefused
from bot.approvals.store import ApprovalState, PendingApproval
from bot.slack.approval_words import approver_mentions, click_refused_text, refusal_line
from bot.verdict import Refusal
from samples.slack_messages import ALLOWED_ANGLES, HOSTILE
from testkit.fakes.clock import T0

T0_SLACK = "<!date^1796007600^{date_short_pretty} {time}|2026-11-30 03:00 UTC>"
APPROVAL = PendingApproval(
    approval_id="apv_7f3a",
    run_id="run-1",
    step=5,
    tool="rollback_deployment",
    args={"service": "order-service"},
    args_hash="h",
    thought="",
    channel="C0INCIDENT",
    thread_ts="1.1",
    message_ts="1.2",
    requested_by="U0REQ1",
    created_at=T0 - timedelta(minutes=1),
    expires_at=T0 + timedelta(minutes=15),
)


def settled(state: ApprovalState, by: str) -> PendingApproval:
    return APPROVAL.model_copy(update={"state": state, "decided_by": by, "decided_at": T0})


def test_approvers_are_named_as_mentions_users_first():
    approvers = Approvers(frozenset({"U0BOB42", "U0ALICE1"}), frozenset({"S0ONCALL"}))
    assert approver_mentions(approvers) == "<@U0ALICE1>, <@U0BOB42>, <!subteam^S0ONCALL>"
    assert approver_mentions(Approvers()) == "none are configured"


@pytest.mark.parametrize(
    ("refused", "said"),
    [
        (
            ApprovalRefused(ApprovalRefusal.UNKNOWN_APPROVAL),
            "This approval is not known (it may be from before a restart or forged).",
        ),
        (
            ApprovalRefused(ApprovalRefusal.WRONG_MESSAGE, APPROVAL),
            "This button does not belong to the approval message it was clicked on; nothing was done.",
        ),
        (
            ApprovalRefused(ApprovalRefusal.ALREADY_DECIDED, settled(ApprovalState.APPROVED, "U0BOB42")),
            f"Already approved by <@U0BOB42> at {T0_SLACK}.",
        ),
        (
            ApprovalRefused(ApprovalRefusal.ALREADY_DECIDED, settled(ApprovalState.DENIED, "U0ALICE1")),
            f"Already denied by <@U0ALICE1> at {T0_SLACK}.",
        ),
        (
            ApprovalRefused(ApprovalRefusal.EXPIRED, settled(ApprovalState.EXPIRED, "opsagent")),
            "This approval expired at <!date^1796008500^{date_short_pretty} {time}|2026-11-30 03:15 UTC>.",
        ),
        (
            ApprovalRefused(ApprovalRefusal.VOIDED, settled(ApprovalState.VOIDED, "U0BOB42")),
            "The run was stopped; nothing will run.",
        ),
        (
            ApprovalRefused(ApprovalRefusal.SELF_APPROVAL, APPROVAL),
            "You started this run, so someone else must approve this action. You can still deny it.",
        ),
    ],
    ids=lambda value: value.refusal.value if isinstance(value, ApprovalRefused) else "",
)
def test_a_refused_click_is_told_why_from_the_brokers_facts(refused, said):
    assert click_refused_text(refused) == said


def test_who_decided_is_a_mention_only_when_it_is_a_user_id():
    by_broker = ApprovalRefused(ApprovalRefusal.ALREADY_DECIDED, settled(ApprovalState.DENIED, "opsagent"))
    assert click_refused_text(by_broker) == f"Already denied by opsagent at {T0_SLACK}.", "no <@opsagent>"
    hostile = click_refused_text(
        ApprovalRefused(ApprovalRefusal.ALREADY_DECIDED, settled(ApprovalState.DENIED, HOSTILE))
    )
    assert not [angle for angle in ALLOWED_ANGLES.sub("", hostile) if angle in "<>"], "nothing but our own markup"


def test_a_refusal_line_names_who_with_a_mention_and_when_in_the_readers_time():
    refusal = Refusal("U0BOB42", T0, f"not during the freeze {HOSTILE}")
    line = refusal_line(refusal)
    assert line.startswith("denied by <@U0BOB42> at <!date^1796007600^{time}|03:00 UTC>: not during the freeze ")
    assert not [angle for angle in ALLOWED_ANGLES.sub("", line) if angle in "<>"], "the reason is escaped"
    assert refusal_line(Refusal("U0BOB42", T0, "x" * 1000)).endswith("…"), "a reason is cut to a line"
