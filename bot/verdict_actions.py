"""Every side effect a run proposed, with what came of it, from its trace (never from what the model says): done,
failed, denied (by whom, why), expired, a dry run, refused by policy, waiting, or not run because the run ended
while it waited. One model for the verdict's actions on every surface, the by-hand next steps, a follow-up's
context and an approval card that says the same call already ran in its thread.

How the trace tells a side effect: a step with an approval record asked a person; a DENIED error comes only from
the side-effect gate (policy, or no approver); a dry run's observation begins with `DRY_RUN_PREFIX`, written only
by the dispatcher's stand-in. A side-effect call the run never dispatched (past the step budget, or in the turn the
run stopped) reached no gate and nobody: the kernel marks its step (`Step.side_effect`), and it did not run. A trace
written before that mark cannot tell such a call from a read: there it is not listed.

Plain facts and words, never mrkdwn nor HTML: each surface escapes them and names people its way (`Action.said`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, assert_never

from bot.words import BROKER_USER, RUN_STOPPED_REASON, is_expiry, plain_moment, stop_title
from kernel import (
    DRY_RUN_PREFIX,
    FINISH_TOOL,
    ApprovalRecord,
    ErrorKind,
    RunResult,
    Step,
    StopReason,
    ToolCall,
    Verification,
    denial_reason,
    visible_text,
)

CALL_CHARS = 80
"""A call in a few words is cut to this."""
OUTCOME_CHARS = 120
"""A step's outcome (its headline, or an excerpt of its observation) is cut to this."""
CUT_SHORT = "cut short: the run was stopped"
"""The outcome of a call the run's stop cut short (the kernel's observation is for the model)."""
_VALUE_CHARS = 40
NEVER_SENT = "the run ended before it ran"
"""The outcome of a side effect the run never dispatched: approved as the run stopped, or asked for past its step
budget."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """A side effect that did not run because its approval was refused: who refused it, when, and why. One fact for
    every surface (the approval's line in Slack, a step's line, the terminal, the viewer), each saying it its way.

    The trace keeps an expiry and a Stop as denials (by OpsAgent, or by whoever stopped the run) with their reason."""

    by: str
    """Who refused it: the approver who denied it, whoever stopped the run, `opsagent` for an expiry; "" if unknown."""
    at: datetime | None
    reason: str
    """Their reason ("not during peak traffic", "not approved within 15 min; treated as a denial"); may be ""."""

    def said(
        self,
        *,
        person: Callable[[str], str] = str,
        moment: Callable[[datetime], str] = plain_moment,
        text: Callable[[str], str] = str,
    ) -> str:
        """The refusal in a line: "denied by alice at 20:25 UTC: not during peak traffic". Each surface passes how it
        names a person (a Slack mention), says a moment (each reader's own time zone) and escapes the reason."""
        who = person(self.by) if self.by else "someone"
        at = f" at {moment(self.at)}" if self.at is not None else ""
        reason = " ".join(self.reason.split())
        return f"denied by {who}{at}" + (f": {text(reason)}" if reason else "")


def refusal_of(approval: ApprovalRecord | None) -> Refusal | None:
    """The refusal an approval record holds; None when it was approved, is pending, or there was none."""
    if approval is None or approval.decision != "denied":
        return None
    return Refusal(approval.by, approval.at, approval.reason)


class ActionState(StrEnum):
    """What became of a side effect the run proposed."""

    DONE = "done"
    """Approved, ran, and succeeded."""
    FAILED = "failed"
    """Approved and run, and it failed (or the run's stop cut it short)."""
    DENIED = "denied"
    """A person denied it."""
    EXPIRED = "expired"
    """Nobody decided in time."""
    DRY_RUN = "dry_run"
    """The `dry_run` policy: what it would do, not done."""
    REFUSED = "refused"
    """Refused before anyone was asked: the policy (`read_only`, not in the allowlist), no approver, an approval
    given for other arguments."""
    WAITING = "waiting"
    """The run is paused, waiting for its approval."""
    NOT_RUN = "not_run"
    """The run stopped or failed while it waited for its approval, or before it sent the call."""


DID_NOT_RUN = frozenset(
    {ActionState.DENIED, ActionState.EXPIRED, ActionState.DRY_RUN, ActionState.REFUSED, ActionState.NOT_RUN}
)
"""The states of a proposed side effect that did not happen: a person may want to do it by hand."""
_WHY_NOT_DONE = {
    ActionState.DENIED: "was denied",
    ActionState.EXPIRED: "expired",
    ActionState.DRY_RUN: "was a dry run",
    ActionState.REFUSED: "was refused",
    ActionState.NOT_RUN: "did not run",
}
"""Why a side effect that did not happen is left to a person, in a few words."""


@dataclass(frozen=True, slots=True)
class Action:
    """A side effect the run proposed, and what came of it."""

    step: int
    call: str
    """The call in a few words (`call_words`)."""
    state: ActionState
    tool: str
    args_hash: str
    """The hash of its canonical arguments: the same call has the same tool and hash."""
    approval: ApprovalRecord | None
    by: str
    """Who decided: the approver, the person who denied it or stopped the run; "" when nobody was asked."""
    at: datetime | None
    """When they decided."""
    outcome: str
    """What came of it in a line: a done action's headline ("rolled back checkout to v3.7.2: webhook 200"), a failure's
    first line, what a dry run would do, why it was refused, denied or not run; "" when there is nothing to add."""
    verified: Verification | None = None
    """Its latest check (did the symptom go away?), once one was made (`bot.words.verification_words` says it)."""

    @property
    def ok(self) -> bool:
        """Whether it ran and succeeded."""
        return self.state is ActionState.DONE

    @property
    def approved_by(self) -> str:
        """Who approved it; "" when nobody did."""
        return self.by if self.approval is not None and self.approval.decision == "approved" else ""

    def said(
        self,
        *,
        person: Callable[[str], str] = str,
        moment: Callable[[datetime], str] = plain_moment,
        text: Callable[[str], str] = str,
    ) -> str:
        """What came of it, in a line: "done, approved by bob at 19:16 UTC: rolled back …", "denied by bob at 19:16
        UTC: not now", "expired: not approved within 15 min; treated as a denial", "dry run, not done: would do …",
        "refused: side effects are disabled by policy (read_only)", "not run: the run was stopped while it waited for
        approval (stopped by bob at 19:16 UTC)". Each surface names a person, says a moment and escapes the outcome
        its way (`text`)."""
        who = f" by {person(self.by)}" if self.by else ""
        at = f" at {moment(self.at)}" if self.at is not None else ""
        outcome = f": {text(self.outcome)}" if self.outcome else ""
        match self.state:
            case ActionState.DONE:
                return f"done, approved{who}{at}{outcome}"
            case ActionState.FAILED:
                return f"failed, approved{who}{at}{outcome}"
            case ActionState.DENIED:
                return f"denied{who or ' by someone'}{at}{outcome}"
            case ActionState.EXPIRED:
                return f"expired{outcome}"
            case ActionState.DRY_RUN:
                return f"dry run, not done{outcome}"
            case ActionState.REFUSED:
                return f"refused{outcome}"
            case ActionState.WAITING:
                return "waiting for approval"
            case ActionState.NOT_RUN:
                return f"not run{outcome}" + (f" (stopped{who}{at})" if self.by else "")
            case _:
                assert_never(self.state)

    def by_hand(self, *, code: Callable[[str], str] = str) -> str:
        """The next step for a person when it did not run: "`rollback_deployment order-service v2.13.2` by hand, if
        you agree (step 5 was denied)". `code` sets the call apart (a code span, escaped)."""
        return (
            f"{code(self.call)} by hand, if you agree (step {self.step} {_WHY_NOT_DONE.get(self.state, 'did not run')})"
        )


def actions_of(
    steps: Iterable[Step], stop: StopReason, verifications: Iterable[Verification] = ()
) -> tuple[Action, ...]:
    """Every side effect the steps proposed, in step order, with what came of it and its latest check among
    `verifications`; `stop`: how the run ended (a call still waiting at the end of a paused run waits; at the end of
    any other, it did not run)."""
    checks = {check.step: check for check in sorted(verifications, key=lambda check: check.check)}
    found = (_action(step, stop, checks.get(step.index)) for step in steps)
    return tuple(action for action in found if action is not None)


def action_record(result: RunResult) -> list[str]:
    """Each side effect `result` proposed and what came of it, a line each, for a follow-up's model ("step 5
    rollback_deployment order-service v2.13.2: done, approved by U0BOB at 19:16 UTC: rolled back …")."""
    return [f"step {a.step} {a.call}: {a.said()}" for a in actions_of(result.steps, result.stop_reason)]


def by_hand(actions: Iterable[Action]) -> tuple[Action, ...]:
    """The proposed side effects that did not happen, each call once, but for a call that ran in another step."""
    actions = tuple(actions)
    ran = {(a.tool, a.args_hash) for a in actions if a.state in (ActionState.DONE, ActionState.FAILED)}
    left: dict[tuple[str, str], Action] = {}
    for action in actions:
        key = (action.tool, action.args_hash)
        if action.state in DID_NOT_RUN and key not in ran:
            left.setdefault(key, action)
    return tuple(left.values())


def _action(step: Step, stop: StopReason, verified: Verification | None) -> Action | None:
    call, approval = step.call, step.approval
    if call is None or call.name == FINISH_TOOL:
        return None
    state, outcome = _state(step, stop)
    if state is None:
        return None
    by, at = (approval.by, approval.at) if approval is not None and approval.decision != "pending" else ("", None)
    if state in (ActionState.EXPIRED, ActionState.NOT_RUN) and by == BROKER_USER:
        by = ""  # OpsAgent decided nobody's way: the outcome says why
    return Action(step.index, call_words(call), state, call.name, call.args_hash(), approval, by, at, outcome, verified)


def _state(step: Step, stop: StopReason) -> tuple[ActionState | None, str]:
    """The state of a step's side effect and its outcome in words; (None, "") for a step that is no side effect."""
    approval, name = step.approval, step.call.name if step.call else ""
    if approval is None:
        if step.error is ErrorKind.DENIED:
            return ActionState.REFUSED, _refusal(name, step)
        if step.error is None and step.observation.startswith(DRY_RUN_PREFIX):
            would = step.headline or _first_line(step.observation.removeprefix(DRY_RUN_PREFIX))
            return ActionState.DRY_RUN, one_line(f"would do {would}", OUTCOME_CHARS)
        if step.side_effect and step.error is ErrorKind.NOT_RUN:
            return ActionState.NOT_RUN, NEVER_SENT
        return None, ""
    match approval.decision:
        case "pending" if stop is StopReason.AWAITING_APPROVAL:
            return ActionState.WAITING, ""
        case "pending" if stop is StopReason.CANCELLED:
            return ActionState.NOT_RUN, "the run was stopped while it waited for approval"
        case "pending":
            return ActionState.NOT_RUN, f"the run ended while it waited for approval ({stop_title(stop).said()})"
        case "denied" if is_expiry(approval.by, approval.reason):
            return ActionState.EXPIRED, approval.reason
        case "denied" if approval.reason == RUN_STOPPED_REASON:
            return ActionState.NOT_RUN, "the run was stopped while it waited for approval"
        case "denied" if approval.by == BROKER_USER:  # voided: the run failed, or its approval was lost
            return ActionState.NOT_RUN, approval.reason
        case "denied":
            return ActionState.DENIED, " ".join(approval.reason.split())
        case "approved":
            return _ran(step)
        case _:
            assert_never(approval.decision)


def _ran(step: Step) -> tuple[ActionState, str]:
    """An approved side effect: what came of running it."""
    match step.error:
        case None:
            return ActionState.DONE, one_line(step.headline or _first_line(step.observation), OUTCOME_CHARS)
        case ErrorKind.DENIED:  # approved for other arguments than these
            name = step.call.name if step.call else ""
            return ActionState.REFUSED, _refusal(name, step)
        case ErrorKind.NOT_RUN:
            return ActionState.NOT_RUN, NEVER_SENT
        case ErrorKind.CANCELLED:
            return ActionState.FAILED, CUT_SHORT
        case _:
            return ActionState.FAILED, one_line(_first_line(step.said_for_people), OUTCOME_CHARS)


def _refusal(name: str, step: Step) -> str:
    """Why the gate refused a side effect, in the words for people."""
    said = step.said_for_people
    return denial_reason(name, said) or _first_line(said)


def _first_line(text: str) -> str:
    lines = (line.strip(" \t`#>-*") for line in text.splitlines())
    return next((line for line in lines if line), "")


def call_words(call: ToolCall, limit: int = CALL_CHARS) -> str:
    """A call in a few words, its argument values after its name: "compare_refs v2.13.2 v2.14.0",
    "read_repo_file …/database.yaml v2.14.0". Characters nobody can see are written as escapes."""
    values = [_value_words(value) for value in call.args.values()]
    return clip(visible_text(" ".join([call.name, *(v for v in values if v)])), limit)


def one_line(text: str, limit: int) -> str:
    """`text` on one line (whitespace collapsed), cut to `limit` characters with "…"."""
    return clip(" ".join(text.split()), limit)


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, ending in "…" when cut."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip() + "…"


def _value_words(value: Any) -> str:
    if value is None or value == "" or value == [] or value == {}:
        return ""
    match value:
        case bool():
            return "yes" if value else "no"
        case str():
            text = " ".join(value.split())
            if len(text) > _VALUE_CHARS and "/" in text:
                text = "…/" + text.rstrip("/").rsplit("/", 1)[-1]
            return clip(text, _VALUE_CHARS)
        case int() | float():
            return f"{value:g}" if isinstance(value, float) else str(value)
        case list() | tuple():
            return clip(",".join(_value_words(item) for item in value[:3]) + ("…" if len(value) > 3 else ""), 40)
        case _:
            return clip(json.dumps(value, ensure_ascii=False, default=str), _VALUE_CHARS)
