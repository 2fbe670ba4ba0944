"""A check of an action in words, as every surface says it (the plain words, Slack's line and its did-not-hold reply),
with what the metrics backend said escaped; and which read a check re-runs."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from bot.slack.approval_blocks import action_text
from bot.slack.approval_words import did_not_hold_words, verification_line
from bot.verdict import step_line, verdict_of
from bot.verification.symptoms import symptom_read
from bot.words import verification_words
from kernel import (
    ApprovalRecord,
    Evidence,
    Findings,
    RunResult,
    Step,
    StopReason,
    ToolCall,
    Verification,
    VerificationOutcome,
    check_evidence,
)
from samples.slack_messages import ALLOWED_ANGLES, HOSTILE

AT = datetime(2026, 12, 5, 14, 9, tzinfo=UTC)
AT_SLACK = f"<!date^{int(AT.timestamp())}^{{time}}|14:09 UTC>"
HELD = Verification(6, 1, AT, VerificationOutcome.HELD, 1, "http_5xx_rate", "12.0%", "0.20%", "0.10%–0.12%", "▁▇▁")


@pytest.mark.parametrize(
    ("verification", "said"),
    [
        (HELD, "verified 14:09 UTC: http_5xx_rate 12.0% → 0.20% ▁▇▁ · held"),
        (
            Verification(6, 2, AT, VerificationOutcome.HELD, 1, "http_5xx_rate", "12.0%", "0.10%"),
            "rechecked 14:09 UTC: http_5xx_rate 12.0% → 0.10% · still holding",
        ),
        (
            Verification(6, 1, AT, VerificationOutcome.DID_NOT_HOLD, 1, "latency_p99", "4.75s", "4.70s", "233ms"),
            "verified 14:09 UTC: latency_p99 4.75s → 4.70s · did not hold (before the incident: 233ms)",
        ),
        (
            Verification(6, 1, AT, VerificationOutcome.INCONCLUSIVE, 1, "http_5xx_rate", detail="no data now"),
            "checked 14:09 UTC: inconclusive (http_5xx_rate: no data now)",
        ),
        (
            Verification(6, 1, AT, VerificationOutcome.NOT_VERIFIED, detail="no metric to re-check"),
            "not verified: no metric to re-check",
        ),
    ],
    ids=["held", "still holding", "did not hold", "inconclusive", "not verified"],
)
def test_each_outcome_in_a_line(verification: Verification, said: str) -> None:
    assert verification_words(verification) == said


def test_slack_says_the_check_in_each_readers_time_and_escapes_what_the_backend_said() -> None:
    assert verification_line(HELD) == f"verified {AT_SLACK}: http_5xx_rate 12.0% → 0.20% ▁▇▁ · held"
    hostile = Verification(6, 1, AT, VerificationOutcome.INCONCLUSIVE, 1, HOSTILE, HOSTILE, HOSTILE, detail=HOSTILE)
    for text in (verification_line(hostile), did_not_hold_words(hostile, step=6, call=HOSTILE, approver="U0SAM42")):
        assert not [angle for angle in ALLOWED_ANGLES.sub("", text) if angle in "<>"], text
        assert "```" not in text, "no code block can be opened"


def test_the_did_not_hold_reply_mentions_the_approver_with_both_values() -> None:
    failed = Verification(6, 1, AT, VerificationOutcome.DID_NOT_HOLD, 1, "http_5xx_rate", "12.0%", "11.8%", "0.10%")
    reply = did_not_hold_words(failed, step=6, call="rollback_deployment order-service v2.13.2", approver="U0SAM42")
    assert reply == (
        "⚠️ <@U0SAM42>, the action you approved did not hold: *6* `rollback_deployment order-service v2.13.2` · "
        f"http_5xx_rate 12.0% → 11.8% at {AT_SLACK} (before the incident: 0.10%). The symptom is still there: look "
        "again, or mention me in this thread to investigate further."
    )


def run(*steps: Step, cited: tuple[int, ...] = ()) -> RunResult:
    """A finished run of `steps` whose answer cites `cited` as its evidence."""
    findings = Findings(summary="Checkout broke.", evidence=(Evidence(claim="5xx jumped", steps=cited),))
    result = RunResult(run_id="r", task="t", stop_reason=StopReason.FINISH, steps=list(steps))
    return result.model_copy(update={"findings": findings, "evidence_check": check_evidence(findings, steps)})


def read(index: int, service: str, *, ok: bool = True) -> Step:
    step = Step(index, 0, call=ToolCall(name="query_metrics", args={"service": service}), observation="…")
    if not ok:
        step.error = "exception"  # type: ignore[assignment]
    return step


class Metrics:
    """What a `SymptomChecker` says of a call: it re-runs `query_metrics` only."""

    def rechecks(self, call: ToolCall) -> bool:
        return call.name == "query_metrics"


ACTION = Step(
    5,
    1,
    call=ToolCall(name="rollback_deployment", args={"service": "checkout"}),
    approval=ApprovalRecord(decision="approved", by="U0SAM42", at=AT),
)


def test_the_read_re_run_is_the_one_the_verdict_cites_else_the_first() -> None:
    logs = Step(1, 0, call=ToolCall(name="search_logs", args={}), observation="…")
    steps = (logs, read(2, "gateway"), read(3, "checkout"), read(4, "payments"), ACTION, read(6, "checkout"))
    assert symptom_read(run(*steps, cited=(1, 3)), 5, Metrics()).index == 3, "cited, and a metrics read"
    assert symptom_read(run(*steps), 5, Metrics()).index == 2, "none cited: the first"
    assert symptom_read(run(*steps, cited=(6,)), 5, Metrics()).index == 2, "a read after the action is no symptom"
    assert symptom_read(run(logs, read(2, "x", ok=False), ACTION), 5, Metrics()) is None, "a failed read is none"
    assert symptom_read(run(*steps), 5, None) is None, "without metrics, nothing to re-run"


def test_the_verdict_and_the_actions_line_carry_the_latest_check() -> None:
    second = Verification(5, 2, AT, VerificationOutcome.DID_NOT_HOLD, 2, "http_5xx_rate", "12.0%", "9.0%", "0.10%")
    trace = run(read(2, "checkout"), ACTION).verified(second).verified(dataclasses.replace(HELD, step=5))
    [action] = verdict_of(trace).actions
    assert action.verified == second, "the second check is the latest, whatever order they were written in"
    line = action_text(step_line(ACTION), lambda _: None, action.verified)
    assert line.endswith(
        f"· rechecked {AT_SLACK}: http_5xx_rate 12.0% → 9.0% · did not hold (before the incident: 0.10%)"
    )
