"""Traces: round-trip, versioning, the corpus of old traces, and resuming from a saved trace."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kernel import SCHEMA_VERSION, Agent, Budget, RunResult, ScriptedModel, StopReason, native_turn, text_turn

CORPUS = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "traces").glob("*.json"))


async def test_round_trip_keeps_every_field(tools):
    model = ScriptedModel([text_turn("search_logs", service="s", query="huge"), text_turn("finish", answer="a")])
    result = await Agent(llm=model, tools=tools).run("t")
    loaded = RunResult.from_json(result.to_json())
    assert loaded == result
    data = json.loads(result.to_json())
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["ok"] is True
    assert set(data["steps"][0]) >= {
        "index",
        "thought",
        "call",
        "observation",
        "error",
        "ms",
        "prompt_tokens",
        "completion_tokens",
    }
    assert data["outputs"]["o1"].count("\n") == 2999


async def test_each_model_turn_records_when_it_was_asked_and_how_long_it_took(tools):
    script = [native_turn(("finish", {"answer": "a"}))]
    model = ScriptedModel(script, latency=0.02)
    began = datetime.now(UTC)
    result = await Agent(llm=model, tools=tools).run("t")
    (turn,) = result.turns
    assert turn.started_at is not None
    assert began <= turn.started_at <= datetime.now(UTC)
    assert turn.ms >= 15  # the scripted latency, a lower bound whatever the load
    assert script[0].started_at is None  # the script's own turn is not stamped: the model handed out a copy
    loaded = RunResult.from_json(result.to_json())
    assert (loaded.turns[0].started_at, loaded.turns[0].ms) == (turn.started_at, turn.ms)


def test_traces_from_before_turns_were_timed_load_without_times():
    trace = RunResult.from_json(
        (Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "v1_demo_text_protocol.json").read_text()
    )
    assert trace.turns
    assert all(t.started_at is None and t.ms == 0.0 for t in trace.turns)


def test_future_versions_are_refused_with_advice():
    with pytest.raises(ValueError, match="newer than this OpsAgent understands"):
        RunResult.from_json(json.dumps({"schema_version": SCHEMA_VERSION + 1}))


def test_non_traces_are_refused():
    with pytest.raises(ValueError, match="no integer schema_version"):
        RunResult.from_json("{}")


def test_ok_in_a_file_cannot_contradict_the_stop_reason():
    data = {"schema_version": SCHEMA_VERSION, "run_id": "r", "task": "t", "stop_reason": "max_steps", "ok": True}
    assert RunResult.from_json(json.dumps(data)).ok is False


def test_the_corpus_holds_a_trace_of_every_schema_version():
    """A new schema version needs a trace of it here, so the next one is migrated from it on purpose."""
    versions = sorted({json.loads(path.read_text())["schema_version"] for path in CORPUS})
    assert versions == list(range(1, SCHEMA_VERSION + 1))


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_every_trace_in_the_corpus_still_loads(path):
    trace = RunResult.from_json(path.read_text())
    assert trace.steps
    assert trace.ok == (trace.stop_reason is StopReason.FINISH)
    assert all(s.turn < len(trace.turns) for s in trace.steps)


async def test_a_run_stopped_by_its_budget_resumes_from_its_trace(tools, backend):
    first = ScriptedModel([text_turn("query_metrics", service="a")])
    stopped = await Agent(llm=first, tools=tools, budget=Budget(max_steps=1), salvage=False).run("t")
    assert stopped.stop_reason is StopReason.MAX_STEPS

    second = ScriptedModel([text_turn("query_metrics", service="a"), text_turn("finish", answer="a is broken")])
    resumed = await Agent(llm=second, tools=tools, budget=Budget(max_steps=5)).resume(
        RunResult.from_json(stopped.to_json())
    )
    second.assert_complete()
    assert resumed.ok
    # The history was rebuilt: the model saw step 1's observation, and repeating it was caught.
    assert "jumped from 0.10%" in second.requests[0].messages[-1].content
    assert resumed.steps[1].observation.startswith("[LoopGuard]")
    assert backend.metric_queries == [("a", "http_5xx_rate")]
    assert resumed.usage.turns == 3
