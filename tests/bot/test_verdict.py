"""The one model of a run's result: the verdict's gated confidence, claims checked against the steps with their
source links, the actions from the trace, each step in a line (the headline, else an excerpt), calls in few words."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from bot.verdict import (
    Refusal,
    StepStatus,
    call_words,
    counts_as_step,
    refusal_of,
    step_line,
    tool_steps,
    usage_facts,
    verdict_of,
)
from kernel import (
    ApprovalRecord,
    Confidence,
    ErrorKind,
    Evidence,
    Findings,
    Hypothesis,
    RuledOut,
    RunResult,
    SourceLink,
    Step,
    StopReason,
    ToolCall,
    Usage,
    check_evidence,
    findings_from_prose,
)

AT = datetime(2026, 11, 30, 20, 25, tzinfo=UTC)
GRAPH = SourceLink("graph", "https://prom.example/graph?g0.expr=x")
STEPS = [
    Step(
        index=1,
        turn=0,
        call=ToolCall(name="query_metrics", args={"service": "checkout", "metric": "5xx"}),
        observation="checkout 5xx over 30m: 0.2% → 31%",
        headline="5xx 0.2% → 31% at t-11m ▁▁▇█",
        links=(GRAPH,),
        thought="Known: the report.\nHypothesis: v3.8.0 broke checkout (likely)\nWhy: see when.",
        hypothesis=Hypothesis("v3.8.0 broke checkout", Confidence.LIKELY),
        ms=412,
    ),
    Step(
        index=2,
        turn=1,
        call=ToolCall(name="search_logs", args={"service": "gateway", "since": "15m"}),
        observation="",
        error=ErrorKind.TIMEOUT,
    ),
    Step(
        index=3,
        turn=2,
        call=ToolCall(name="rollback_deployment", args={"service": "checkout", "to_version": "v3.7.2"}),
        observation="webhook 200: rolled back checkout to v3.7.2\nmore detail",
        approval=ApprovalRecord(decision="approved", by="U0BOB42", at=AT),
    ),
    Step(index=4, turn=3, call=ToolCall(name="finish", args={"summary": "x"})),
]


def finished(findings: Findings, steps: list[Step] = STEPS, answer: str = "") -> RunResult:
    return RunResult(
        run_id="r1",
        task="checkout 5xx after v3.8.0",
        stop_reason=StopReason.FINISH,
        answer=answer or findings.markdown(),
        findings=findings,
        evidence_check=check_evidence(findings, steps, answer or findings.markdown()),
        steps=steps,
        usage=Usage(steps=4, prompt_tokens=12_000, completion_tokens=700, elapsed_s=41.0),
    )


def test_a_confirmed_verdict_keeps_its_confidence_and_links_its_evidence_to_its_sources():
    findings = Findings(
        summary="v3.8.0 cut the payments timeout to 200 ms.",
        root_cause="upstream_timeout 2s → 200ms in v3.8.0",
        confidence=Confidence.CONFIRMED,
        evidence=(Evidence(claim="5xx rose at t-11m", steps=(1,)),),
        ruled_out=(RuledOut(hypothesis="the TLS certificate", steps=(1,)),),
        next_steps=("restore the timeout",),
    )
    verdict = verdict_of(finished(findings))
    assert (verdict.title, verdict.confidence_words) == ("Root cause found", "confirmed")
    assert verdict.summary == "v3.8.0 cut the payments timeout to 200 ms."
    assert verdict.root_cause == "upstream_timeout 2s → 200ms in v3.8.0"
    assert verdict.rest == "", "typed findings are shown field by field"
    [claim] = verdict.evidence
    assert (claim.text, claim.steps, claim.supported, claim.links) == ("5xx rose at t-11m", (1,), True, (GRAPH,))
    assert verdict.ruled_out[0].supported
    assert verdict.next_steps == ("restore the timeout",)
    assert [line.index for line in verdict.steps] == [1, 2, 3], "the finish itself is no step to show"
    assert usage_facts(verdict) == ["3 steps", "12.7k tokens", "41.0 s"]


def test_a_claim_on_a_failed_step_is_unsupported_and_the_confidence_is_lowered_with_the_reason():
    findings = Findings(
        summary="The gateway times out.",
        confidence=Confidence.CONFIRMED,
        evidence=(Evidence(claim="5xx rose", steps=(1,)), Evidence(claim="gateway 504s", steps=(2, 9))),
    )
    verdict = verdict_of(finished(findings))
    assert verdict.confidence is Confidence.LIKELY
    assert verdict.title == "Likely cause"
    assert verdict.confidence_words == "lowered from confirmed to likely: 1 of 2 evidence claims is unsupported"
    unsupported = verdict.evidence[1]
    assert not unsupported.supported
    assert unsupported.problem == "step 2 failed; step 9 does not exist"
    assert unsupported.links == ()


def test_actions_come_from_the_trace_and_a_claimed_action_not_taken_is_flagged():
    findings = Findings(summary="We restarted the gateway and rolled back checkout.", confidence=Confidence.LIKELY)
    verdict = verdict_of(finished(findings))
    [action] = verdict.actions
    assert (action.step, action.call, action.approved_by, action.ok) == (
        3,
        "rollback_deployment checkout v3.7.2",
        "U0BOB42",
        True,
    )
    assert action.outcome == "webhook 200: rolled back checkout to v3.7.2", "no headline: the observation"
    headlined = [*STEPS[:2], replace(STEPS[2], headline="rollback checkout → v3.7.2: webhook 200"), STEPS[3]]
    [action] = verdict_of(finished(findings, headlined)).actions
    assert action.outcome == "rollback checkout → v3.7.2: webhook 200", "the tool's headline, as in the step line"
    assert verdict.claimed_not_taken == ("“We restarted the gateway and rolled back checkout.”",), (
        "the restart was claimed; the rollback ran"
    )


def test_a_prose_answer_is_shown_as_summary_evidence_and_the_rest_with_a_derived_confidence():
    answer = (
        "Checkout's 5xx went from 0.2% to 31% after v3.8.0. The rate rose at t-11m, as the graph shows.\n\n"
        "- It started during the lunch peak, which made it worse.\n\n"
        "Next steps:\n- roll back checkout"
    )
    steps = [*STEPS[:3], replace(STEPS[0], index=4, observation="DeployEvent: checkout v3.8.0 rolled out at t-12m")]
    verdict = verdict_of(finished(findings_from_prose(answer), steps, answer))
    assert verdict.summary == "Checkout's 5xx went from 0.2% to 31% after v3.8.0."
    assert verdict.confidence is Confidence.LIKELY
    assert verdict.title == "Likely cause"
    assert verdict.level == "likely (derived)"
    assert (
        verdict.confidence_words == "likely (derived): 2 of 3 claims grounded in the steps, the root cause among them"
    )
    [claim] = verdict.evidence
    assert (claim.text, claim.steps, claim.matched, claim.supported) == (
        "The rate rose at t-11m, as the graph shows.",
        (1,),
        True,
        True,
    )
    assert claim.links == (GRAPH,), "the source of the step it was found in"
    assert verdict.rest == "- It started during the lunch peak, which made it worse.", (
        "what is neither the summary, the evidence nor the next steps"
    )
    assert verdict.next_steps == ("roll back checkout",)


def test_a_prose_answer_whose_cause_no_step_shows_is_inconclusive_by_derivation():
    answer = "The TLS certificate expired at 03:00. The 5xx rate rose at t-11m. Checkout went from 0.2% to 31%."
    verdict = verdict_of(finished(findings_from_prose(answer), STEPS, answer))
    assert verdict.level == "inconclusive (derived)"
    assert verdict.title == "Inconclusive"
    assert verdict.derived_because == "2 of 3 claims grounded in the steps, but not the root cause"
    assert [c.text for c in verdict.evidence] == ["The 5xx rate rose at t-11m.", "Checkout went from 0.2% to 31%."]
    assert verdict.rest == "", "every sentence is shown: the summary above, the others as evidence"


def test_a_prose_answer_citing_its_steps_keeps_its_citations():
    result = RunResult(
        run_id="r1",
        task="t",
        stop_reason=StopReason.FINISH,
        answer="**Root cause**: v2.14.0 (step 1).\n- restore the pool",
        findings=Findings(
            summary="v2.14.0.", root_cause="v2.14.0.", evidence=(Evidence(claim="v2.14.0.", steps=(1,)),)
        ),
    )
    verdict = verdict_of(result.model_copy(update={"evidence_check": check_evidence(result.findings, STEPS)}))
    assert verdict.root_cause == "", "a root cause that only repeats the summary is not said twice"
    [claim] = verdict.evidence
    assert (claim.text, claim.steps, claim.matched) == ("v2.14.0.", (1,), False)
    assert verdict.rest == "- restore the pool"
    assert verdict.level == "likely (derived)", "its one claim cites a step that succeeded"


def test_a_stopped_run_has_no_verdict_only_what_it_knew():
    result = RunResult(
        run_id="r1",
        task="t",
        stop_reason=StopReason.MAX_STEPS,
        detail="20 of 20 steps used",
        partial_answer="  probably the deploy  ",
        steps=STEPS[:3],
        usage=Usage(steps=20),
    )
    verdict = verdict_of(result)
    assert verdict.title == "Stopped: the step budget ran out", "the budget's count is not the step count people see"
    assert verdict.tool_steps == 3
    assert (verdict.summary, verdict.evidence, verdict.confidence) == ("", (), None)
    assert verdict.partial_answer == "probably the deploy"
    assert verdict.detail == "20 of 20 steps used"
    assert len(verdict.actions) == 1, "what was done is said even when the run failed"
    paused = verdict_of(result.model_copy(update={"stop_reason": StopReason.AWAITING_APPROVAL}))
    assert paused.title == "Paused: waiting for an approval"


def test_a_stop_is_titled_once_and_names_who_stopped_it_only_where_known():
    cancelled = RunResult(run_id="r1", task="t", stop_reason=StopReason.CANCELLED, detail="stopped by U0ALICE1")
    anonymous = verdict_of(cancelled)
    assert (anonymous.title, anonymous.stop.said()) == ("Stopped by a user", "Stopped by a user")
    known = verdict_of(cancelled, stopped_by="U0ALICE1")
    assert known.title == "Stopped by a user", "the plain title names nobody"
    assert known.stop.said(person=lambda who: f"@{who}") == "Stopped by @U0ALICE1"
    deadline = verdict_of(cancelled.model_copy(update={"stop_reason": StopReason.DEADLINE}), stopped_by="U0ALICE1")
    assert deadline.stop.said(person=lambda who: f"@{who}") == "Stopped: the deadline passed", "only a Stop has a who"


def test_a_runs_step_count_is_its_tool_calls_whatever_came_of_them():
    call = ToolCall(name="search_logs", args={"service": "gateway"})
    pending = ApprovalRecord(decision="pending", approval_id="a1")
    denied = ApprovalRecord(decision="denied", by="U0BOB42", reason="not now")
    steps = [
        Step(index=1, turn=0, call=call),  # done
        Step(index=2, turn=0, call=call, error=ErrorKind.TIMEOUT),  # failed
        Step(index=3, turn=1, call=call, error=ErrorKind.LOOP_GUARD),  # refused by the loop guard
        Step(index=4, turn=1, call=call, error=ErrorKind.DENIED, approval=denied),  # refused by a person
        Step(index=5, turn=2, call=call, approval=pending),  # waiting for a person
        Step(index=6, turn=3, error=ErrorKind.FORMAT, observation="[FormatError] no action"),  # no call
        Step(index=7, turn=4, observation="Is this your answer?"),  # prose, asked to confirm
        Step(index=8, turn=5, call=call, error=ErrorKind.NOT_RUN),  # the budget ran out inside the turn
        Step(index=9, turn=6, call=ToolCall(name="finish", args={"summary": "x"})),  # the answer, not a step
    ]
    assert [counts_as_step(s) for s in steps] == [True] * 5 + [False] * 4
    assert tool_steps(steps) == 5
    result = RunResult(run_id="r", task="t", stop_reason=StopReason.FINISH, steps=steps, usage=Usage(steps=7))
    verdict = verdict_of(result)
    assert verdict.tool_steps == 5, "not the budget's 7"
    assert usage_facts(verdict)[0] == "5 steps"


def test_a_refusal_is_one_fact_said_by_each_surface_its_way():
    record = ApprovalRecord(decision="denied", by="U0BOB42", at=AT, reason="not\n during  peak traffic")
    refusal = refusal_of(record)
    assert refusal == Refusal("U0BOB42", AT, "not\n during  peak traffic")
    assert refusal.said() == "denied by U0BOB42 at 20:25 UTC: not during peak traffic"
    said = refusal.said(person=lambda who: f"<{who}>", moment=lambda at: at.isoformat(), text=str.upper)
    assert said == "denied by <U0BOB42> at 2026-11-30T20:25:00+00:00: NOT DURING PEAK TRAFFIC"
    assert Refusal("", None, "").said() == "denied by someone"
    assert refusal_of(ApprovalRecord(decision="approved", by="U0BOB42", at=AT)) is None
    assert refusal_of(None) is None


def test_a_step_line_has_the_headline_else_the_first_line_that_says_something():
    with_headline = step_line(STEPS[0])
    assert (with_headline.status, with_headline.outcome, with_headline.links) == (
        StepStatus.OK,
        "5xx 0.2% → 31% at t-11m ▁▁▇█",
        (GRAPH,),
    )
    assert with_headline.thought == "Known: the report. Why: see when.", "the hypothesis is shown on its own"
    excerpt = step_line(
        Step(index=5, turn=4, call=ToolCall(name="t"), observation="\n```\n  # 217 × 503 from checkout\n")
    )
    assert excerpt.outcome == "217 × 503 from checkout"
    assert step_line(Step(index=6, turn=4, call=ToolCall(name="t"))).outcome == "(no output)"
    long = step_line(Step(index=7, turn=4, call=ToolCall(name="t"), observation="x" * 500, thought="y " * 500))
    assert len(long.outcome) == 120
    assert long.outcome.endswith("…")
    assert len(long.thought) <= 120


def test_every_kind_of_step_has_its_status():
    call = ToolCall(name="rollback_deployment", args={"service": "checkout"})
    waiting = Step(index=1, turn=0, call=call, approval=ApprovalRecord(decision="pending", approval_id="a1"))
    denied = Step(
        index=2,
        turn=0,
        call=call,
        error=ErrorKind.DENIED,
        approval=ApprovalRecord(decision="denied", by="U0BOB42", reason="not now"),
    )
    failed = Step(index=3, turn=0, call=call, error=ErrorKind.EXCEPTION, observation="'t' failed: boom")
    prose = Step(index=4, turn=0, observation="Is this your answer?")
    unusable = Step(index=5, turn=0, error=ErrorKind.FORMAT, observation="[FormatError] no action")
    lines = [step_line(s) for s in (waiting, denied, failed, prose, unusable)]
    assert [line.status for line in lines] == [
        StepStatus.WAITING,
        StepStatus.DENIED,
        StepStatus.FAILED,
        StepStatus.PROSE,
        StepStatus.UNUSABLE,
    ]
    assert lines[0].outcome == "waiting for approval"
    assert lines[1].outcome == "denied by U0BOB42: not now"
    assert lines[2].outcome == "'t' failed: boom"
    assert (lines[3].tool, lines[3].call) == ("", "answered in prose; asked to confirm")


def test_a_call_in_a_few_words():
    path = "services/payments/config/tls/certificates/payments-internal.yaml"
    assert call_words(ToolCall(name="read_repo_file", args={"path": path, "ref": "v2.14.0"})) == (
        "read_repo_file …/payments-internal.yaml v2.14.0"
    )
    args = {"a": True, "b": None, "c": [1, 2, 3, 4], "d": 1.5, "e": {"x": 1}, "f": "a\u202eb", "g": ""}
    assert call_words(ToolCall(name="q", args=args)) == 'q yes 1,2,3… 1.5 {"x": 1} a\\u202eb', (
        "empty values left out, an invisible character written as its escape"
    )
    assert len(call_words(ToolCall(name="q", args={"x": "word " * 100}))) <= 80
