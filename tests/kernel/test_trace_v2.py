"""Trace schema version 2: the structured answer, its check, how the run finished, the working hypothesis.

Version-1 traces migrate on load: a finished one gets its findings mapped from its answer, and their check.
"""

from __future__ import annotations

import json
from pathlib import Path

from kernel import (
    SCHEMA_VERSION,
    ClaimStatus,
    Confidence,
    Evidence,
    FinishedBy,
    Hypothesis,
    RunResult,
    load_trace,
)

TRACES = Path(__file__).parent.parent / "fixtures" / "traces"


def test_a_v2_trace_keeps_findings_check_hypotheses_and_how_it_finished():
    trace = load_trace(TRACES / "v2_native_prose_reminder_findings.json")
    assert trace.ok
    assert trace.finished_by is FinishedBy.FINISH
    assert [(s.call.name if s.call else None, s.prose) for s in trace.steps] == [
        ("query_metrics", False),
        ("search_logs", False),
        ("search_logs", False),
        ("rollback_deployment", False),
        (None, True),
        ("finish", False),
    ]
    assert trace.steps[1].hypothesis == Hypothesis("the v2.14.0 deploy broke the payment client", Confidence.LIKELY)
    assert trace.leading_hypothesis == Hypothesis("v2.14.0", Confidence.LIKELY)
    assert trace.findings is not None
    assert trace.findings.confidence is Confidence.CONFIRMED
    check = trace.evidence_check
    assert check is not None
    assert [c.status for c in check.evidence] == [ClaimStatus.SUPPORTED, ClaimStatus.SUPPORTED, ClaimStatus.UNSUPPORTED]
    assert check.evidence[1].reason == "step 2 failed"
    assert (check.confidence, check.lowered_because) == (
        Confidence.LIKELY,
        "lowered from confirmed to likely: 1 of 3 evidence claims is unsupported",
    )
    assert [(a.step, a.call.name, a.approved_by) for a in trace.actions_taken()] == [
        (4, "rollback_deployment", "U0ALICE")
    ]
    assert RunResult.from_json(trace.to_json()) == trace


def test_a_finished_v1_trace_gets_findings_and_their_check():
    raw = json.loads((TRACES / "v1_demo_text_protocol.json").read_text())
    assert raw["schema_version"] == 1
    assert "findings" not in raw
    trace = RunResult.from_json(json.dumps(raw))
    assert trace.schema_version == SCHEMA_VERSION, "migrated through every version since"
    assert trace.finished_by is FinishedBy.FINISH
    assert trace.findings is not None
    assert trace.findings.root_cause.startswith("order-service v2.14.0 (deployed at t-10m) lowered")
    assert trace.findings.confidence is Confidence.CONFIRMED, "v1's 'Confidence: high'"
    assert trace.findings.evidence[0] == Evidence(
        claim="order-service v2.14.0 (deployed at t-10m) lowered the payment client's `max_connections` from 64 to 4.",
        steps=(4,),
    )
    assert trace.evidence_check is not None
    assert all(c.status is ClaimStatus.SUPPORTED for c in trace.evidence_check.evidence)
    assert trace.answer == raw["answer"], "the answer itself is kept as written"


def test_an_unfinished_v1_trace_has_no_findings():
    trace = load_trace(TRACES / "v1_native_awaiting_approval.json")
    assert (trace.findings, trace.evidence_check, trace.finished_by) == (None, None, None)
    assert all(s.hypothesis is None for s in trace.steps)
