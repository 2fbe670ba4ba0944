"""Grounding by code: a claim that cites no step is looked for in the successful steps' output by its anchors, and an
unstated confidence is derived from how many claims are grounded. One test per rule."""

from __future__ import annotations

import json

import pytest

from kernel import (
    ApprovalRecord,
    ClaimRole,
    ClaimStatus,
    Confidence,
    ErrorKind,
    Evidence,
    Findings,
    RunResult,
    Step,
    StopReason,
    ToolCall,
    answer_rest,
    check_evidence,
    findings_from_prose,
)
from kernel.answer.grounding import AnchorKind, Observations, anchors_in

METRICS = "checkout http_5xx_rate over 30m: jumped from 0.20% to 8.8% at t-12m, now 9.5%\np99 latency 2000ms"
LOGS = (
    "checkout errors since t-30m: 1,310 lines\n"
    "500 × java.lang.NullPointerException at com.acme.checkout.PromoService.apply(PromoService.java:11)\n"
    '05:26:00Z INFO DeployEvent: checkout v3.8.0 rolled out (replaces v3.7.4) "case-insensitive promo codes"'
)
DIFF = (
    "v3.7.4..v3.8.0: src/main/java/com/acme/checkout/PromoService.java\n-  max_connections: 64\n+  max_connections: 4"
)


def step(index: int, observation: str, tool: str = "query_metrics", service: str = "checkout", **fields) -> Step:
    call = ToolCall(name=tool, args={"service": service})
    return Step(index=index, turn=index - 1, call=call, observation=observation, **fields)


STEPS = [step(1, METRICS), step(2, LOGS, "search_logs"), step(3, DIFF, "compare_refs")]


def grounded(claim: str, steps: list[Step] = STEPS) -> tuple[bool, tuple[int, ...], tuple[str, ...]]:
    found = Observations(steps).ground(claim)
    return found.grounded, found.steps, found.missing


@pytest.mark.parametrize(
    ("claim", "steps"),
    [
        ("5xx went from 0.2% to 8.8%.", (1,)),  # 0.2% is 0.20%
        ("p99 latency reached 2s.", (1,)),  # 2s is 2000ms
        ("The error rate is at 9.6% now.", (1,)),  # within 2% of 9.5%
        ("It settled at about 9%.", (1,)),  # "about": within 10%
        ("It rose 12 minutes ago.", (1,)),  # t-12m
        ("checkout logged 1,310 errors in 30 minutes.", (2,)),  # a count, exactly; t-30m
        ("v3.8.0 replaced 3.7.4 at 05:26.", (2,)),  # versions with or without v; a clock time
        ("`PromoService.apply` throws a NullPointerException.", (2,)),
        ('The release notes say "Case-insensitive promo codes".', (2,)),
        ("config in src/main/java/com/acme/checkout/PromoService.java changed.", (3,)),
        ("max_connections went from 64 to 4 in v3.8.0.", (3,)),
        ("5xx began at t-12m, right after the rollout of v3.8.0.", (1, 2)),  # the fewest steps that show it all
    ],
)
def test_a_claim_is_grounded_by_the_steps_whose_output_shows_its_anchors(claim, steps):
    assert grounded(claim) == (True, steps, ())


@pytest.mark.parametrize(
    ("claim", "missing"),
    [
        ("5xx went from 0.2% to 12%.", ("12%",)),  # a value no step shows
        ("It rose at t-15m.", ("t-15m",)),
        ("v3.8.1 broke it.", ("v3.8.1",)),
        ("v3.8 broke it.", ("v3.8",)),  # not the prefix of a longer version
        ("checkout logged 1,300 lines.", ("1,300 lines",)),  # counts are exact
        ("p99 latency reached 3s.", ("3s",)),
        ("`PromoService.charge` threw.", ("`PromoService.charge`",)),
    ],
)
def test_a_claim_with_an_anchor_no_step_shows_is_unsupported_and_names_it(claim, missing):
    found = Observations(STEPS).ground(claim)
    assert (found.grounded, found.missing) == (False, missing)


def test_a_name_alone_grounds_nothing():
    """Every step of a checkout incident names checkout: naming it says nothing about what a step showed."""
    assert grounded("checkout is down.") == (False, (1,), ())
    assert grounded("checkout is at 9.5%.") == (True, (1,), ())


def test_a_value_given_to_a_service_no_step_showing_it_is_about_is_not_grounded():
    """12% is checkout's: the payments step that shows t-12m too does not make it payments' 12%."""
    steps = [*STEPS, step(4, "payments http_5xx_rate flat at 0.02% since t-12m", service="payments")]
    assert grounded("payments' 5xx rate rose to 8.8% at t-12m.", steps)[0] is False
    assert grounded("checkout's 5xx rate rose to 8.8% at t-12m.", steps) == (True, (1,), ())
    assert grounded("payments stayed at 0.02%.", steps) == (True, (4,), ()), "its call names the service"


@pytest.mark.parametrize(
    ("claim", "observation"),
    [
        ("500 NullPointerExceptions were logged.", "500 × java.lang.NullPointerException at PromoService"),
        ("1,290 upstream resets.", "1,290 × upstream connect error"),  # separators: a count of something
        ("Pod web-1 is up with 0 restarts since 10:02.", "web-1 Running restarts=0 since 10:02"),
        ("HikariPool-1 times out after 5000ms.", "timeout acquiring connection after 5000ms (HikariPool-1)"),
    ],
)
def test_counts_and_identifiers_are_found_as_tools_write_them(claim, observation):
    assert grounded(claim, [step(1, observation, "search_logs")]) == (True, (1,), ())


def test_among_steps_that_show_the_same_anchors_the_one_closest_to_the_claim_is_named():
    steps = [
        step(1, "DeployEvent: checkout v3.8.0 rolled out (replaces v3.7.4) max_connections=4", "search_logs"),
        step(2, "v3.7.4..v3.8.0:\n-  max_connections: 64\n+  max_connections: 4", "compare_refs"),
        step(3, "[DryRun] would roll back checkout to v3.7.4", "rollback_deployment"),
    ]
    assert grounded("v3.8.0 cut the pool from 64 to 4.", steps)[1] == (2,), "it shows 64 and 4"
    assert grounded("The rollback to v3.7.4 is ready.", steps)[1] == (3,), "its tool's name is in the claim"
    assert grounded("It replaced v3.7.4.", steps)[1] == (1,), "otherwise the earliest"


def test_only_successful_tool_steps_ground_a_claim():
    pending = ApprovalRecord(decision="pending", approval_id="a1")
    steps = [
        step(1, METRICS, error=ErrorKind.TIMEOUT),
        step(2, "rolled back checkout to v3.7.4", "rollback_deployment", approval=pending),
        step(3, "jumped to 8.8%", "finish"),
        Step(index=4, turn=3, observation="5xx at 8.8%"),  # a prose reply: the model's own words
    ]
    assert grounded("5xx at 8.8% until the rollback to v3.7.4.", steps) == (False, (), ("8.8%", "v3.7.4"))


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("order-service v2.14.0 at t-10m", [AnchorKind.NAME, AnchorKind.VERSION, AnchorKind.IDENTIFIER]),
        ("a read-only, well-known follow-up", []),  # English compounds are no identifiers
        ("pod checkout-5f7c9d8b4-t9dnv OOMKilled", [AnchorKind.IDENTIFIER, AnchorKind.IDENTIFIER]),
        ("commit cc6ddea, trace fb9fa46f3a872bac", [AnchorKind.IDENTIFIER, AnchorKind.IDENTIFIER]),
        ("from 64 to 4 in 2026", []),  # bare numbers say nothing a step could be matched on
        ("503s for 2 minutes", [AnchorKind.QUANTITY, AnchorKind.QUANTITY]),
        ("see https://grafana.example/d/abc and req/s", []),
        ("the payment-service:8443 pool (PromoService.java:11)", [AnchorKind.NAME, AnchorKind.PATH]),
    ],
)
def test_anchors_are_numbers_with_units_versions_identifiers_quotes_paths_and_names(text, kinds):
    assert [anchor.kind for anchor in anchors_in(text, frozenset({"order-service"}))] == kinds


def test_a_claim_citing_nothing_is_matched_and_a_cited_one_keeps_its_citation():
    found = Findings(summary="v3.8.0 broke checkout.", evidence=(Evidence(claim="5xx rose to 9.5%", steps=()),))
    [claim] = check_evidence(found, STEPS).evidence
    assert (claim.status, claim.supported_by, claim.anchors, claim.reason) == (
        ClaimStatus.MATCHED,
        (1,),
        ("9.5%",),
        "",
    )
    cited = Findings(summary="v3.8.0 broke checkout.", evidence=(Evidence(claim="5xx rose to 40%", steps=(1,)),))
    [claim] = check_evidence(cited, STEPS).evidence
    assert (claim.status, claim.anchors) == (ClaimStatus.SUPPORTED, ()), "a cited claim is checked by its citation"


def test_an_unstated_confidence_is_derived_likely_when_most_claims_and_the_root_cause_are_grounded():
    answer = (
        "The v3.8.0 rollout broke checkout. 5xx went from 0.2% to 8.8% at t-12m. The error is a "
        "NullPointerException in `PromoService.apply`. Everything else looked normal."
    )
    check = check_evidence(findings_from_prose(answer), STEPS, answer)
    assert [(c.role, c.status) for c in check.claims] == [
        (ClaimRole.SUMMARY, ClaimStatus.MATCHED),
        (ClaimRole.STATEMENT, ClaimStatus.MATCHED),
        (ClaimRole.STATEMENT, ClaimStatus.MATCHED),
        (ClaimRole.STATEMENT, ClaimStatus.UNSUPPORTED),
    ]
    assert (check.confidence, check.derived, check.stated_confidence, check.lowered) == (
        Confidence.LIKELY,
        True,
        None,
        False,
    )
    assert check.derived_because == "3 of 4 claims grounded in the steps, the root cause among them"


def test_a_derived_confidence_is_inconclusive_when_the_root_cause_is_not_grounded():
    answer = "Root cause: the TLS certificate expired.\n\n5xx went from 0.2% to 8.8% at t-12m. v3.8.0 rolled out."
    check = check_evidence(findings_from_prose(answer), STEPS, answer)
    assert check.confidence is Confidence.INCONCLUSIVE
    assert check.derived_because == "2 of 3 claims grounded in the steps, but not the root cause"


def test_a_derived_confidence_is_inconclusive_when_most_claims_are_not_grounded():
    answer = "v3.8.0 broke checkout. It was a bad idea. Nobody tested it. The team was on holiday."
    check = check_evidence(findings_from_prose(answer), STEPS, answer)
    assert (check.confidence, check.derived_because) == (
        Confidence.INCONCLUSIVE,
        "only 1 of 4 claims grounded in the steps",
    )


def test_a_confidence_is_never_derived_confirmed():
    found = Findings(
        summary="v3.8.0 broke checkout.",
        root_cause="v3.8.0 set max_connections to 4.",
        evidence=(Evidence(claim="5xx rose to 8.8%", steps=(1,)), Evidence(claim="the diff", steps=(3,))),
    )
    check = check_evidence(found, STEPS)
    assert all(c.grounded for c in check.claims)
    assert (check.confidence, check.derived) == (Confidence.LIKELY, True)


def test_a_stated_confidence_is_still_capped_and_a_matched_claim_backs_likely_but_not_confirmed():
    answer = "Confidence: high.\n\nv3.8.0 broke checkout. 5xx went from 0.2% to 8.8%."
    check = check_evidence(findings_from_prose(answer), STEPS, answer)
    assert (check.stated_confidence, check.confidence, check.derived) == (
        Confidence.CONFIRMED,
        Confidence.LIKELY,
        False,
    )
    assert check.lowered_because == "lowered from confirmed to likely: no evidence claim cites a step"


def test_advice_courtesy_and_the_findings_own_items_are_no_extra_claims():
    answer = (
        "v3.8.0 broke checkout (step 2). 5xx rose to 8.8% (step 1).\n"
        "- Roll back checkout to v3.7.4.\n"
        "I recommend a test for carts without a promo. Let me know if you need more. Shall I roll back?\n\n"
        "Next steps:\n- restore the null check"
    )
    findings = findings_from_prose(answer)
    check = check_evidence(findings, STEPS, answer)
    assert [c.text for c in check.evidence] == ["v3.8.0 broke checkout.", "5xx rose to 8.8%."]
    assert check.statements == (), "the summary is an evidence item already; the rest is advice or courtesy"


def test_the_rest_of_a_prose_answer_keeps_its_layout_without_what_is_shown_apart():
    answer = (
        "**v3.8.0 broke checkout.** 5xx rose to 8.8%. It was *bad*.\n\n"
        "## Timeline\n- 05:26 rollout\n\n"
        "## Notes\n```\nkubectl rollout undo deploy/checkout\n```\n\n"
        "**Next steps:**\n- roll back"
    )
    shown = ["v3.8.0 broke checkout.", "5xx rose to 8.8%", "05:26 rollout"]
    assert answer_rest(answer, shown) == (
        "It was *bad*.\n\n### Notes\n```\nkubectl rollout undo deploy/checkout\n```"
    ), "a heading left with nothing under it goes; code stays as written; next steps are shown apart"


def test_the_trace_keeps_the_match_and_an_earlier_v3_check_still_loads():
    answer = "v3.8.0 broke checkout. 5xx went from 0.2% to 8.8% at t-12m."
    findings = findings_from_prose(answer)
    result = RunResult(
        run_id="r",
        task="t",
        stop_reason=StopReason.FINISH,
        answer=answer,
        findings=findings,
        evidence_check=check_evidence(findings, STEPS, answer),
        steps=STEPS,
    )
    data = json.loads(result.to_json())
    [_, statement] = data["evidence_check"]["statements"]
    assert (statement["status"], statement["supported_by"], statement["anchors"]) == (
        "matched",
        [1],
        ["0.2%", "8.8%", "t-12m"],
    )
    assert (data["evidence_check"]["derived"], data["evidence_check"]["confidence"]) == (True, "likely")
    assert RunResult.from_json(result.to_json()) == result
    for field in ("statements", "derived", "derived_because"):
        del data["evidence_check"][field]
    loaded = RunResult.from_json(json.dumps(data))
    assert loaded.evidence_check is not None
    assert loaded.evidence_check.statements == ()
