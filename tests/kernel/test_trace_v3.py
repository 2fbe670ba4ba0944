"""Trace schema version 3: the guidance people gave a run and where it took it, and the checks of its approved
actions. Version-2 traces load with neither."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from kernel import SCHEMA_VERSION, RunResult, Verification, VerificationOutcome, load_trace
from kernel.trace import MIGRATIONS

TRACES = Path(__file__).parent.parent / "fixtures" / "traces"
V3 = TRACES / "v3_guidance_and_verification.json"


def test_version_3_with_a_migration_from_each_earlier_one():
    assert SCHEMA_VERSION == 3
    assert set(MIGRATIONS) == {1, 2}


def test_a_v3_trace_keeps_its_guidance_where_it_was_taken():
    trace = load_trace(V3)
    [taken] = trace.guidance
    assert (taken.guidance.by, taken.turn, taken.step) == ("Maria (on-call)", 1, 2)
    assert taken.guidance.text == "it's not the gateway, payments deployed at 14:02"
    assert taken.guidance.ref == "1764943620.000200"
    again = RunResult.from_json(trace.to_json())
    assert again == trace, "a v3 trace round-trips"


def test_a_v3_trace_keeps_the_check_of_its_approved_action():
    trace = load_trace(V3)
    [action] = trace.actions_taken()
    [check] = trace.verifications
    assert (check.step, check.check, check.outcome, check.symptom_step) == (action.step, 1, "held", 1)
    assert (check.metric, check.before, check.now, check.baseline) == ("http_5xx_rate", "12.0%", "0.20%", "0.10%–0.12%")
    assert check.sparkline == "▁▁▁▁▇█████▁▁"


def test_recording_a_check_again_replaces_it_and_a_second_check_is_kept_beside_it():
    trace = load_trace(V3)
    [first] = trace.verifications
    at = datetime(2026, 12, 5, 14, 25, tzinfo=UTC)
    again = trace.verified(Verification(2, 1, at, VerificationOutcome.INCONCLUSIVE, detail="no data"))
    assert [(v.check, v.outcome) for v in again.verifications] == [(1, "inconclusive")]
    second = trace.verified(Verification(2, 2, at, VerificationOutcome.DID_NOT_HOLD, 1, "http_5xx_rate", "12.0%"))
    assert second.verifications == [first, second.verifications[1]]
    assert RunResult.from_json(second.to_json()) == second, "a check round-trips"
    assert trace.verifications == [first], "the trace itself is left as it was"


def test_a_v2_trace_loads_with_no_guidance_and_no_checks():
    raw = json.loads((TRACES / "v2_native_prose_reminder_findings.json").read_text())
    assert "guidance" not in raw
    assert "verifications" not in raw
    trace = RunResult.from_json(json.dumps(raw))
    assert (trace.schema_version, trace.guidance, trace.verifications) == (SCHEMA_VERSION, [], [])
