"""One run, four surfaces, the same facts: Slack's summary, the terminal, the trace viewer and `opsagent stats` say
the same step count and the same stop title for a real run of the kernel (a scripted model, the tests' tools).

The runs hold what the surfaces used to count apart: a reply without a usable call, failed calls, the `finish`.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
import sys
from dataclasses import dataclass

from rich.console import Console

from bot.cli.terminal import Terminal
from bot.slack.blocks import no_step_urls
from bot.slack.summary import final_summary
from bot.verdict import verdict_of
from bot.viewer.page import run_page
from kernel import Agent, Budget, ErrorKind, RunFinished, RunResult, ScriptedModel, StopReason, text_turn
from samples.slack_messages import texts_of
from samples.trace_runs import incident_run

STOPPED_SCRIPT = [
    text_turn("query_metrics", "Start with the metrics.", service="order-service"),
    "I will look at the logs next.",  # no call: a format error, which spends a step of the budget
    text_turn("query_metrics", "The error rate alone."),  # no service: bad arguments
    text_turn("search_logs", "Then the logs.", service="order-service", query="bad"),
    text_turn("search_logs", "A narrower query.", service="order-service", query="upstream"),
    "5xx jumped at t-10m; the logs were not readable, so the cause is unchecked.",  # the salvage turn
]
STOPPED_TITLE = "Stopped: the step budget ran out"
OPSAGENT = os.path.join(os.path.dirname(sys.executable), "opsagent")


@dataclass(frozen=True)
class Said:
    """What one surface says of a run: its step count (every place it shows one) and its stop title, if any."""

    counts: tuple[int, ...]
    title: str | None


async def stopped_run(tools) -> RunResult:
    model = ScriptedModel(STOPPED_SCRIPT)
    result = await Agent(llm=model, tools=tools, budget=Budget(max_steps=5)).run("order-service 5xx, why?")
    model.assert_complete()
    return result


def slack(result: RunResult) -> Said:
    texts = texts_of(final_summary(verdict_of(result), step_url=no_step_urls))
    footer = next(text for text in texts if re.search(r"\d+ steps? · ", text))
    head = re.match(r"❌ \*(.+?)(?: — .*)?\*$", texts[0].splitlines()[0])
    return Said((int(re.match(r"(\d+) steps?", footer)[1]),), head[1] if head else None)


def terminal(result: RunResult) -> Said:
    shown = io.StringIO()
    view = Terminal(Console(file=shown, width=200, color_system=None))
    view.show(RunFinished(result))
    lines = shown.getvalue().splitlines()
    footer = next(line for line in lines if re.match(r"\d+ steps? · ", line))
    head = re.match(r"■ (.+?)(?: \(.*\))?$", lines[0])
    title = head[1] if head and not lines[0].startswith("■ finished") else None
    return Said((int(re.match(r"(\d+) steps?", footer)[1]),), title)


def viewer(result: RunResult) -> Said:
    page = run_page(result)
    header = re.search(r'<h2>Steps <span class="meta">\((\d+)', page)
    usage = re.search(r"<th>Steps</th><td>(\d+)</td>", page)
    head = re.search(r'<section class="box failed" id="outcome"><p class="label">(.+?) <code>', page)
    return Said((int(header[1]), int(usage[1])), head[1] if head else None)


async def stats(result: RunResult, tmp_path) -> Said:
    """`opsagent stats` run as a person runs it, over a directory holding the run's trace."""
    (tmp_path / f"{result.run_id}.json").write_text(result.to_json())
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPSAGENT_") and k not in ("NO_COLOR", "COLUMNS")}
    proc = await asyncio.create_subprocess_exec(
        OPSAGENT, "stats", str(tmp_path), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env
    )
    async with asyncio.timeout(60):
        out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    lines = out.decode().splitlines()
    steps = re.fullmatch(
        r"steps: mean (\d+)\.0 · p50 (\d+) · p95 (\d+)", next(x for x in lines if x.startswith("steps:"))
    )
    stops = re.fullmatch(r"stops: (.+) \(1\)", next(x for x in lines if x.startswith("stops:")))
    return Said(tuple(int(n) for n in steps.groups()), stops[1])


async def surfaces(result: RunResult, tmp_path) -> dict[str, Said]:
    return {
        "slack": slack(result),
        "terminal": terminal(result),
        "viewer": viewer(result),
        "stats": await stats(result, tmp_path),
    }


def counted(steps: int) -> dict[str, tuple[int, ...]]:
    """`steps` in every place a surface shows a step count: Slack's and the terminal's footers, the viewer's timeline
    header and usage table, and stats' mean, median and 95th percentile (of one run)."""
    return {"slack": (steps,), "terminal": (steps,), "viewer": (steps, steps), "stats": (steps, steps, steps)}


async def test_a_stopped_run_has_one_step_count_and_one_stop_title_everywhere(tools, tmp_path):
    result = await stopped_run(tools)
    assert result.stop_reason is StopReason.MAX_STEPS
    assert [s.error for s in result.steps] == [None, ErrorKind.FORMAT, ErrorKind.BAD_ARGS, ErrorKind.EXCEPTION, None]
    assert result.usage.steps == 5, "the budget spent a step on the reply without a call"
    said = await surfaces(result, tmp_path)
    assert {surface: s.counts for surface, s in said.items()} == counted(4), "4 tool calls"
    assert {surface: s.title for surface, s in said.items()} == dict.fromkeys(said, STOPPED_TITLE)


async def test_a_finished_run_counts_its_tool_calls_not_its_finish(tools, tmp_path):
    result = await incident_run(tools)
    assert result.ok
    assert [s.call.name for s in result.steps if s.call] == [
        "query_metrics",
        "search_logs",
        "search_logs",
        "search_logs",
        "rollback_deployment",
        "finish",
    ]
    assert result.usage.steps == 6, "the budget spent a step on the finish"
    said = await surfaces(result, tmp_path)
    assert {surface: s.counts for surface, s in said.items()} == counted(5), "5 tool calls"
