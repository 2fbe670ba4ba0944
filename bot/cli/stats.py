"""`opsagent stats`: what a directory of saved traces says about the agent in use.

Runs, success, stop reasons, steps, tokens, cost, time, tool errors, approvals and whether approved actions held,
from the traces alone: no backend and no model is needed, and a file that is not a trace is skipped with a warning.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.cli.report import Part, Report, Table
from bot.verdict import tool_steps
from bot.words import stop_title
from kernel import FinishedBy, RunResult, StopReason, VerificationOutcome, load_trace

NO_ACTION = "(no usable action)"
"""The row for model turns that held no call (format errors): not a tool, but a failed step."""
APPROVAL_DECISIONS = ("approved", "denied", "pending")
FINISHED_BY = tuple(by.value for by in FinishedBy)
CHECK_OUTCOMES = tuple(outcome.value for outcome in VerificationOutcome)


@dataclass(frozen=True)
class ToolStats:
    """One tool's calls over all runs and its failures by error kind."""

    calls: int
    errors: dict[str, int]

    @property
    def error_count(self) -> int:
        """All failed calls."""
        return sum(self.errors.values())

    @property
    def error_rate(self) -> float:
        """Failed calls / calls."""
        return self.error_count / self.calls if self.calls else 0.0


@dataclass(frozen=True)
class TraceStats:
    """The summary of a set of traces."""

    runs: int
    ok: int
    finished_by: dict[str, int]
    """Finished runs by how they finished: a `finish` call, or a prose answer the model confirmed."""
    stop_reasons: dict[str, int]
    steps: list[int]
    """Steps per run, counted as every surface counts them (`bot.verdict.tool_steps`)."""
    prompt_tokens: list[int]
    cost_usd: float
    durations_s: list[float]
    tools: dict[str, ToolStats]
    approvals: dict[str, int]
    verifications: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CHECK_OUTCOMES, 0))
    """Approved actions by what their latest check found: held, did not hold, inconclusive, not verified."""
    skipped: list[str] = field(default_factory=list)
    """One line per file that was not a trace."""

    @property
    def success_rate(self) -> float | None:
        """Runs that finished / runs; None without runs."""
        return self.ok / self.runs if self.runs else None

    def to_dict(self) -> dict[str, Any]:
        """The summary as plain JSON-able data."""
        return {
            "runs": self.runs,
            "ok": self.ok,
            "success_rate": self.success_rate,
            "finished_by": self.finished_by,
            "stop_reasons": self.stop_reasons,
            "steps": {"mean": _mean(self.steps), "p50": percentile(self.steps, 50), "p95": percentile(self.steps, 95)},
            "prompt_tokens": {"total": sum(self.prompt_tokens), "mean": _mean(self.prompt_tokens)},
            "cost_usd": {"total": self.cost_usd},
            "duration_s": {"mean": _mean(self.durations_s), "p95": percentile(self.durations_s, 95)},
            "tools": {
                name: {
                    "calls": tool.calls,
                    "errors": tool.error_count,
                    "error_rate": tool.error_rate,
                    "errors_by_kind": tool.errors,
                }
                for name, tool in self.tools.items()
            },
            "approvals": self.approvals,
            "verifications": self.verifications,
            "skipped": self.skipped,
        }


def collect_stats(directory: Path, *, warn: Callable[[str], None]) -> TraceStats:
    """Summarise every `*.json` trace under `directory` (recursively); others are skipped through `warn`."""
    if not directory.is_dir():
        raise ValueError(f"{directory} is not a directory")
    traces, skipped = [], []
    for path in sorted(directory.rglob("*.json")):
        if not path.is_file():
            continue
        try:
            traces.append(load_trace(path))
        except ValueError as exc:
            skipped.append(str(exc))
            warn(f"warning: {exc}; skipped")
    return summarise(traces, skipped=skipped)


def summarise(traces: Sequence[RunResult], *, skipped: Sequence[str] = ()) -> TraceStats:
    """The summary of loaded traces (pure)."""
    stops = Counter(str(t.stop_reason) for t in traces)
    calls: Counter[str] = Counter()
    errors: dict[str, Counter[str]] = {}
    approvals = dict.fromkeys(APPROVAL_DECISIONS, 0)
    finished_by = dict.fromkeys(FINISHED_BY, 0)
    verifications = dict.fromkeys(CHECK_OUTCOMES, 0)
    for trace in traces:
        latest = {check.step: check for check in sorted(trace.verifications, key=lambda check: check.check)}
        for check in latest.values():
            verifications[check.outcome] += 1
        if trace.ok and trace.finished_by is not None:
            finished_by[trace.finished_by] += 1
        for step in trace.steps:
            name = step.call.name if step.call else NO_ACTION
            calls[name] += 1
            kinds = errors.setdefault(name, Counter())
            if step.error is not None:
                kinds[str(step.error)] += 1
            if step.approval is not None:
                approvals[step.approval.decision] += 1
    return TraceStats(
        runs=len(traces),
        ok=sum(t.ok for t in traces),
        finished_by=finished_by,
        stop_reasons=dict(sorted(stops.items(), key=lambda kv: (-kv[1], kv[0]))),
        steps=[tool_steps(t.steps) for t in traces],
        prompt_tokens=[t.usage.prompt_tokens for t in traces],
        cost_usd=sum(t.usage.cost_usd for t in traces),
        durations_s=[t.usage.elapsed_s for t in traces],
        tools={
            name: ToolStats(calls=count, errors=dict(sorted(errors[name].items(), key=lambda kv: (-kv[1], kv[0]))))
            for name, count in sorted(calls.items(), key=lambda kv: (-kv[1], kv[0]))
        },
        approvals=approvals,
        verifications=verifications,
        skipped=list(skipped),
    )


def percentile(values: Sequence[float], p: float) -> float | None:
    """The nearest-rank percentile (a value that occurred); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(1, math.ceil(p / 100 * len(ordered))) - 1]


def render_stats(stats: TraceStats) -> Report:
    """The summary as a report: headline numbers, then a table of tools."""
    skipped = f" ({len(stats.skipped)} file{'s' if len(stats.skipped) != 1 else ''} skipped)" if stats.skipped else ""
    if not stats.runs:
        return [f"no traces found{skipped}"]
    data = stats.to_dict()
    steps, tokens, duration = data["steps"], data["prompt_tokens"], data["duration_s"]
    lines: list[Part] = [
        f"runs: {stats.runs}{skipped}",
        f"success: {stats.ok}/{stats.runs} ({stats.ok / stats.runs:.1%})",
        "finished by: " + " · ".join(f"{how} {count}" for how, count in stats.finished_by.items()),
        "stops: "
        + " · ".join(
            f"{stop_title(StopReason(reason)).said()} ({count})" for reason, count in stats.stop_reasons.items()
        ),
        f"steps: mean {steps['mean']:.1f} · p50 {steps['p50']} · p95 {steps['p95']}",
        f"prompt tokens: total {tokens['total']:,} · mean {tokens['mean']:,.0f}",
        *([f"cost: ${stats.cost_usd:.4f} total"] if stats.cost_usd else []),  # no price configured: no cost line
        f"duration: mean {duration['mean']:.1f} s · p95 {duration['p95']:.1f} s",
        "approvals: " + " · ".join(f"{decision} {count}" for decision, count in stats.approvals.items()),
        "approved actions verified: "
        + " · ".join(f"{outcome.replace('_', ' ')} {count}" for outcome, count in stats.verifications.items()),
    ]
    if stats.tools:
        rows = [
            [
                name,
                str(tool.calls),
                str(tool.error_count),
                f"{tool.error_rate:.1%}",
                ", ".join(f"{kind} {count}" for kind, count in tool.errors.items()) or "-",
            ]
            for name, tool in stats.tools.items()
        ]
        lines.append(Table(["tool", "calls", "errors", "rate", "by kind"], rows, right=(1, 2, 3)))
    return lines


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
