"""`opsagent eval`'s report for the terminal: one row per scenario, the reasons under each failure, totals.

The evaluation itself (`bot.eval`) returns data; this is only how the terminal shows it.
"""

from __future__ import annotations

from bot.cli.report import Mark, Part, Report, StatusLine, Table
from bot.eval.run import EVAL_POLICY, EvalReport
from bot.eval.scoring import Level
from bot.verdict import tool_steps

PROBLEM_CHARS = 220
"""A failure's reason is cut to one readable line."""


def render_report(report: EvalReport) -> Report:
    """The report's parts: one row per scenario, the reasons under each failure, then totals."""
    header = ["scenario", "answer", "tools", "path", "result", "steps", "tokens", "stop"]
    rows = [
        [
            outcome.scenario.name,
            *(f"{score.score:.2f}" for score in outcome.scores.by_level().values()),
            "pass" if outcome.passed else "FAIL",
            str(tool_steps(outcome.result.steps)),
            f"{outcome.result.usage.prompt_tokens + outcome.result.usage.completion_tokens:,}",
            str(outcome.result.stop_reason),
        ]
        for outcome in report.outcomes
    ]
    lines: list[Part] = [
        f"evaluation of {len(report.outcomes)} scenarios with model {report.model or '(none)'}; "
        f"side effects {EVAL_POLICY.mode}: none was executed",
        Table(header, rows, right=(1, 2, 3, 5, 6)),
    ]
    for outcome in report.failed:
        lines.append(StatusLine(Mark.FAILED, f"{outcome.scenario.name}: {outcome.scenario.title}"))
        lines.extend(f"    {_cut(problem)}" for problem in outcome.scores.problems())
    means = " · ".join(f"{level} {report.mean(level):.2f}" for level in Level)
    tokens = sum(o.result.usage.prompt_tokens + o.result.usage.completion_tokens for o in report.outcomes)
    passed = len(report.outcomes) - len(report.failed)
    lines.append(
        f"total: {passed}/{len(report.outcomes)} passed (every level ≥ {report.min_score:g}) · mean {means} · "
        f"{sum(tool_steps(o.result.steps) for o in report.outcomes)} steps · {tokens:,} tokens "
        f"({report.mean_prompt_tokens():,.0f} prompt tokens per scenario)"
    )
    return lines


def _cut(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PROBLEM_CHARS else flat[: PROBLEM_CHARS - 1] + "…"
