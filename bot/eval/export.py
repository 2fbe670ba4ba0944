"""`opsagent eval export --feedback DIR`: rated runs from the run store become scenario files `opsagent eval` runs,
closing the loop from production to the evaluation suite.

A run's recorded observations become its recordings and its recorded turns the script; the expected facts come
from the answer when it was rated 👍, or from the reason given with a 👎 (the corrected answer). The files are a
starting point for a person to review: the facts are the answer's distinctive terms, and a 👎 scenario's script
(the recorded investigation) reaches the rated-wrong answer, so it fails until a model does better.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from bot.eval.scenarios import load_scenario
from bot.runs.saved import readable_trace
from bot.store.protocol import RunStore
from bot.store.records import FeedbackRecord, Rating, RunRecord
from kernel import FINISH_TOOL, READ_OUTPUT_TOOL, RunResult

MAX_FACTS = 3
_DISTINCTIVE = re.compile(r"`([^`\n]{2,60})`|\b(?=[\w.-]{0,59}?\d|[\w.]{0,58}?[-_][\w.])[A-Za-z][\w.-]{0,58}\w\b")
"""A term worth expecting: code in backticks, or a name with a digit, a dash or an underscore (v2.14.0, orders-db),
each at most 60 characters: the bound keeps the search linear (a long word was rescanned from each letter)."""


async def rated_scenarios(store: RunStore, tool_names: Collection[str]) -> tuple[dict[str, str], list[str]]:
    """The scenario text of each rated run, by run id, and one line per rated run that cannot be one."""
    by_run: dict[str, list[FeedbackRecord]] = {}
    for rating in await store.rated_runs():
        by_run.setdefault(rating.run_id, []).append(rating)
    texts, skipped = {}, []
    for run_id, ratings in by_run.items():
        record = await store.get_run(run_id)
        trace = readable_trace(record) if record is not None else None
        if record is None or trace is None:
            skipped.append(f"{run_id}: its run or trace is not in the store")
            continue
        try:
            texts[run_id] = scenario_text(record, trace, ratings, tool_names)
        except ValueError as exc:
            skipped.append(f"{run_id}: {exc}")
    return texts, skipped


def write_scenarios(texts: dict[str, str], directory: Path, tool_names: Collection[str]) -> list[Path]:
    """Write each scenario as `feedback-<run id>.toml` (replaced if there), each checked by loading it back."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for run_id, text in texts.items():
        path = directory / f"feedback-{run_id}.toml"
        path.write_text(text, encoding="utf-8")
        load_scenario(path, tool_names)  # what was written must run: a failure here is a bug of ours, and loud
        written.append(path)
    return written


def scenario_text(
    record: RunRecord, trace: RunResult, ratings: Sequence[FeedbackRecord], tool_names: Collection[str]
) -> str:
    """The scenario of one rated run as TOML; a ValueError says why it cannot be one."""
    corrections = [r for r in ratings if r.rating is Rating.DOWN and r.reason.strip()]
    down = sum(r.rating is Rating.DOWN for r in ratings)
    up = len(ratings) - down
    if corrections:
        expected, source = corrections[0].reason, f"the correction given with a 👎 by {corrections[0].user}"
    elif up > down and trace.answer:
        expected, source = (trace.findings.root_cause if trace.findings else "") or trace.answer, "the 👍-rated answer"
    else:
        raise ValueError("rated 👎 without a reason: there is no corrected answer to expect")
    turns, recordings, calls, dropped = _recorded(trace, tool_names)
    if not recordings:
        raise ValueError("it made no tool call the evaluation's catalogue has, so there is nothing to replay")
    answer = trace.answer or trace.partial_answer or f"(the run ended without an answer: {trace.stop_reason.value})"
    turns.append({"thought": "", "tool": FINISH_TOOL, "args": {"answer": answer}})
    lines = [
        f"# Exported from run {record.run_id} by `opsagent eval export --feedback`: review it before adding it to",
        f"# evals/scenarios. The expected facts are the distinctive terms of {source}.",
        *(
            ["# A 👎 run's script replays its recorded, rated-wrong investigation: it fails until a model does better."]
            if corrections
            else []
        ),
        *([f"# Left out (not in the evaluation's catalogue): {', '.join(sorted(dropped))}."] if dropped else []),
        f"title = {_toml(f'From production: {_flat(record.task)[:100]}')}",
        f"task = {_toml(record.task)}",
        *([f"data = {_toml(record.task_data)}"] if record.task_data else []),
        f"repos = {_toml(_repos(trace))}",
        "",
        "[expect]",
        f"facts = {_toml(_facts(expected))}",
        *([f"calls = {_toml(calls)}"] if calls and not corrections else []),
    ]
    for recording in recordings:
        lines += ["", "[[recordings]]", *(f"{key} = {_toml(value)}" for key, value in recording.items())]
    for turn in turns:
        lines += ["", "[[script]]", *(f"{key} = {_toml(value)}" for key, value in turn.items())]
    return "\n".join(lines) + "\n"


def _recorded(
    trace: RunResult, tool_names: Collection[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], set[str]]:
    """The script's turns, the recordings (each call's recorded output or failure), the successful read-only calls,
    and the tools left out."""
    turns, recordings, calls, dropped = [], [], [], set()
    for step in trace.steps:
        call = step.call
        if call is None or call.name == FINISH_TOOL:
            continue
        if call.name != READ_OUTPUT_TOOL and call.name not in tool_names:
            dropped.add(call.name)
            continue
        args = _plain(call.args)
        turns.append({"thought": step.thought, "tool": call.name, "args": args})
        if call.name == READ_OUTPUT_TOOL or step.approval is not None:
            continue  # read_output reads the run's own outputs; a side effect is previewed, never recorded
        output = trace.full_output(step)
        recordings.append({"tool": call.name, "args": args, "error" if step.error else "output": output})
        if step.error is None:
            calls.append({"tool": call.name, "args": args})
    return turns, recordings, calls, dropped


def _facts(expected: str) -> list[dict[str, Any]]:
    terms = list(dict.fromkeys(m.group(1) or m.group(0) for m in _DISTINCTIVE.finditer(expected)))[:MAX_FACTS]
    if terms:
        return [{"about": f"names {term}", "any_of": [re.escape(term)]} for term in terms]
    return [{"about": "the expected answer", "any_of": [re.escape(_flat(expected)[:200])]}]


def _repos(trace: RunResult) -> list[str]:
    named = [str(s.call.args["repo"]) for s in trace.steps if s.call and isinstance(s.call.args.get("repo"), str)]
    return list(dict.fromkeys(named)) or ["service"]


def _plain(args: dict[str, Any]) -> dict[str, Any]:
    """Arguments as TOML can hold them: no nulls, no NaN."""
    return {k: v for k, v in args.items() if v is not None and not (isinstance(v, float) and not math.isfinite(v))}


def _toml(value: Any) -> str:
    """A TOML value: strings as basic strings (JSON's escapes are TOML's), lists, inline tables."""
    match value:
        case bool():
            return "true" if value else "false"
        case int() | float():
            return json.dumps(value)
        case str():
            return json.dumps(value, ensure_ascii=False)
        case list() | tuple():
            return "[" + ", ".join(_toml(item) for item in value if item is not None) + "]"
        case dict():
            pairs = ", ".join(f"{json.dumps(str(k))} = {_toml(v)}" for k, v in value.items() if v is not None)
            return "{ " + pairs + " }" if pairs else "{}"
        case _:
            return json.dumps(str(value), ensure_ascii=False)


def _flat(text: str) -> str:
    return " ".join(text.split())
