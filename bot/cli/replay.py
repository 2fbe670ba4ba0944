"""`opsagent replay`: feed a trace's recorded model turns through today's kernel, tools and backends.

It shows step by step where behaviour diverges from the recording, so a kernel or tool change can be
checked against real runs; side effects are forced to dry runs, so a replay never acts on the world, and the
tools' clock is the recorded one, so time-relative output ("t-12m") reads as it did.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any, assert_never

from bot.agent import build_agent, opened_toolset
from bot.cli.report import Mark, Part, Report, StatusLine
from bot.settings import Settings
from kernel import (
    ChatRequest,
    ErrorKind,
    LLMError,
    LLMErrorKind,
    LLMResponse,
    RunControl,
    RunResult,
    SideEffectMode,
    SideEffectPolicy,
    Step,
    StopReason,
)

REPLAY_POLICY = SideEffectPolicy(mode=SideEffectMode.DRY_RUN)
"""Whatever the configuration says, a replay's side effects only report what they would do."""
DRY_RUN_PREFIX = "[DryRun]"
"""How dispatch begins the observation of a side effect it did not execute."""
ENDS_WITHOUT_A_TURN = frozenset(
    {
        StopReason.AWAITING_APPROVAL,
        StopReason.LLM_ERROR,
        StopReason.DEADLINE,
        StopReason.CANCELLED,
        StopReason.INTERNAL_ERROR,
    }
)
"""Recorded stops that leave no further model turn in the trace whatever the turns said: a replay that
uses every recorded turn and asks for one more has reached the point where the recording stopped."""
DIFF_LINES = 8
LINE_CHARS = 160
CALL_CHARS = 60


class StepStatus(StrEnum):
    """How one replayed step compares with the recorded step of the same index."""

    SAME = "same"
    CHANGED = "changed"
    """Same call and error kind, different observation text."""
    ERROR_CHANGED = "error_changed"
    """The step failed differently (or failed in one run only)."""
    CALL_CHANGED = "call_changed"
    """The kernel made a different call (name or arguments) of the same recorded turns."""
    DRY_RUN = "dry_run"
    """A side effect the replay did not execute: not a divergence, the replay policy."""
    MISSING = "missing"
    """Recorded, but the replay never got there."""
    EXTRA = "extra"
    """Replayed, but not in the recording."""


DIVERGENT = frozenset(
    {StepStatus.CHANGED, StepStatus.ERROR_CHANGED, StepStatus.CALL_CHANGED, StepStatus.MISSING, StepStatus.EXTRA}
)


class ReplayModel:
    """Plays back recorded turns; a turn past the recording fails as an `LLMError`, so the run ends
    with `llm_error` (a stop the report explains) instead of crashing."""

    def __init__(self, turns: Sequence[LLMResponse], *, model: str, started_at: datetime | None = None) -> None:
        self._turns = list(turns)
        self._model = model
        self._started_at = started_at
        self.calls = 0
        self.exhausted_at: int | None = None
        """The 1-based number of the first turn asked for that the trace does not have."""

    def recorded_now(self) -> datetime:
        """The clock of the recording: when the last turn played back ended (the tools it asked for ran then),
        or when the run started; the wall clock for a trace from before turn times were recorded."""
        if self.calls and (turn := self._turns[self.calls - 1]).started_at is not None:
            return turn.started_at + timedelta(milliseconds=turn.ms)
        timed = any(turn.started_at is not None for turn in self._turns)
        return self._started_at if timed and self._started_at is not None else datetime.now(UTC)

    @property
    def model(self) -> str:
        """The recorded model's name, so prices and the trace match the recording."""
        return self._model

    async def complete(self, request: ChatRequest) -> LLMResponse:
        """The next recorded turn, whatever the request."""
        if self.calls >= len(self._turns):
            self.exhausted_at = self.calls + 1
            raise LLMError(
                LLMErrorKind.BAD_REQUEST,
                f"replay: the run needed model turn {self.calls + 1}, the trace has {len(self._turns)}",
            )
        self.calls += 1
        return self._turns[self.calls - 1].model_copy()  # the loop stamps its timing; the recording stays intact


@dataclass(frozen=True)
class StepDiff:
    """One step of the comparison."""

    index: int
    status: StepStatus
    recorded_call: str | None = None
    replayed_call: str | None = None
    recorded_error: ErrorKind | None = None
    replayed_error: ErrorKind | None = None
    note: str = ""
    diff: tuple[str, ...] = ()
    """A unified-diff excerpt, recorded (-) against replayed (+) observation."""
    similarity: float | None = None
    """0..1, for a changed observation."""

    @property
    def divergent(self) -> bool:
        """Whether this step counts against the replay."""
        return self.status in DIVERGENT


@dataclass(frozen=True)
class ReplayReport:
    """Where a replay diverged from its recording; `divergent` decides the exit code."""

    run_id: str
    task: str
    steps: tuple[StepDiff, ...]
    recorded_stop: StopReason
    replayed_stop: StopReason
    turns_recorded: int
    turns_used: int
    turns_needed: int | None
    """Set when the replay asked for a turn past the recording."""
    end: str
    """How the replay ended compared with the recording, in words."""
    end_diverges: bool
    policy: SideEffectMode = REPLAY_POLICY.mode
    notes: tuple[str, ...] = field(default=())

    @property
    def recorded_ok(self) -> bool:
        """Whether the recorded run finished."""
        return self.recorded_stop is StopReason.FINISH

    @property
    def replayed_ok(self) -> bool:
        """Whether the replayed run finished."""
        return self.replayed_stop is StopReason.FINISH

    @property
    def divergences(self) -> list[str]:
        """Every divergence, one line each."""
        lines = [f"step {d.index}: {d.status}" + (f" ({d.note})" if d.note else "") for d in self.steps if d.divergent]
        return [*lines, self.end] if self.end_diverges else lines

    @property
    def divergent(self) -> bool:
        """Whether anything diverged."""
        return bool(self.divergences)

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-able data."""
        return {
            "run_id": self.run_id,
            "task": self.task,
            "policy": str(self.policy),
            "divergent": self.divergent,
            "divergences": self.divergences,
            "turns": {"recorded": self.turns_recorded, "used": self.turns_used, "needed": self.turns_needed},
            "steps": [
                {
                    "index": d.index,
                    "status": str(d.status),
                    "recorded_call": d.recorded_call,
                    "replayed_call": d.replayed_call,
                    "recorded_error": d.recorded_error,
                    "replayed_error": d.replayed_error,
                    "note": d.note,
                    "diff": list(d.diff),
                    "similarity": d.similarity,
                }
                for d in self.steps
            ],
            "stop": {
                "recorded": str(self.recorded_stop),
                "replayed": str(self.replayed_stop),
                "recorded_ok": self.recorded_ok,
                "replayed_ok": self.replayed_ok,
                "diverges": self.end_diverges,
                "note": self.end,
            },
            "notes": list(self.notes),
        }


async def replay_trace(
    trace: RunResult, settings: Settings, *, environ: Mapping[str, str] = os.environ
) -> ReplayReport:
    """Re-run the trace's task with its recorded model turns on the configured tools and budget, with
    side effects forced to dry runs (no signing secret needed) and the tools' clock pinned to the one the run
    had (the configured recording's end, else the recorded turns' times), and compare the two runs."""
    model = ReplayModel(trace.turns, model=trace.model or "replay", started_at=trace.started_at)
    clock = None if settings.tools.recorded_at is not None else model.recorded_now
    async with opened_toolset(settings, policy=REPLAY_POLICY, environ=environ, now=clock) as toolset:
        # The summary turn of a failed run is not among the recorded turns: no salvage.
        agent = build_agent(settings, llm=model, tools=toolset.tools, policy=REPLAY_POLICY, salvage=False)
        control = RunControl()
        for taken in trace.guidance:  # what people said, given back before the turn that took it
            control.guide(taken.guidance, before_turn=taken.turn)
        replayed = await agent.run(trace.task, data=trace.task_data, run_id=trace.run_id, control=control)
        tools = toolset.tools
    side_effects = frozenset(tool.name for tool in tools if tool.side_effect)
    return compare_runs(trace, replayed, turns_needed=model.exhausted_at, side_effects=side_effects)


def compare_runs(
    recorded: RunResult, replayed: RunResult, *, turns_needed: int | None, side_effects: frozenset[str] = frozenset()
) -> ReplayReport:
    """Compare a recorded run with its replay, step by step and then how each ended."""
    count = max(len(recorded.steps), len(replayed.steps))
    steps = tuple(
        compare_step(
            i + 1,
            recorded.steps[i] if i < len(recorded.steps) else None,
            replayed.steps[i] if i < len(replayed.steps) else None,
            side_effects=side_effects,
        )
        for i in range(count)
    )
    end, end_diverges = _compare_end(recorded, replayed, turns_needed)
    if [(t.turn, t.step) for t in recorded.guidance] != [(t.turn, t.step) for t in replayed.guidance]:
        end, end_diverges = f"{end}; the guidance was taken at other steps", True
    if (offer := offer_changed(recorded, replayed)) is not None:
        end, end_diverges = f"{end}; {offer}", True
    notes = [f"side effects were forced to {REPLAY_POLICY.mode} for the replay: none was executed"]
    if recorded.partial_answer:
        notes.append("the recorded run's summary turn (partial answer) is not in its turns and was not replayed")
    return ReplayReport(
        run_id=recorded.run_id,
        task=recorded.task,
        steps=steps,
        recorded_stop=recorded.stop_reason,
        replayed_stop=replayed.stop_reason,
        turns_recorded=len(recorded.turns),
        turns_used=len(replayed.turns),
        turns_needed=turns_needed,
        end=end,
        end_diverges=end_diverges,
        notes=tuple(notes),
    )


def offer_changed(recorded: RunResult, replayed: RunResult) -> str | None:
    """The first turn whose request offered other tools in full than the recorded one did, in words; None when
    every turn both runs have offered the same (or the recording is from before offers were recorded)."""
    for turn, (was, now) in enumerate(zip(recorded.offered, replayed.offered, strict=False), start=1):
        if tuple(was) != tuple(now):
            gone, new = [name for name in was if name not in now], [name for name in now if name not in was]
            parts = [f"without {', '.join(gone)}" if gone else "", f"with {', '.join(new)}" if new else ""]
            return f"turn {turn} offered other tools in full ({'; '.join(part for part in parts if part)})"
    return None


def compare_step(
    index: int, recorded: Step | None, replayed: Step | None, *, side_effects: frozenset[str] = frozenset()
) -> StepDiff:
    """One step: the call (name and canonical arguments; native ids are ignored), then the error kind,
    then the observation text; a side effect the recording executed (or refused, or left pending) and the
    replay only previewed is `dry_run`."""
    rec_call = recorded.call.render() if recorded and recorded.call else None
    rep_call = replayed.call.render() if replayed and replayed.call else None
    common = {"index": index, "recorded_call": rec_call, "replayed_call": rep_call}
    if recorded is None:
        assert replayed is not None
        return StepDiff(**common, status=StepStatus.EXTRA, replayed_error=replayed.error, note="not in the recording")
    if replayed is None:
        return StepDiff(
            **common, status=StepStatus.MISSING, recorded_error=recorded.error, note="the replay never got here"
        )
    errors = {"recorded_error": recorded.error, "replayed_error": replayed.error}
    if (recorded.call.key if recorded.call else None) != (replayed.call.key if replayed.call else None):
        return StepDiff(**common, **errors, status=StepStatus.CALL_CHANGED, note=f"now {rep_call or 'no call'}")
    if (
        replayed.call is not None
        and replayed.call.name in side_effects
        and replayed.observation.startswith(DRY_RUN_PREFIX)
        and not recorded.observation.startswith(DRY_RUN_PREFIX)  # a recorded dry run compares as text
    ):
        note = f"side effect not executed in the replay; recorded: {_recorded_outcome(recorded)}"
        return StepDiff(**common, **errors, status=StepStatus.DRY_RUN, note=note)
    if recorded.error != replayed.error:
        note = f"{recorded.error or 'ok'} → {replayed.error or 'ok'}"
        diff = diff_excerpt(recorded.observation, replayed.observation)
        return StepDiff(**common, **errors, status=StepStatus.ERROR_CHANGED, note=note, diff=diff)
    if recorded.observation != replayed.observation:
        ratio = difflib.SequenceMatcher(None, recorded.observation, replayed.observation).ratio()
        diff = diff_excerpt(recorded.observation, replayed.observation)
        return StepDiff(
            **common,
            **errors,
            status=StepStatus.CHANGED,
            note=f"observation {ratio:.0%} similar",
            diff=diff,
            similarity=round(ratio, 3),
        )
    return StepDiff(**common, **errors, status=StepStatus.SAME)


def diff_excerpt(recorded: str, replayed: str, *, lines: int = DIFF_LINES) -> tuple[str, ...]:
    """The first changed lines, recorded (-) against replayed (+), each cut to a readable width."""
    body = list(difflib.unified_diff(recorded.splitlines(), replayed.splitlines(), n=0, lineterm=""))[2:]
    body = [line for line in body if not line.startswith("@@")]
    shown = [line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…" for line in body[:lines]]
    if len(body) > lines:
        shown.append(f"… {len(body) - lines} more changed lines")
    return tuple(shown)


def _recorded_outcome(step: Step) -> str:
    if step.approval is not None:
        match step.approval.decision:
            case "pending":
                return "pending approval"
            case "approved" | "denied" as decision:
                by = f" by {step.approval.by}" if step.approval.by else ""
                return f"{decision}{by}" + (f", {step.error}" if step.error else "")
            case _:
                assert_never(step.approval.decision)
    return f"refused ({step.error})" if step.error else "executed"


def _compare_end(recorded: RunResult, replayed: RunResult, turns_needed: int | None) -> tuple[str, bool]:
    """How the replay ended against the recording, and whether that is a divergence."""
    have = len(recorded.turns)
    if turns_needed is not None:
        if recorded.stop_reason in ENDS_WITHOUT_A_TURN:
            return (
                f"the replay used all {have} recorded turns and asked for another, where the recorded run "
                f"stopped ({recorded.stop_reason})",
                False,
            )
        return f"the run needed turn {turns_needed}, the trace has {have} (recorded stop: {recorded.stop_reason})", True
    if len(replayed.turns) < have:
        return (
            f"the replay stopped after {len(replayed.turns)} of {have} recorded turns: "
            f"{replayed.stop_reason}" + (f" ({replayed.detail})" if replayed.detail else ""),
            True,
        )
    if replayed.stop_reason != recorded.stop_reason:
        detail = f" ({replayed.detail})" if replayed.detail else ""
        return f"the stop changed: {recorded.stop_reason} → {replayed.stop_reason}{detail}", True
    return f"same stop: {recorded.stop_reason}", False


def render_report(report: ReplayReport) -> Report:
    """The report's parts: one row per step, diff excerpts under changed steps, then the end."""
    lines: list[Part] = [
        f"replay of run {report.run_id}: {_cut(report.task, 100)}",
        *(StatusLine(Mark.NOTE, note) for note in report.notes),
    ]
    width = max([len(str(s)) for s in StepStatus] + [6])
    lines.append(f"{'step':>4}  {'status':<{width}}  {'call':<{CALL_CHARS}}  note")
    for d in report.steps:
        call = _cut(d.recorded_call or d.replayed_call or "(no call)", CALL_CHARS)
        lines.append(f"{d.index:>4}  {d.status!s:<{width}}  {call:<{CALL_CHARS}}  {d.note}".rstrip())
        lines.extend(f"{'':>6}{line}" for line in d.diff)
    ok = {True: "ok", False: "not ok"}
    lines.append(
        f"stop: recorded {report.recorded_stop} ({ok[report.recorded_ok]}), replayed {report.replayed_stop} "
        f"({ok[report.replayed_ok]}); turns: {report.turns_used} of {report.turns_recorded} recorded used"
    )
    lines.append(StatusLine(Mark.FAILED if report.end_diverges else Mark.OK, report.end, indent=2))
    count = len(report.divergences)
    lines.append(f"result: {count} divergence{'s' if count != 1 else ''}" if count else "result: no divergence")
    return lines


def _cut(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
