"""The evidence gate: findings checked against the trace by code, not by the prompt, and the actions taken.

A cited step must exist and have succeeded, confidence is capped by the support, a claimed action must have run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from kernel.answer.findings import Confidence, Findings
from kernel.calls import FINISH_TOOL, ToolCall
from kernel.tool_errors import ErrorKind


class _Approval(Protocol):
    @property
    def decision(self) -> str: ...
    @property
    def by(self) -> str: ...
    @property
    def at(self) -> datetime | None: ...


class Step(Protocol):
    """What the gate reads of a step: `kernel.trace.Step` (which imports this module, hence a protocol)."""

    @property
    def index(self) -> int: ...
    @property
    def call(self) -> ToolCall | None: ...
    @property
    def error(self) -> ErrorKind | None: ...
    @property
    def observation(self) -> str: ...
    @property
    def approval(self) -> _Approval | None: ...
    @property
    def pending(self) -> bool: ...


_ORDER = (Confidence.INCONCLUSIVE, Confidence.LIKELY, Confidence.CONFIRMED)
_ACTIONS = (
    (r"rolled[ -]back|reverted", ("rollback", "roll_back", "revert")),
    (r"restarted|rebooted|bounced|recycled", ("restart", "reboot")),
    (r"scaled(?: (?:up|down|out|in))?", ("scale",)),
    (r"redeployed", ("deploy",)),
    (r"failed over", ("failover", "fail_over")),
    (r"drained|cordoned", ("drain", "cordon")),
)
_CLAIMANT = (
    r"(?:^|(?<=[.;!?:\n])|\b(?:i|we)(?:'ve|\s+have|\s+had)?)[ \t>*_\-•]*"
    r"(?:(?:just|already|successfully|then|also|now)\s+)*"
)
_ACTION_CLAIMS = tuple(
    (re.compile(_CLAIMANT + rf"(?P<verb>{verbs})\b", re.IGNORECASE), stems) for verbs, stems in _ACTIONS
)
_ACTION_WORDS = ("rolled", "revert", "restart", "reboot", "bounced", "recycled", "scaled", "redeploy", "failed over")
_ACTION_WORDS += ("drained", "cordoned")
"""A cheap first look (most answers name no action at all): every verb of `_ACTIONS` contains one of these."""


class ClaimStatus(StrEnum):
    """Whether the trace backs a claim."""

    SUPPORTED = "supported"
    """At least one cited step exists and succeeded."""
    UNSUPPORTED = "unsupported"
    """It cites no step, or only steps that do not exist, failed or hold no tool output."""


class CitationProblem(StrEnum):
    """Why a cited step does not back a claim."""

    MISSING = "missing"
    FAILED = "failed"
    NOT_EVIDENCE = "not_evidence"
    """The step holds no tool output: the `finish` itself, a prose reply, a call still awaiting approval."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class CitationIssue(_Frozen):
    """One cited step that does not back its claim."""

    step: int
    problem: CitationProblem

    def render(self) -> str:
        """ "step 9 does not exist", "step 4 failed", "step 7 holds no tool output"."""
        match self.problem:
            case CitationProblem.MISSING:
                return f"step {self.step} does not exist"
            case CitationProblem.FAILED:
                return f"step {self.step} failed"
            case CitationProblem.NOT_EVIDENCE:
                return f"step {self.step} holds no tool output"


class ClaimCheck(_Frozen):
    """One evidence claim (or ruled-out hypothesis) checked against the trace."""

    text: str
    steps: tuple[int, ...]
    """As cited."""
    status: ClaimStatus
    supported_by: tuple[int, ...] = ()
    """The cited steps that exist and succeeded."""
    issues: tuple[CitationIssue, ...] = ()

    @property
    def reason(self) -> str:
        """What is wrong with the citations ("cites no step", "step 9 does not exist"), or ""."""
        if not self.steps:
            return "cites no step"
        return "; ".join(issue.render() for issue in self.issues)


class UnbackedAction(_Frozen):
    """An action the answer claims ("rolled back") that no approved, successful step took."""

    verb: str
    sentence: str


class ActionTaken(_Frozen):
    """A side effect that ran after a human approved it, derived from the trace (never from the model)."""

    step: int
    call: ToolCall
    approved_by: str
    approved_at: datetime | None
    error: ErrorKind | None
    """None when it succeeded."""
    outcome: str
    """The first line of what the tool returned, e.g. "webhook 200: rolled back checkout to v3.7.2"."""

    @property
    def ok(self) -> bool:
        """Whether the action succeeded."""
        return self.error is None


class EvidenceCheck(_Frozen):
    """The result of the evidence gate, stored in the trace and shown with the findings."""

    evidence: tuple[ClaimCheck, ...] = ()
    """One per `Findings.evidence` item, in order."""
    ruled_out: tuple[ClaimCheck, ...] = ()
    stated_confidence: Confidence | None = None
    confidence: Confidence | None = None
    """The stated confidence, capped by the evidence: what surfaces show."""
    lowered_because: str = ""
    unbacked_actions: tuple[UnbackedAction, ...] = ()

    @property
    def lowered(self) -> bool:
        """Whether the gate lowered the stated confidence."""
        return self.confidence != self.stated_confidence

    @property
    def passed(self) -> bool:
        """Every claim supported, the confidence kept, no action claimed that was not taken."""
        claims = (*self.evidence, *self.ruled_out)
        return all(c.status is ClaimStatus.SUPPORTED for c in claims) and not self.lowered and not self.unbacked_actions


def check_evidence(findings: Findings, steps: Sequence[Step], answer: str = "") -> EvidenceCheck:
    """Check findings against the steps of their run. Pure: the same findings and steps, the same result.

    Confidence is capped: `confirmed` needs every evidence claim supported, `likely` at least one; otherwise
    it is `inconclusive`. `answer` (the Markdown answer) is searched for claimed actions with the findings."""
    by_index = {step.index: step for step in steps}
    evidence = tuple(_check_claim(e.claim, e.steps, by_index) for e in findings.evidence)
    ruled_out = tuple(_check_claim(r.hypothesis, r.steps, by_index) for r in findings.ruled_out)
    confidence, because = _capped(findings.confidence, evidence)
    texts = [findings.summary, findings.root_cause, *(e.claim for e in findings.evidence), answer]
    texts += [r.hypothesis for r in findings.ruled_out]
    return EvidenceCheck(
        evidence=evidence,
        ruled_out=ruled_out,
        stated_confidence=findings.confidence,
        confidence=confidence,
        lowered_because=because,
        unbacked_actions=_unbacked_actions(texts, actions_taken(steps)),
    )


def actions_taken(steps: Sequence[Step]) -> tuple[ActionTaken, ...]:
    """The approved side-effect steps that ran, with who approved them and what came of it."""
    ran = []
    for step in steps:
        approval = step.approval
        if step.call is None or approval is None or approval.decision != "approved":
            continue
        if step.error in (ErrorKind.DENIED, ErrorKind.NOT_RUN):  # e.g. approved for other arguments: refused
            continue
        ran.append(
            ActionTaken(
                step=step.index,
                call=step.call,
                approved_by=approval.by,
                approved_at=approval.at,
                error=step.error,
                outcome=(step.observation.strip().split("\n", 1)[0])[:200],
            )
        )
    return tuple(ran)


def _check_claim(text: str, cited: tuple[int, ...], steps: dict[int, Step]) -> ClaimCheck:
    supported, issues = [], []
    for index in cited:
        step = steps.get(index)
        if step is None:
            issues.append(CitationIssue(step=index, problem=CitationProblem.MISSING))
        elif step.error is not None:
            issues.append(CitationIssue(step=index, problem=CitationProblem.FAILED))
        elif step.call is None or step.call.name == FINISH_TOOL or step.pending:
            issues.append(CitationIssue(step=index, problem=CitationProblem.NOT_EVIDENCE))
        else:
            supported.append(index)
    status = ClaimStatus.SUPPORTED if supported else ClaimStatus.UNSUPPORTED
    return ClaimCheck(text=text, steps=cited, status=status, supported_by=tuple(supported), issues=tuple(issues))


def _capped(stated: Confidence | None, evidence: tuple[ClaimCheck, ...]) -> tuple[Confidence | None, str]:
    """The stated confidence lowered to what the evidence allows, and why it was lowered ("" if it was not)."""
    supported = sum(c.status is ClaimStatus.SUPPORTED for c in evidence)
    if evidence and supported == len(evidence):
        ceiling = Confidence.CONFIRMED
    else:
        ceiling = Confidence.LIKELY if supported else Confidence.INCONCLUSIVE
    if stated is None or _ORDER.index(stated) <= _ORDER.index(ceiling):
        return stated, ""
    if not evidence:
        why = "no evidence claim cites a step"
    elif not supported:
        why = "no evidence claim is backed by a step that succeeded"
    else:
        unsupported = len(evidence) - supported
        why = f"{unsupported} of {len(evidence)} evidence claims {'is' if unsupported == 1 else 'are'} unsupported"
    return ceiling, f"lowered from {stated.value} to {ceiling.value}: {why}"


def _unbacked_actions(texts: list[str], taken: tuple[ActionTaken, ...]) -> tuple[UnbackedAction, ...]:
    """Actions the texts claim as done ("I restarted", "Rolled back checkout") with no successful approved
    step of that kind (a tool whose name says rollback, restart, scale…)."""
    done = [a.call.name.lower() for a in taken if a.ok]
    flagged: dict[str, UnbackedAction] = {}
    for text in texts:
        lowered = text.lower()
        if not any(word in lowered for word in _ACTION_WORDS):
            continue
        for pattern, stems in _ACTION_CLAIMS:
            for found in pattern.finditer(text):
                verb = found.group("verb").lower()
                if verb in flagged or any(stem in name for name in done for stem in stems):
                    continue
                flagged[verb] = UnbackedAction(verb=verb, sentence=_sentence_around(text, found.start("verb")))
    return tuple(flagged.values())


def _sentence_around(text: str, at: int) -> str:
    start = max(text.rfind(mark, 0, at) for mark in (". ", "\n", "; ")) + 1
    ends = [i for mark in (". ", "\n", "; ") if (i := text.find(mark, at)) >= 0]
    return text[start : min(ends) + 1 if ends else len(text)].strip()[:300]
