"""Plain-English words for what a run did, shared by every surface people read: Slack, the viewer, the terminal.

Kept apart from Block Kit and HTML so each surface words the same facts the same way, and none imports another.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import assert_never

from kernel import StopReason, Verification, VerificationOutcome

NOTHING_TO_RECHECK = "no metric to re-check"
"""Why an action was not verified: the run read no metric before it."""


@dataclass(frozen=True, slots=True)
class StopTitle:
    """How a run's end is titled on every surface (Slack, the terminal, the viewer, `stats`): built once by
    `stop_title`, said by each surface with its own way of naming a person."""

    words: str
    """The title in words: "Stopped: the deadline passed", "Paused: waiting for an approval", "Stopped by a user"; for
    a run someone stopped, "Stopped by" (`by` follows)."""
    by: str = ""
    """Who stopped the run, when the surface knows (a Slack user id, `alertmanager`); "" otherwise."""

    def said(self, *, person: Callable[[str], str] = str, text: Callable[[str], str] = str) -> str:
        """The title as a surface says it: `person` names who stopped the run (a Slack mention), `text` escapes our
        words for the surface."""
        return f"{text(self.words)} {person(self.by)}" if self.by else text(self.words)


def stop_title(reason: StopReason, *, by: str = "") -> StopTitle:
    """The title of a run's end for `reason`; `by`: who stopped a cancelled run, when known. The title names no
    count: the step budget counts model turns, which is not the step count people see (`bot.verdict.tool_steps`)."""
    match reason:
        case StopReason.FINISH:
            return StopTitle("Finished with an answer")
        case StopReason.AWAITING_APPROVAL:
            return StopTitle("Paused: waiting for an approval")
        case StopReason.CANCELLED:
            return StopTitle("Stopped by", by) if by else StopTitle("Stopped by a user")
        case StopReason.MAX_STEPS:
            why = "the step budget ran out"
        case StopReason.TOKEN_BUDGET:
            why = "the prompt-token budget ran out"
        case StopReason.DEADLINE:
            why = "the deadline passed"
        case StopReason.COST_BUDGET:
            why = "the cost budget ran out"
        case StopReason.UNPARSABLE_EXHAUSTED:
            why = "the model kept replying without a usable action"
        case StopReason.TOOL_ERROR_EXHAUSTED:
            why = "tool calls kept failing"
        case StopReason.LOOP_DETECTED:
            why = "it kept repeating the same call"
        case StopReason.LLM_ERROR:
            why = "the model endpoint failed"
        case StopReason.INTERNAL_ERROR:
            why = "OpsAgent itself failed (not the model, a tool or a person)"
        case StopReason.INTERRUPTED:
            why = "interrupted before it ended; it resumes from its last step"
        case _:
            assert_never(reason)
    return StopTitle(f"Stopped: {why}")


BROKER_USER = "opsagent"
"""Who decides an approval when no human did: an expiry, a stopped run, a request that could not be posted."""
RUN_STOPPED_REASON = "the run was stopped"
"""Why a Stop voids the approvals its run waited for (by whoever stopped it)."""
_EXPIRY_REASON = "not approved within {ttl}; treated as a denial"


def expiry_reason(ttl_s: float) -> str:
    """The denial reason of an approval nobody decided in time: "not approved within 15 min; treated as a denial"."""
    ttl = f"{ttl_s / 60:g} min" if ttl_s >= 60 else f"{ttl_s:g} s"
    return _EXPIRY_REASON.format(ttl=ttl)


def is_expiry(by: str, reason: str) -> bool:
    """Whether a denial by `by` for `reason` is an approval's expiry (the trace keeps an expiry as a denial)."""
    head, tail = _EXPIRY_REASON.split("{ttl}")
    return by == BROKER_USER and reason.startswith(head) and reason.endswith(tail)


def duration(ms: float) -> str:
    """A duration for people: "412 ms", "1.5 s", "2 min 5 s", "3 h 12 min"."""
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, seconds = divmod(round(ms / 1000), 60)
    if minutes >= 60:
        return f"{minutes // 60} h {minutes % 60} min"
    return f"{minutes} min {seconds} s"


def parallel_group(together: tuple[int, ...]) -> str:
    """The steps of one turn that run at once, for people: `3 reads in parallel: steps 1, 2, 3`."""
    return f"{len(together)} reads in parallel: steps {', '.join(map(str, together))}"


def plain_moment(at: datetime) -> str:
    """A moment for a reader whose time zone is unknown: "14:07 UTC"."""
    return f"{at.astimezone(UTC):%H:%M} UTC"


def verification_words(
    verification: Verification,
    *,
    moment: Callable[[datetime], str] = plain_moment,
    text: Callable[[str], str] = str,
) -> str:
    """A check of an action in a line, as every surface says it: "verified 14:09 UTC: http_5xx_rate 12.0% → 0.20%
    ▁▇▁ · held"; a second check "rechecked … · still holding"; "… · did not hold (before the incident: 0.10%)";
    "checked 14:09 UTC: inconclusive: no data since the action"; "not verified: no metric to re-check". Each surface
    passes how it says a moment and escapes the check's texts (`text`), which come from the metrics backend."""
    v = verification
    if v.outcome is VerificationOutcome.NOT_VERIFIED:
        return f"not verified: {text(v.detail or NOTHING_TO_RECHECK)}"
    first = v.check <= 1
    match v.outcome:
        case VerificationOutcome.HELD:
            said = "held" if first else "still holding"
        case VerificationOutcome.DID_NOT_HOLD:
            said = "did not hold" + (f" (before the incident: {text(v.baseline)})" if v.baseline else "")
        case VerificationOutcome.INCONCLUSIVE:
            why = ": ".join(text(part) for part in (v.metric, v.detail) if part)
            return f"{'checked' if first else 'rechecked'} {moment(v.at)}: inconclusive" + (f" ({why})" if why else "")
        case _:
            assert_never(v.outcome)
    return f"{'verified' if first else 'rechecked'} {moment(v.at)}: {verified_values(v, text=text)} · {said}"


def verified_values(verification: Verification, *, text: Callable[[str], str] = str) -> str:
    """What a check read, in a few words: "http_5xx_rate 12.0% → 0.20% ▁▇▁" (the metric, its value when the action
    ran and at the check, its series); `text` escapes them for the surface."""
    v = verification
    return " ".join(
        text(part) if part != "→" else part for part in (v.metric, v.before, "→", v.now, v.sparkline) if part
    )
