"""The approval in the thread: a request that names its approvers (real mentions) and shows the call and the reason
once; one line once decided; one line with the outcome once the action ran; hostile text escaped; Slack's limits."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.slack.action_ids import APPROVE, DENY
from bot.slack.approval_blocks import action_done, approval_decided, approval_request
from bot.slack.blocks import no_step_urls
from bot.verdict import step_line
from bot.verdict_actions import actions_of
from kernel import ApprovalRecord, ApprovalRequest, ErrorKind, Step, StopReason, ToolCall
from samples.slack_messages import (
    HOSTILE,
    adversarial,
    assert_no_hostile_tokens,
    assert_within_limits,
    texts_of,
)

AT = datetime(2026, 11, 30, 20, 25, tzinfo=UTC)
UNIX = int(AT.timestamp())
ROLLBACK = ToolCall(name="rollback_deployment", args={"service": "checkout", "to_version": "v3.7.2"})
APPROVERS = "<@U0BOB42>, <!subteam^S0SRE1>"
CHEAP = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def request(thought: str = "Why: v3.8.0 broke checkout.", call: ToolCall = ROLLBACK) -> ApprovalRequest:
    return ApprovalRequest(
        run_id="run42",
        step=5,
        call=call,
        args_hash=call.args_hash(),
        thought=thought,
        summary="Roll a service back to an earlier version.",
    )


def test_the_request_names_the_approvers_and_shows_the_call_and_the_reason_once():
    expires = AT + timedelta(minutes=15)
    message = approval_request(request(), "apv_7f3a", expires_at=expires, requester="U0ALICE1", approvers=APPROVERS)
    texts = texts_of(message)
    shown = "\n".join(texts)
    assert texts[0].startswith(f"🔐 *5* · *needs approval* from {APPROVERS}\n```\n")
    assert shown.count("rollback_deployment") == 1, "the call once"
    assert shown.count("v3.8.0 broke checkout") == 1, "the reason once"
    assert "*What it does:* Roll a service back to an earlier version." in shown
    assert f"⌛ expires <!date^{UNIX + 900}^{{time}}|20:40 UTC> · run requested by <@U0ALICE1>" in shown
    assert message.text.startswith(f"🔐 Step 5 needs approval from {APPROVERS}: "), (
        "the notification text mentions them too, so they are notified"
    )
    actions = message.blocks[-1]
    assert [(b["action_id"], b["value"], b["style"]) for b in actions["elements"]] == [
        (APPROVE, "apv_7f3a", "primary"),
        (DENY, "apv_7f3a", "danger"),
    ]
    assert actions["elements"][0]["confirm"]["style"] == "danger"
    assert_within_limits(message)


def approval_request_with(**changes: Any) -> Any:
    return approval_request(request(**changes), "a1", expires_at=AT, requester="U0ALICE1", approvers=APPROVERS)


@pytest.mark.parametrize(
    ("decision", "by", "reason", "line"),
    [
        (
            "approved",
            "U0BOB42",
            "",
            "✅ *5* `rollback_deployment checkout v3.7.2` · approved by <@U0BOB42> at {at} · running…",
        ),
        (
            "denied",
            "U0BOB42",
            "not now",
            "🚫 *5* `rollback_deployment checkout v3.7.2` · denied by <@U0BOB42> at {at}: not now",
        ),
        (
            "expired",
            "opsagent",
            "",
            "⌛ *5* `rollback_deployment checkout v3.7.2` · expired: not approved within 15 min (a denial)",
        ),
        (
            "voided",
            "U0BOB42",
            "the run was stopped",
            "⏹ *5* `rollback_deployment checkout v3.7.2` · void: the run was stopped · {at}",
        ),
        (
            "voided",
            "opsagent",
            "stopped by U0BOB42 while no replica was running it",
            "⏹ *5* `rollback_deployment checkout v3.7.2` · void: stopped by U0BOB42 while no replica was running it · {at}",
        ),
    ],
)
def test_a_decision_collapses_the_request_into_one_line(decision, by, reason, line):
    message = approval_decided(5, ROLLBACK, decision, by, AT, reason, approval_id="apv_7f3a")
    assert texts_of(message) == [line.format(at=f"<!date^{UNIX}^{{time}}|20:25 UTC>")]
    assert len(message.blocks) == 1, "no buttons any more"
    asked = approval_request_with()
    assert not {b["block_id"] for b in message.blocks} & {b["block_id"] for b in asked.blocks}, "new block ids"
    assert_within_limits(message)


def test_once_the_action_ran_its_line_carries_who_approved_and_what_came_of_it():
    approved = ApprovalRecord(decision="approved", by="U0BOB42", at=AT)
    ran = Step(index=5, turn=4, call=ROLLBACK, approval=approved, observation="webhook 200: rolled back\nmore")
    viewer = lambda index: f"https://ops.example/runs/run42#step-{index}"  # noqa: E731
    assert texts_of(action_done(step_line(ran), viewer)) == [
        f"✅ *5* `rollback_deployment checkout v3.7.2` · approved by <@U0BOB42> at <!date^{UNIX}^{{time}}|20:25 UTC>"
        " · webhook 200: rolled back · <https://ops.example/runs/run42#step-5|step>"
    ]
    failed = Step(index=5, turn=4, call=ROLLBACK, approval=approved, error=ErrorKind.EXCEPTION, observation="500")
    assert "· failed: 500" in texts_of(action_done(step_line(failed), no_step_urls))[0]
    denied = ApprovalRecord(decision="denied", by="U0BOB42", at=AT, reason="not during the freeze")
    refused = Step(index=5, turn=4, call=ROLLBACK, approval=denied, error=ErrorKind.DENIED, observation="denied")
    assert texts_of(action_done(step_line(refused), no_step_urls)) == [
        f"🚫 *5* `rollback_deployment checkout v3.7.2` · denied by <@U0BOB42> at <!date^{UNIX}^{{time}}|20:25 UTC>"
        ": not during the freeze"
    ]
    decided = approval_decided(5, ROLLBACK, "denied", "U0BOB42", AT, "not during the freeze", approval_id="a1")
    assert texts_of(decided) == texts_of(action_done(step_line(refused), no_step_urls)), "one refusal, one wording"
    mismatch = "'rollback_deployment' was not run: it was approved with other arguments"
    other = Step(index=5, turn=4, call=ROLLBACK, approval=approved, error=ErrorKind.DENIED, observation=mismatch)
    assert texts_of(action_done(step_line(other), no_step_urls)) == [
        f"🚫 *5* `rollback_deployment checkout v3.7.2` · {mismatch}"
    ], "approved, yet not run: the kernel's reason, not an approver's"


def test_hostile_arguments_reasons_and_outcomes_are_escaped_in_every_approval_message():
    call = ToolCall(name="rollback_deployment", args={"service": HOSTILE})
    asked = approval_request(request(HOSTILE, call), "a1", expires_at=AT, requester=HOSTILE, approvers=APPROVERS)
    decided = approval_decided(5, call, "denied", HOSTILE, AT, HOSTILE, approval_id="a1")
    record = ApprovalRecord(decision="approved", by=HOSTILE, at=AT)
    done = action_done(step_line(Step(index=5, turn=4, call=call, approval=record, observation=HOSTILE)), no_step_urls)
    for message in (asked, decided, done):
        assert_within_limits(message)
        assert_no_hostile_tokens(message)
    assert "<@U0BOB42>" in json.dumps(asked.blocks), "our own mentions stay mentions"


@CHEAP
@given(thought=adversarial, arg=adversarial, approval_id=st.text(min_size=1, max_size=2000), who=adversarial)
def test_approval_messages_stay_within_limits(thought: str, arg: str, approval_id: str, who: str) -> None:
    call = ToolCall(name=arg[:300] or "t", args={"x": arg})
    asked = approval_request(
        request(thought, call), approval_id, expires_at=AT, requester=who or None, approvers=APPROVERS
    )
    assert_within_limits(asked)
    assert {b["value"] for b in asked.blocks[-1]["elements"]} == {approval_id}
    for decision in ("approved", "denied", "expired", "voided"):
        assert_within_limits(approval_decided(5, call, decision, who or None, AT, thought, approval_id=approval_id))
    record = ApprovalRecord(decision="approved", by=who, at=AT, reason=thought)
    assert_within_limits(
        action_done(step_line(Step(index=5, turn=0, call=call, approval=record, observation=arg)), no_step_urls)
    )


def test_an_approval_id_that_cannot_fit_a_button_is_refused():
    for bad in ("", "x" * 2001):
        with pytest.raises(ValueError, match="2000 characters"):
            approval_request(request(), bad, expires_at=AT, requester=None, approvers=APPROVERS)


def test_a_request_for_a_call_the_thread_ran_or_refused_before_says_so_with_who_when_and_the_outcome_escaped():
    approved = ApprovalRecord(decision="approved", by="U0BOB42", at=AT)
    ran = Step(index=3, turn=2, call=ROLLBACK, observation=f"rolled back {HOSTILE}", approval=approved)
    denied = ApprovalRecord(decision="denied", by="U0CAROL", at=AT, reason=HOSTILE)
    refused = Step(index=4, turn=3, call=ROLLBACK, observation="not run", error=ErrorKind.DENIED, approval=denied)
    same = actions_of([ran, refused], StopReason.FINISH)
    message = approval_request(
        request(), "a1", expires_at=AT, requester="U0ALICE1", approvers=APPROVERS, same_call=same
    )
    shown = "\n".join(texts_of(message))
    assert (
        f"⚠️ *The same call ran at <!date^{UNIX}^{{time}}|20:25 UTC> in this thread, approved by <@U0BOB42>* "
        "(step 3 of an earlier run): rolled back &lt;!channel&gt; &lt;!here&gt;"
    ) in shown
    assert (
        "ℹ️ *The same call was proposed in this thread before* (step 4 of an earlier run): denied by <@U0CAROL>" in shown
    )
    assert_no_hostile_tokens(message)
    assert_within_limits(message)
    plain = approval_request(request(), "a1", expires_at=AT, requester="U0ALICE1", approvers=APPROVERS)
    assert "same call" not in "\n".join(texts_of(plain)), "a call new to the thread says nothing of it"
