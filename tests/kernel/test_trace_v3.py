"""Trace schema version 3: the guidance people gave a run, and where it took it. Version-2 traces load with none."""

from __future__ import annotations

import json
from pathlib import Path

from kernel import SCHEMA_VERSION, RunResult, load_trace
from kernel.trace import MIGRATIONS

TRACES = Path(__file__).parent.parent / "fixtures" / "traces"


def test_version_3_with_a_migration_from_each_earlier_one():
    assert SCHEMA_VERSION == 3
    assert set(MIGRATIONS) == {1, 2}


def test_a_v3_trace_keeps_its_guidance_where_it_was_taken():
    trace = load_trace(TRACES / "v3_guidance.json")
    [taken] = trace.guidance
    assert (taken.guidance.by, taken.turn, taken.step) == ("Maria (on-call)", 1, 2)
    assert taken.guidance.text == "it's not the gateway, payments deployed at 14:02"
    assert taken.guidance.ref == "1764943620.000200"
    again = RunResult.from_json(trace.to_json())
    assert again == trace, "a v3 trace round-trips"


def test_a_v2_trace_loads_with_no_guidance():
    raw = json.loads((TRACES / "v2_native_prose_reminder_findings.json").read_text())
    assert "guidance" not in raw
    trace = RunResult.from_json(json.dumps(raw))
    assert (trace.schema_version, trace.guidance) == (SCHEMA_VERSION, [])
