"""Scoring an evaluated run at three levels: the answer, the tool calls, and the path taken.

Pure functions of the trace and the scenario's expectations, so each score can be checked in isolation
and a real model's run is scored exactly as a scripted one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bot.eval.scenarios import Expectations, ExpectedCall, ExpectedFact
from bot.verdict import tool_steps
from kernel import FINISH_TOOL, LOAD_TOOLS_TOOL, READ_OUTPUT_TOOL, RunResult, StopReason, ToolCall

KERNEL_TOOLS = frozenset({FINISH_TOOL, READ_OUTPUT_TOOL, LOAD_TOOLS_TOOL})
"""Offered on every turn of every run: never an unseen schema."""


class Level(StrEnum):
    """The three things an evaluation scores."""

    ANSWER = "answer"
    """The final answer states every expected fact."""
    TOOLS = "tools"
    """The expected calls were made (in order where it matters) and no forbidden tool was called."""
    PATH = "path"
    """No repeated call, no back-and-forth, no giving up early."""


@dataclass(frozen=True)
class LevelScore:
    """A score from 0 to 1 and the problems that lowered it, one line each."""

    score: float
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class Scores:
    """One run's scores at every level."""

    answer: LevelScore
    tools: LevelScore
    path: LevelScore

    def by_level(self) -> dict[Level, LevelScore]:
        """The scores keyed by level, in reporting order."""
        return {Level.ANSWER: self.answer, Level.TOOLS: self.tools, Level.PATH: self.path}

    def passed(self, min_score: float) -> bool:
        """Whether every level reaches `min_score`."""
        return all(level.score >= min_score for level in self.by_level().values())

    def problems(self) -> list[str]:
        """Every problem, prefixed with its level."""
        return [f"{level}: {problem}" for level, score in self.by_level().items() for problem in score.problems]


def value_matches(expected: Any, actual: Any) -> bool:
    """Strings match case-insensitively and ignoring surrounding space; other values must be equal."""
    if isinstance(expected, str) and isinstance(actual, str):
        return expected.strip().casefold() == actual.strip().casefold()
    return bool(expected == actual)


def args_match(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> bool:
    """Whether `actual` holds every expected argument with a matching value (a subset match)."""
    return all(name in actual and value_matches(value, actual[name]) for name, value in expected.items())


def calls_of(result: RunResult) -> list[tuple[int, ToolCall]]:
    """The run's tool calls with their step numbers, finish left out."""
    return [(step.index, step.call) for step in result.steps if step.call is not None and step.call.name != FINISH_TOOL]


def score_run(result: RunResult, expect: Expectations) -> Scores:
    """All three levels for one run."""
    calls = [call for _, call in calls_of(result)]
    return Scores(
        answer=score_answer(result.answer, expect.facts, stop=result.stop_reason),
        tools=score_tools(calls, expect),
        path=score_path(result, expect.calls),
    )


def score_answer(answer: str | None, facts: Sequence[ExpectedFact], *, stop: StopReason) -> LevelScore:
    """The share of expected facts the answer states; no answer scores 0."""
    if answer is None:
        return LevelScore(0.0, (f"no final answer (stop: {stop})",))
    missing = [fact for fact in facts if not any(re.search(p, answer, re.IGNORECASE) for p in fact.any_of)]
    problems = tuple(f"missing fact: {fact.about} (any of {', '.join(fact.any_of)})" for fact in missing)
    return LevelScore(_share(len(facts) - len(missing), len(facts)), problems)


def score_tools(calls: Sequence[ToolCall], expect: Expectations) -> LevelScore:
    """Matched expected calls over expected calls plus forbidden calls made."""
    unmatched = (
        _unmatched_in_order(calls, expect.calls) if expect.ordered else _unmatched_any_order(calls, expect.calls)
    )
    problems = [
        f"{'called out of order' if any(_matches(call, e) for call in calls) else 'never called'}: {_render(e)}"
        for e in unmatched
    ]
    forbidden = [call for call in calls if call.name in expect.forbidden]
    problems += [f"called a forbidden tool: {call.render()}" for call in forbidden]
    matched = len(expect.calls) - len(unmatched)
    return LevelScore(_share(matched, len(expect.calls) + len(forbidden)), tuple(problems))


def score_path(result: RunResult, expected: Sequence[ExpectedCall]) -> LevelScore:
    """0 for giving up early (no finish, or a finish before the expected calls); otherwise the share of
    calls that were not wasted on a repeat or a back-and-forth, nor made blind (before their schema was offered)."""
    numbered = calls_of(result)
    if result.stop_reason is not StopReason.FINISH:
        detail = f" ({result.detail})" if result.detail else ""
        return LevelScore(
            0.0, (f"gave up: stopped with {result.stop_reason}{detail} after {tool_steps(result.steps)} steps",)
        )
    missing = _unmatched_any_order([call for _, call in numbered], expected)
    if missing:
        names = ", ".join(_render(e) for e in missing)
        return LevelScore(
            0.0, (f"gave up early: finished after {tool_steps(result.steps)} steps without calling {names}",)
        )
    problems, wasted = [], set()
    first_seen: dict[str, int] = {}
    for step, call in numbered:
        if call.key in first_seen:
            problems.append(f"redundant: step {step} repeats step {first_seen[call.key]}: {call.render()}")
            wasted.add(step)
        first_seen.setdefault(call.key, step)
    for i in range(len(numbered) - 3):
        (s1, a), (_, b), (_, a2), (s4, b2) = numbered[i : i + 4]
        if a.key == a2.key and b.key == b2.key and a.key != b.key:
            problems.append(f"back-and-forth: steps {s1}-{s4} alternate {a.render()} and {b.render()}")
            wasted.update(step for step, _ in numbered[i + 2 : i + 4])
    for step, name in unoffered_calls(result):
        problems.append(f"unseen schema: step {step} called {name} before the run offered its schema (load_tools)")
        wasted.add(step)
    return LevelScore(_share(len(numbered) - len(wasted), len(numbered)), tuple(problems))


def unoffered_calls(result: RunResult) -> list[tuple[int, str]]:
    """The steps that called a registered tool whose schema their turn's request did not carry (it was only in
    `load_tools`' index): dispatch runs such a call, but a model that makes it guessed the arguments. None in a
    trace from before tools were deferred (`offered` empty)."""
    if not result.offered:
        return []
    return [
        (step.index, step.call.name)
        for step in result.steps
        if step.call is not None
        and step.call.name not in KERNEL_TOOLS
        and step.turn < len(result.offered)
        and step.call.name not in result.offered[step.turn]
    ]


def _matches(call: ToolCall, expected: ExpectedCall) -> bool:
    return call.name == expected.tool and args_match(expected.args, call.args)


def _unmatched_in_order(calls: Sequence[ToolCall], expected: Sequence[ExpectedCall]) -> list[ExpectedCall]:
    """Expected calls not matched by a subsequence of `calls` in the given order (greedy)."""
    position, unmatched = 0, []
    for e in expected:
        found = next((i for i in range(position, len(calls)) if _matches(calls[i], e)), None)
        if found is None:
            unmatched.append(e)
        else:
            position = found + 1
    return unmatched


def _unmatched_any_order(calls: Sequence[ToolCall], expected: Sequence[ExpectedCall]) -> list[ExpectedCall]:
    """Expected calls without a distinct matching call, in any order."""
    free, unmatched = list(calls), []
    for e in expected:
        found = next((call for call in free if _matches(call, e)), None)
        if found is None:
            unmatched.append(e)
        else:
            free.remove(found)
    return unmatched


def _render(expected: ExpectedCall) -> str:
    return ToolCall(name=expected.tool, args=expected.args).render()


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 1.0
