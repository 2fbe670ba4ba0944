"""The evidence gate: findings checked against the trace's steps by code. One test per case."""

from __future__ import annotations

from datetime import UTC, datetime

from kernel import (
    Agent,
    ApprovalRecord,
    ApprovalRequest,
    Approved,
    CitationIssue,
    CitationProblem,
    ClaimStatus,
    Confidence,
    ErrorKind,
    Evidence,
    Findings,
    RunResult,
    ScriptedModel,
    SideEffectMode,
    SideEffectPolicy,
    Step,
    ToolCall,
    check_evidence,
    native_turn,
)

AT = datetime(2026, 3, 1, 20, 25, tzinfo=UTC)


def step(index: int, tool: str | None = "query_metrics", error: ErrorKind | None = None, **fields) -> Step:
    call = ToolCall(name=tool, args={"service": "checkout"}) if tool else None
    return Step(index=index, turn=index - 1, call=call, observation=f"output of step {index}", error=error, **fields)


def approved(index: int, tool: str, error: ErrorKind | None = None) -> Step:
    record = ApprovalRecord(decision="approved", by="U0BOB", at=AT)
    return step(index, tool, error, approval=record)


STEPS = [
    step(1),
    step(2, "search_logs", ErrorKind.TIMEOUT),
    step(3, "compare_refs"),
    step(4, None, ErrorKind.FORMAT),
    step(5, "finish"),
]


def findings(
    *claims: tuple[str, tuple[int, ...]], confidence: Confidence | None = Confidence.LIKELY, **more
) -> Findings:
    evidence = tuple(Evidence(claim=text, steps=steps) for text, steps in claims)
    return Findings(summary="v3.8.0 broke checkout.", confidence=confidence, evidence=evidence, **more)


def test_a_claim_citing_a_step_that_succeeded_is_supported():
    (claim,) = check_evidence(findings(("5xx rose at t-11m", (1,))), STEPS).evidence
    assert (claim.status, claim.supported_by, claim.issues, claim.reason) == (ClaimStatus.SUPPORTED, (1,), (), "")


def test_a_claim_citing_a_step_that_does_not_exist_is_unsupported():
    (claim,) = check_evidence(findings(("the diff shows it", (9,))), STEPS).evidence
    assert claim.status is ClaimStatus.UNSUPPORTED
    assert claim.issues == (CitationIssue(step=9, problem=CitationProblem.MISSING),)
    assert claim.reason == "step 9 does not exist"


def test_a_claim_citing_only_failed_steps_is_unsupported():
    (claim,) = check_evidence(findings(("504s in the gateway", (2, 4))), STEPS).evidence
    assert claim.status is ClaimStatus.UNSUPPORTED
    assert claim.reason == "step 2 failed; step 4 failed"


def test_a_claim_citing_nothing_that_no_step_could_show_is_unsupported():
    (claim,) = check_evidence(findings(("payments is slow", ())), STEPS).evidence
    assert (claim.status, claim.anchors) == (ClaimStatus.UNSUPPORTED, ())
    assert claim.reason == "cites no step, and names no number, version or identifier a step could show"


def test_a_claim_citing_the_finish_itself_is_not_evidence():
    (claim,) = check_evidence(findings(("as I said", (5,))), STEPS).evidence
    assert claim.issues == (CitationIssue(step=5, problem=CitationProblem.NOT_EVIDENCE),)
    assert claim.reason == "step 5 holds no tool output"


def test_a_claim_with_one_good_citation_is_supported_and_its_bad_ones_are_named():
    (claim,) = check_evidence(findings(("the diff", (3, 12))), STEPS).evidence
    assert claim.status is ClaimStatus.SUPPORTED
    assert claim.reason == "step 12 does not exist"


def test_confirmed_stands_when_every_claim_is_supported():
    check = check_evidence(findings(("5xx", (1,)), ("diff", (3,)), confidence=Confidence.CONFIRMED), STEPS)
    assert (check.confidence, check.lowered, check.lowered_because, check.passed) == (
        Confidence.CONFIRMED,
        False,
        "",
        True,
    )


def test_confirmed_with_an_unsupported_claim_is_lowered_to_likely():
    check = check_evidence(findings(("5xx", (1,)), ("504s", (2,)), confidence=Confidence.CONFIRMED), STEPS)
    assert check.stated_confidence is Confidence.CONFIRMED
    assert check.confidence is Confidence.LIKELY
    assert check.lowered_because == "lowered from confirmed to likely: 1 of 2 evidence claims is unsupported"
    assert not check.passed


def test_confirmed_without_any_supported_claim_is_lowered_to_inconclusive():
    check = check_evidence(findings(("504s", (2,)), confidence=Confidence.CONFIRMED), STEPS)
    assert check.confidence is Confidence.INCONCLUSIVE
    assert check.lowered_because == (
        "lowered from confirmed to inconclusive: no evidence claim is backed by a step that succeeded"
    )


def test_likely_without_evidence_is_lowered_to_inconclusive():
    check = check_evidence(findings(confidence=Confidence.LIKELY), STEPS)
    assert check.confidence is Confidence.INCONCLUSIVE
    assert check.lowered_because == "lowered from likely to inconclusive: no evidence claim cites a step"


def test_an_inconclusive_confidence_is_never_raised():
    check = check_evidence(findings(("5xx", (1,)), confidence=Confidence.INCONCLUSIVE), STEPS)
    assert (check.confidence, check.derived) == (Confidence.INCONCLUSIVE, False)


def test_ruled_out_hypotheses_are_checked_like_claims():
    check = check_evidence(findings(ruled_out=[{"hypothesis": "TLS", "steps": [9]}]), STEPS)
    assert [(c.text, c.status) for c in check.ruled_out] == [("TLS", ClaimStatus.UNSUPPORTED)]


def test_an_action_claimed_but_not_taken_is_flagged():
    claimed = findings(("5xx", (1,)), root_cause="v3.8.0; I restarted the checkout pods and it recovered.")
    check = check_evidence(claimed, STEPS, "Rolled back checkout to v3.7.2.")
    assert [(a.verb, a.sentence) for a in check.unbacked_actions] == [
        ("restarted", "I restarted the checkout pods and it recovered."),
        ("rolled back", "Rolled back checkout to v3.7.2."),
    ]
    assert not check.passed


def test_an_action_an_approved_step_took_is_not_flagged_but_another_kind_is():
    steps = [*STEPS, approved(6, "rollback_deployment")]
    claimed = findings(("5xx", (1,)), root_cause="v3.8.0.")
    check = check_evidence(claimed, steps, "We rolled back checkout (step 6). Then we restarted payments.")
    assert [a.verb for a in check.unbacked_actions] == ["restarted"]


def test_an_action_the_trace_observed_is_not_a_claim():
    observed = findings(("the pods restarted 14 times and the deploy was rolled back by CI", (1,)))
    assert check_evidence(observed, STEPS).unbacked_actions == ()


def test_a_failed_or_refused_action_does_not_back_a_claim():
    steps = [
        *STEPS,
        approved(6, "rollback_deployment", ErrorKind.EXCEPTION),
        approved(7, "restart_service", ErrorKind.DENIED),
    ]
    check = check_evidence(findings(("5xx", (1,))), steps, "I rolled back checkout. I restarted it.")
    assert [a.verb for a in check.unbacked_actions] == ["rolled back", "restarted"]


def test_actions_taken_come_from_the_trace_with_approver_and_outcome():
    steps = [
        *STEPS,
        approved(6, "rollback_deployment"),
        approved(7, "restart_service", ErrorKind.DENIED),
        step(8, "restart_service", ErrorKind.DENIED, approval=ApprovalRecord(decision="denied", by="U0EVE")),
        approved(9, "restart_service", ErrorKind.TIMEOUT),
    ]
    result = RunResult(run_id="r", task="t", stop_reason="finish", steps=steps)
    taken = result.actions_taken()
    assert [(a.step, a.call.name, a.approved_by, a.approved_at, a.ok, a.error) for a in taken] == [
        (6, "rollback_deployment", "U0BOB", AT, True, None),
        (9, "restart_service", "U0BOB", AT, False, ErrorKind.TIMEOUT),
    ]
    assert taken[0].outcome == "output of step 6"


async def approve(request: ApprovalRequest) -> Approved:
    return Approved(by="U0BOB", args_hash=request.args_hash)


async def test_the_check_is_stored_in_the_trace(tools):
    rollback = native_turn(("rollback_deployment", {"service": "order-service", "to_version": "v2.13.2"}))
    finish = native_turn(
        (
            "finish",
            {
                "summary": "v2.14.0 broke order-service; rolled back to v2.13.2.",
                "confidence": "confirmed",
                "evidence": [{"claim": "the rollback went through", "steps": [1]}, {"claim": "5xx rose", "steps": [7]}],
            },
        ),
        start_id=2,
    )
    model = ScriptedModel([rollback, finish])
    policy = SideEffectPolicy(mode=SideEffectMode.FULL)
    result = await Agent(llm=model, tools=tools, policy=policy, confirm=approve).run("t")
    check = result.evidence_check
    assert check is not None
    assert [c.status for c in check.evidence] == [ClaimStatus.SUPPORTED, ClaimStatus.UNSUPPORTED]
    assert check.confidence is Confidence.LIKELY
    assert check.unbacked_actions == (), "the approved rollback of step 1 backs 'rolled back'"
    assert [(a.step, a.approved_by, a.outcome) for a in result.actions_taken()] == [
        (1, "U0BOB", "rolled back order-service to v2.13.2")
    ]
    loaded = RunResult.from_json(result.to_json())
    assert loaded.evidence_check == check
    assert loaded.findings == result.findings
