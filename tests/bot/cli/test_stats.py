"""`opsagent stats`: a directory of traces summarised; files that are not traces are skipped, never fatal."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.cli.stats import NO_ACTION, percentile, summarise
from kernel import (
    ApprovalRecord,
    ErrorKind,
    FinishedBy,
    RunResult,
    Step,
    StopReason,
    ToolCall,
    Usage,
    Verification,
    VerificationOutcome,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "traces"


def step(index: int, tool: str | None, error: ErrorKind | None = None, approval: str | None = None) -> Step:
    return Step(
        index=index,
        turn=index - 1,
        call=ToolCall(name=tool, args={}) if tool else None,
        observation="…",
        error=error,
        approval=ApprovalRecord(decision=approval, by="alice" if approval != "pending" else "") if approval else None,
    )


def trace(
    run_id: str,
    stop: StopReason,
    steps: list[Step],
    *,
    tokens: int,
    cost: float,
    seconds: float,
    by: FinishedBy = FinishedBy.FINISH,
) -> RunResult:
    usage = Usage(steps=len(steps), turns=len(steps), prompt_tokens=tokens, cost_usd=cost, elapsed_s=seconds)
    finished_by = by if stop is StopReason.FINISH else None
    return RunResult(run_id=run_id, task="t", stop_reason=stop, steps=steps, usage=usage, finished_by=finished_by)


TRACES = {
    "a.json": trace(
        "a",
        StopReason.FINISH,
        [step(1, "query_metrics"), step(2, "search_logs", ErrorKind.TIMEOUT), step(3, "finish")],
        tokens=1000,
        cost=0.01,
        seconds=2.0,
    ),
    "b.json": trace(
        "b",
        StopReason.MAX_STEPS,
        [step(1, "query_metrics", ErrorKind.BAD_ARGS), step(2, "query_metrics"), step(3, None, ErrorKind.FORMAT)],
        tokens=3000,
        cost=0.03,
        seconds=10.0,
    ),
    "nested/deeper/c.json": trace(
        "c",
        StopReason.AWAITING_APPROVAL,
        [step(1, "rollback_deployment", approval="pending")],
        tokens=500,
        cost=0.0,
        seconds=1.0,
    ),
    "nested/d.json": trace(
        "d",
        StopReason.FINISH,
        [
            step(1, "rollback_deployment", approval="approved"),
            step(2, "restart_service", ErrorKind.DENIED, approval="denied"),
            step(3, "finish"),
        ],
        tokens=1500,
        cost=0.02,
        seconds=4.0,
        by=FinishedBy.PROSE,
    )
    .verified(Verification(1, 1, datetime(2026, 12, 5, 14, 9, tzinfo=UTC), VerificationOutcome.HELD))
    .verified(Verification(1, 2, datetime(2026, 12, 5, 14, 22, tzinfo=UTC), VerificationOutcome.DID_NOT_HOLD)),
}
"""d's rollback held at its first check, not at its second: stats counts an action by its latest check."""
NOT_TRACES = {"config.json": '{"hello": "world"}', "broken.json": '{"schema_version": 1,', "list.json": "[1, 2]"}


@pytest.fixture
def traces_dir(tmp_path):
    root = tmp_path / "traces"
    for name, result in TRACES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(result.to_json())
    for name, text in NOT_TRACES.items():
        (root / name).write_text(text)
    (root / "notes.txt").write_text("not json, not looked at")
    return root


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_stats_json_counts_everything_exactly(capsys, traces_dir):
    code, out, err = cli(capsys, "stats", traces_dir, "--json")
    stats = json.loads(out)
    assert code == 0
    assert stats["runs"] == 4
    assert stats["ok"] == 2
    assert stats["success_rate"] == 0.5
    assert stats["finished_by"] == {"finish": 1, "prose": 1}
    assert stats["stop_reasons"] == {"finish": 2, "awaiting_approval": 1, "max_steps": 1}
    assert stats["steps"] == {"mean": 1.75, "p50": 2, "p95": 2}, (
        "tool steps: not the finish, not a reply without a call"
    )
    assert stats["prompt_tokens"] == {"total": 6000, "mean": 1500}
    assert stats["cost_usd"]["total"] == pytest.approx(0.06)
    assert stats["duration_s"] == {"mean": 4.25, "p95": 10.0}
    assert stats["approvals"] == {"approved": 1, "denied": 1, "pending": 1}
    assert stats["verifications"] == {"held": 0, "did_not_hold": 1, "inconclusive": 0, "not_verified": 0}
    assert stats["tools"] == {
        "query_metrics": {"calls": 3, "errors": 1, "error_rate": 1 / 3, "errors_by_kind": {"bad_args": 1}},
        "finish": {"calls": 2, "errors": 0, "error_rate": 0.0, "errors_by_kind": {}},
        "rollback_deployment": {"calls": 2, "errors": 0, "error_rate": 0.0, "errors_by_kind": {}},
        NO_ACTION: {"calls": 1, "errors": 1, "error_rate": 1.0, "errors_by_kind": {"format": 1}},
        "restart_service": {"calls": 1, "errors": 1, "error_rate": 1.0, "errors_by_kind": {"denied": 1}},
        "search_logs": {"calls": 1, "errors": 1, "error_rate": 1.0, "errors_by_kind": {"timeout": 1}},
    }
    assert len(stats["skipped"]) == 3
    warnings = err.strip().splitlines()
    assert len(warnings) == 3
    for name in NOT_TRACES:
        assert any(line.startswith(f"warning: {traces_dir / name} is not an OpsAgent trace") for line in warnings)


def test_stats_table_is_readable(capsys, traces_dir):
    code, out, _ = cli(capsys, "stats", traces_dir)
    lines = out.splitlines()
    assert code == 0
    assert lines[:10] == [
        "runs: 4 (3 files skipped)",
        "success: 2/4 (50.0%)",
        "finished by: finish 1 · prose 1",
        "stops: Finished with an answer (2) · Paused: waiting for an approval (1) · Stopped: the step budget ran out (1)",
        "steps: mean 1.8 · p50 2 · p95 2",
        "prompt tokens: total 6,000 · mean 1,500",
        "cost: $0.0600 total",
        "duration: mean 4.2 s · p95 10.0 s",
        "approvals: approved 1 · denied 1 · pending 1",
        "approved actions verified: held 0 · did not hold 1 · inconclusive 0 · not verified 0",
    ]
    assert lines[10].split() == ["tool", "calls", "errors", "rate", "by", "kind"]
    assert lines[11].split() == ["query_metrics", "3", "1", "33.3%", "bad_args", "1"]
    assert lines[13].split() == ["rollback_deployment", "2", "0", "0.0%", "-"]


def test_stats_reads_the_trace_corpus_of_every_version(capsys, tmp_path):
    for path in FIXTURES.glob("*.json"):
        shutil.copy(path, tmp_path / path.name)
    code, out, _ = cli(capsys, "stats", tmp_path, "--json")
    stats = json.loads(out)
    assert code == 0
    assert stats["runs"] == 4
    assert stats["stop_reasons"] == {"finish": 3, "awaiting_approval": 1}
    assert stats["finished_by"] == {"finish": 3, "prose": 0}, "a v1 run finished by a finish call"
    assert stats["approvals"] == {"approved": 2, "denied": 0, "pending": 1}
    assert stats["steps"] == {"mean": 3.5, "p50": 3, "p95": 5}, "5, 3, 4 and 2 tool calls besides the finish"
    assert stats["verifications"] == {"held": 1, "did_not_hold": 0, "inconclusive": 0, "not_verified": 0}


def test_an_empty_directory_says_so(capsys, tmp_path):
    code, out, _ = cli(capsys, "stats", tmp_path)
    assert (code, out.strip()) == (0, "no traces found")


def test_a_missing_directory_is_a_usage_error(capsys, tmp_path):
    code, _, err = cli(capsys, "stats", tmp_path / "nope")
    assert code == 2
    assert "is not a directory" in err


def test_nearest_rank_percentiles():
    assert percentile([], 95) is None
    assert percentile([7], 50) == 7
    assert percentile([1, 2, 3, 4], 50) == 2
    assert percentile(list(range(1, 101)), 95) == 95
    assert percentile([10.0, 1.0, 4.0, 2.0], 95) == 10.0


def test_summarise_without_traces_has_no_rates():
    stats = summarise([])
    assert stats.success_rate is None
    assert stats.to_dict()["steps"] == {"mean": None, "p50": None, "p95": None}
