"""`opsagent eval export --feedback DIR`: rated runs from the run store become scenario files `opsagent eval` runs,
closing the loop from production to the evaluation suite.

A run's recorded observations become its recordings and its recorded turns the script; the expected facts come
from the answer when it was rated 👍, or from the reason given with a 👎 (the corrected answer). The files are a
starting point for a person to review: the facts are the answer's distinctive terms, and a 👎 scenario's script
(the recorded investigation) reaches the rated-wrong answer, so it fails until a model does better.

Recorded text is anything a tool, a model or a person wrote: every string is written as a TOML basic string with
each control character escaped, and each file is written whole or not at all (staged, loaded back, then moved into
place), so one run that cannot be written is reported and the others are exported all the same.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.eval.scenarios import load_scenario
from bot.runs.saved import readable_trace
from bot.store.ports import FeedbackStore, RunLookup
from bot.store.records import FeedbackRecord, Rating, RunRecord
from kernel import FINISH_TOOL, READ_OUTPUT_TOOL, RunResult

MAX_FACTS = 3
_DISTINCTIVE = re.compile(r"`([^`\n]{2,60})`|\b(?=[\w.-]{0,59}?\d|[\w.]{0,58}?[-_][\w.])[A-Za-z][\w.-]{0,58}\w\b")
"""A term worth expecting: code in backticks, or a name with a digit, a dash or an underscore (v2.14.0, orders-db),
each at most 60 characters: the bound keeps the search linear (a long word was rescanned from each letter)."""
_RUN_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")
"""A run id that can name a file as it is (the kernel's are hex)."""
_BASIC_STRING = {
    **{code: f"\\u{code:04X}" for code in (*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029)},
    **str.maketrans({'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}),
    **dict.fromkeys(range(0xD800, 0xE000), "\ufffd"),
}
"""A TOML basic string's escapes: every C0 and C1 control character and DEL (TOML allows none raw but the tab; the C1
ones and the line and paragraph separators are allowed, yet a terminal or an editor acts on them); a lone surrogate,
which no UTF-8 file can hold, becomes U+FFFD, the replacement character (a run store cannot hold one either)."""


@dataclass(frozen=True)
class NotExported:
    """A rated run left out, and why in a person's words: `failed` when its scenario should have been written (its
    file could not be), not when the run cannot be a scenario (a 👎 without a reason)."""

    run_id: str
    why: str
    failed: bool = False


async def rated_scenarios(
    feedback: FeedbackStore, runs: RunLookup, tool_names: Collection[str]
) -> tuple[dict[str, str], list[NotExported]]:
    """The scenario text of each rated run, by run id, and the rated runs that cannot be one."""
    by_run: dict[str, list[FeedbackRecord]] = {}
    for rating in await feedback.rated_runs():
        by_run.setdefault(rating.run_id, []).append(rating)
    texts, left_out = {}, []
    for run_id, ratings in by_run.items():
        record = await runs.get_run(run_id)
        trace = readable_trace(record) if record is not None else None
        if record is None or trace is None:
            left_out.append(NotExported(run_id, "its run or trace is not in the store"))
            continue
        try:
            texts[run_id] = scenario_text(record, trace, ratings, tool_names)
        except ValueError as exc:
            left_out.append(NotExported(run_id, str(exc)))
    return texts, left_out


def write_scenarios(
    texts: dict[str, str], directory: Path, tool_names: Collection[str]
) -> tuple[list[Path], list[NotExported]]:
    """Write each scenario as `feedback-<run id>.toml`, replacing an older one only once the new one loads back;
    the files written, and the runs whose file could not be (no part of theirs is left behind)."""
    directory.mkdir(parents=True, exist_ok=True)
    written, failed = [], []
    # Staged beside the files, so that moving one into place is a rename within one file system: atomic.
    with tempfile.TemporaryDirectory(prefix=".export-", dir=directory) as staging:
        for run_id, text in texts.items():
            if not _RUN_ID.fullmatch(run_id):
                failed.append(NotExported(run_id, "its run id cannot name a file", failed=True))
                continue
            path = directory / f"feedback-{run_id}.toml"
            try:
                _write_checked(text, Path(staging) / path.name, path, tool_names)
            except OSError as exc:
                failed.append(NotExported(run_id, f"could not write {path}: {exc.strerror or exc}", failed=True))
            except ValueError as exc:
                problem = " ".join(str(exc).removeprefix(f"{staging}{os.sep}").split())
                why = f"its scenario does not load back ({problem}); this is a bug in OpsAgent, please report it"
                failed.append(NotExported(run_id, why, failed=True))
            else:
                written.append(path)
    return written, failed


def _write_checked(text: str, staged: Path, path: Path, tool_names: Collection[str]) -> None:
    """Write `text` to `staged`, flushed to disk, load it as a scenario, then move it to `path`."""
    try:
        with staged.open("w", encoding="utf-8", newline="\n") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        load_scenario(staged, tool_names)  # what is exported must run
        os.replace(staged, path)
    finally:
        staged.unlink(missing_ok=True)


def scenario_text(
    record: RunRecord, trace: RunResult, ratings: Sequence[FeedbackRecord], tool_names: Collection[str]
) -> str:
    """The scenario of one rated run as TOML; a ValueError says why it cannot be one."""
    corrections = [r for r in ratings if r.rating is Rating.DOWN and r.reason.strip()]
    down = sum(r.rating is Rating.DOWN for r in ratings)
    up = len(ratings) - down
    if corrections:
        expected, source = corrections[0].reason, f"the correction given with a 👎 by {_toml(corrections[0].user)}"
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
        *(
            [f"# Left out (not in the evaluation's catalogue): {', '.join(map(_toml, sorted(dropped)))}."]
            if dropped
            else []
        ),
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
    """A TOML value: strings as basic strings, lists, inline tables (nulls left out); anything else as its text."""
    match value:
        case bool():
            return "true" if value else "false"
        case int():
            return str(value)
        case float():
            return repr(value) if math.isfinite(value) else str(value)  # nan, inf, -inf: TOML's words too
        case str():
            return toml_string(value)
        case list() | tuple():
            return "[" + ", ".join(_toml(item) for item in value if item is not None) + "]"
        case dict():
            pairs = ", ".join(f"{toml_string(str(k))} = {_toml(v)}" for k, v in value.items() if v is not None)
            return "{ " + pairs + " }" if pairs else "{}"
        case _:
            return toml_string(str(value))


def toml_string(text: str) -> str:
    """`text` as a TOML basic string that loads back as `text`, on one line, with no control character in it
    (but a lone surrogate, which becomes U+FFFD)."""
    return f'"{text.translate(_BASIC_STRING)}"'


def _flat(text: str) -> str:
    return " ".join(text.split())
