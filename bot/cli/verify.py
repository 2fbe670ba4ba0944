"""Verifying approved actions from the terminal: `opsagent verify RUN_ID|TRACE` checks a run's actions now, and after
`investigate` an action approved at the terminal is checked `[verification] after_s` later when that is a minute or
less (the session waits), or the terminal says how to check it later.

A check is recorded where the run is: in the trace file, or in the run store's trace and audit log.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

from bot.agent import symptom_checker
from bot.audit.trail import AuditTrail
from bot.cli.kept import RunKeeper
from bot.cli.report import Mark, Report, StatusLine
from bot.cli.session import save_trace
from bot.cli.stored import existing_store, names_a_trace_file
from bot.cli.terminal import Terminal
from bot.runs.saved import readable_trace
from bot.settings import Settings
from bot.store.protocol import RunStore
from bot.store.records import utc_now
from bot.verdict import call_words
from bot.verification.service import audit_check
from bot.verification.symptoms import SymptomChecker, check_now
from bot.words import plain_moment, verification_words
from kernel import RunResult, Verification, VerificationOutcome, load_trace

WAIT_LIMIT_S = 60.0
"""`investigate` waits for the first check of an action approved at the terminal when it is due this soon or sooner."""
MARKS = {
    VerificationOutcome.HELD: Mark.OK,
    VerificationOutcome.DID_NOT_HOLD: Mark.FAILED,
    VerificationOutcome.INCONCLUSIVE: Mark.WARNING,
    VerificationOutcome.NOT_VERIFIED: Mark.WARNING,
}


async def verify(settings: Settings, target: str, terminal: Terminal) -> int:
    """Check now each approved action of the run `target` names (a trace file, else a run id in the run store) that
    succeeded, say what each check found, and record it with the run; 0 when every one held, else 1."""
    checker = symptom_checker(settings)
    if names_a_trace_file(target):
        path = Path(target)
        trace = load_trace(path)
        made = await _checked(trace, checker, terminal)
        if made:
            save_trace(_with(trace, made), path, terminal)
    else:
        async with existing_store(settings) as store:
            record = await store.runs.get_run(target)
            trace = readable_trace(record) if record is not None else None
            if trace is None:
                raise ValueError(
                    f"no run {target} with a readable trace in the run store: `opsagent memory list` shows finished "
                    "runs' ids, and a trace file (traces/<run id>.json) works too"
                )
            made = await _checked(trace, checker, terminal)
            await _record(store, trace.run_id, made, terminal)
    return 0 if made and all(v.outcome is VerificationOutcome.HELD for v in made) else 1


async def after_the_run(
    result: RunResult,
    settings: Settings,
    terminal: Terminal,
    *,
    checker: SymptomChecker | None,
    saved: Path,
    keeper: RunKeeper | None,
) -> RunResult:
    """After a terminal run whose approved actions succeeded: wait for their first check when it is due within a
    minute, say it and record it (the trace file `saved`, and the run store when `keeper` kept the run there); else
    say how to check them later. The run, with its checks."""
    checks = settings.verification
    actions = [action for action in result.actions_taken() if action.ok]
    if not checks.enabled or not actions:
        return result
    later = f"opsagent verify {result.run_id if keeper is not None else saved}"
    ran_at = max(action.approved_at or result.started_at for action in actions)
    due = ran_at + timedelta(seconds=checks.after_s)
    if checks.after_s > WAIT_LIMIT_S:
        terminal.say(f"to verify the action once it has had time to work (from {plain_moment(due)}): {later}")
        return result
    wait = max((due - utc_now()).total_seconds(), 0.0)
    with terminal.working(f"verifying the action in {wait:.0f} s (Ctrl-C stops waiting; later: {later})"):
        await asyncio.sleep(wait)
    made = await _checked(result, checker, terminal)
    checked = _with(result, made)
    save_trace(checked, saved, terminal)
    if keeper is not None:
        await _record(keeper.store, checked.run_id, made, terminal)
    return checked


async def _checked(trace: RunResult, checker: SymptomChecker | None, terminal: Terminal) -> list[Verification]:
    """Check now each approved action of `trace` that succeeded, and show what each check found."""
    with terminal.working("reading the symptoms again…"):
        made = await check_now(trace, at=utc_now(), checker=checker)
    if not made:
        terminal.say(f"run {trace.run_id} has no approved action that ran: nothing to verify")
    terminal.report(checked_report(trace, made))
    return made


def checked_report(trace: RunResult, made: list[Verification]) -> Report:
    """Each check as a line: "✓ step 6 rollback_deployment order-service v2.13.2 · verified 14:09 UTC: … · held"."""
    calls = {step.index: call_words(step.call) for step in trace.steps if step.call is not None}
    return [
        StatusLine(MARKS[v.outcome], f"step {v.step} {calls.get(v.step, '')} · {verification_words(v)}") for v in made
    ]


async def _record(store: RunStore, run_id: str, made: list[Verification], terminal: Terminal) -> None:
    """Write the checks into the stored run's trace and its audit log; a run that is still going is told."""
    audit = AuditTrail(store.audit)
    for found in made:
        await audit_check(audit, run_id, found)
        if not await store.runs.record_verification(run_id, found):
            terminal.warn(f"opsagent: run {run_id} has not finished: the check is in its audit log, not its trace")
            return
    if made:
        terminal.say(f"recorded in the run store (run {run_id})", style="dim")


def _with(trace: RunResult, made: list[Verification]) -> RunResult:
    for found in made:
        trace = trace.verified(found)
    return trace
