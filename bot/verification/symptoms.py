"""Which read showed the symptom an action was for, and a check of the action made from reading it again.

The bot knows no backend: a `SymptomChecker` (the metrics family) says which reads it can run again and runs them;
what it found becomes the trace's `Verification`, in words any surface can show, redacted like every outside text.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from bot.words import NOTHING_TO_RECHECK
from kernel import DEFAULT_REDACTOR, RunResult, Step, ToolCall, Verification, VerificationOutcome
from opsagent_tools.metrics import SymptomCheck


class SymptomChecker(Protocol):
    """Reads a symptom again: the metrics family (`opsagent_tools.metrics.MetricsFamily`) is one."""

    def rechecks(self, call: ToolCall) -> bool:
        """Whether `call` is a read this checker can run again."""
        ...

    async def recheck(self, call: ToolCall, *, action_at: datetime) -> SymptomCheck:
        """Run `call` again and judge it against the symptom it showed before `action_at`; never raises."""
        ...


def symptom_read(result: RunResult, action: int, checker: SymptomChecker | None) -> Step | None:
    """The read that showed the symptom the action (step `action`) was for: of the successful reads before it that
    `checker` can run again, the first that the verdict cites as evidence, else the first; None when there is none."""
    if checker is None:
        return None
    reads = [s for s in result.steps if s.index < action and s.ok and s.call is not None and checker.rechecks(s.call)]
    check = result.evidence_check
    cited = [index for claim in check.evidence for index in claim.supported_by] if check is not None else []
    by_index = {read.index: read for read in reads}
    return next((by_index[index] for index in cited if index in by_index), reads[0] if reads else None)


async def check_action(
    result: RunResult,
    action: int,
    check: int,
    *,
    action_at: datetime,
    at: datetime,
    checker: SymptomChecker | None,
) -> Verification:
    """Check number `check` of the action at step `action`, which ran at `action_at`, made `at` a moment: its
    symptom read again (`symptom_read`), or `not_verified` when there is nothing to re-run."""
    read = symptom_read(result, action, checker)
    if read is None or read.call is None or checker is None:
        return Verification(action, check, at, VerificationOutcome.NOT_VERIFIED, detail=NOTHING_TO_RECHECK)
    found = await checker.recheck(read.call, action_at=action_at)
    return Verification(
        step=action,
        check=check,
        at=at,
        outcome=found.outcome,
        symptom_step=read.index,
        metric=DEFAULT_REDACTOR.redact(found.metric),
        before=found.value(found.before),
        now=found.value(found.now),
        baseline=found.baseline_range,
        sparkline=found.sparkline,
        detail=DEFAULT_REDACTOR.redact(found.detail),
    )


async def check_now(result: RunResult, *, at: datetime, checker: SymptomChecker | None) -> list[Verification]:
    """A check of each approved action of `result` that succeeded, made now (`at`), each numbered after the checks
    the trace holds already: what `opsagent verify` and a terminal run do. The action's time is its approval's."""
    made = []
    for action in result.actions_taken():
        if not action.ok:
            continue
        number = 1 + max((v.check for v in result.verifications if v.step == action.step), default=0)
        action_at = action.approved_at or result.started_at
        made.append(await check_action(result, action.step, number, action_at=action_at, at=at, checker=checker))
    return made
