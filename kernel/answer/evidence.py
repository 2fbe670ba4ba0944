"""The evidence gate: findings checked against the trace by code, not by the prompt, and the actions taken.

A cited step must exist and have succeeded; a claim that cites none is grounded by code in the steps' output
(`grounding.py`); a stated confidence is capped by the support, and one the model did not state is derived from how
many claims are grounded; a claimed action must have run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from kernel.answer.claims import ClaimRole, key, statements
from kernel.answer.findings import Confidence, Findings
from kernel.answer.grounding import Observations
from kernel.answer.grounding import Step as ObservedStep
from kernel.calls import FINISH_TOOL, ToolCall
from kernel.tool_errors import ErrorKind


class _Approval(Protocol):
    @property
    def decision(self) -> str: ...
    @property
    def by(self) -> str: ...
    @property
    def at(self) -> datetime | None: ...


class Step(ObservedStep, Protocol):
    """What the gate reads of a step: what grounding reads, and its approval (`kernel.trace.Step`, which imports this
    module, hence a protocol)."""

    @property
    def approval(self) -> _Approval | None: ...


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
    MATCHED = "matched"
    """It cites no step, and code found what it says (its numbers, versions, identifiers…) in the output of the steps
    named in `supported_by`: grounded by matching."""
    UNSUPPORTED = "unsupported"
    """It cites only steps that do not exist, failed or hold no tool output; or it cites none and no step shows it."""


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
    """One claim of the answer (an evidence item, a ruled-out hypothesis, the summary…) checked against the trace."""

    text: str
    steps: tuple[int, ...]
    """As cited."""
    status: ClaimStatus
    supported_by: tuple[int, ...] = ()
    """The cited steps that exist and succeeded; for a claim that cites none, the steps whose output shows it."""
    issues: tuple[CitationIssue, ...] = ()
    role: ClaimRole = ClaimRole.EVIDENCE
    anchors: tuple[str, ...] = ()
    """What a claim that cites no step was looked for by, as written ("12%", "v2.14.0", "`max_connections`")."""
    missing: tuple[str, ...] = ()
    """Its anchors that no successful step shows."""

    @property
    def grounded(self) -> bool:
        """Backed by a cited step, or found in the steps' output."""
        return self.status is not ClaimStatus.UNSUPPORTED

    @property
    def reason(self) -> str:
        """Why the claim is not backed, or what is wrong with its citations ("step 9 does not exist"); "" if nothing."""
        if self.steps:
            return "; ".join(issue.render() for issue in self.issues)
        if self.status is ClaimStatus.MATCHED:
            return ""
        if self.missing:
            return f"cites no step, and no step shows {', '.join(self.missing[:3])}"
        if self.anchors:
            return f"cites no step, and a step that names {', '.join(self.anchors[:3])} does not show the rest of it"
        return "cites no step, and names no number, version or identifier a step could show"


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
    statements: tuple[ClaimCheck, ...] = ()
    """The answer's other claims, each once: its summary, its root cause, and the other sentences of a prose answer."""
    stated_confidence: Confidence | None = None
    confidence: Confidence | None = None
    """The stated confidence capped by the evidence, or the one the gate derived: what surfaces show."""
    lowered_because: str = ""
    derived: bool = False
    """The model stated no confidence: `confidence` is the gate's, derived from how many claims are grounded."""
    derived_because: str = ""
    """How it was derived: "3 of 4 claims are grounded in the steps, the root cause among them"."""
    unbacked_actions: tuple[UnbackedAction, ...] = ()

    @property
    def claims(self) -> tuple[ClaimCheck, ...]:
        """Every claim of the answer the gate checked."""
        return (*self.evidence, *self.ruled_out, *self.statements)

    @property
    def lowered(self) -> bool:
        """Whether the gate lowered the stated confidence."""
        return self.stated_confidence is not None and self.confidence != self.stated_confidence

    @property
    def passed(self) -> bool:
        """Every evidence claim and ruled-out hypothesis grounded, the confidence kept, no action claimed that was not
        taken."""
        claims = (*self.evidence, *self.ruled_out)
        return all(c.grounded for c in claims) and not self.lowered and not self.unbacked_actions


def check_evidence(findings: Findings, steps: Sequence[Step], answer: str = "") -> EvidenceCheck:
    """Check findings against the steps of their run. Pure: the same findings and steps, the same result.

    A claim that cites steps is backed by those that exist and succeeded; one that cites none is grounded by code in
    the successful steps' output (`kernel.answer.grounding`). `answer` (the Markdown answer) adds its other sentences
    as claims (`kernel.answer.claims`), and is searched for claimed actions with the findings.

    A stated confidence is capped: `confirmed` needs every evidence claim backed by a cited step, `likely` at least one
    claim grounded; otherwise it is `inconclusive`. An unstated one is derived: `likely` when most claims are
    grounded, the root cause's own among them; otherwise `inconclusive`; never `confirmed`."""
    by_index = {step.index: step for step in steps}
    seen = Observations(steps)
    evidence = tuple(_check_claim(e.claim, e.steps, by_index, seen) for e in findings.evidence)
    ruled_out = tuple(
        _check_claim(r.hypothesis, r.steps, by_index, seen, ClaimRole.RULED_OUT) for r in findings.ruled_out
    )
    said = tuple(_check_claim(s.text, s.steps, by_index, seen, s.role) for s in statements(findings, answer))
    claims = (*evidence, *ruled_out, *said)
    confidence, because = _capped(findings.confidence, evidence, claims)
    derived = ""
    if findings.confidence is None:
        root = key(findings.root_cause or findings.summary)
        confidence, derived = _derived(claims, next((c for c in claims if key(c.text) == root), None))
    texts = [findings.summary, findings.root_cause, *(e.claim for e in findings.evidence), answer]
    texts += [r.hypothesis for r in findings.ruled_out]
    return EvidenceCheck(
        evidence=evidence,
        ruled_out=ruled_out,
        statements=said,
        stated_confidence=findings.confidence,
        confidence=confidence,
        lowered_because=because,
        derived=findings.confidence is None,
        derived_because=derived,
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


def _check_claim(
    text: str,
    cited: tuple[int, ...],
    steps: dict[int, Step],
    seen: Observations,
    role: ClaimRole = ClaimRole.EVIDENCE,
) -> ClaimCheck:
    if not cited:
        found = seen.ground(text)
        status = ClaimStatus.MATCHED if found.grounded else ClaimStatus.UNSUPPORTED
        anchors = tuple(anchor.text for anchor in found.anchors)
        shown_by = found.steps if found.grounded else ()
        return ClaimCheck(
            text=text, steps=(), status=status, supported_by=shown_by, role=role, anchors=anchors, missing=found.missing
        )
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
    return ClaimCheck(
        text=text, steps=cited, status=status, supported_by=tuple(supported), issues=tuple(issues), role=role
    )


def _capped(
    stated: Confidence | None, evidence: tuple[ClaimCheck, ...], claims: tuple[ClaimCheck, ...]
) -> tuple[Confidence | None, str]:
    """The stated confidence lowered to what the evidence allows, and why it was lowered ("" if it was not)."""
    supported = sum(c.status is ClaimStatus.SUPPORTED for c in evidence)
    if evidence and supported == len(evidence):
        ceiling = Confidence.CONFIRMED
    else:
        ceiling = Confidence.LIKELY if any(c.grounded for c in claims) else Confidence.INCONCLUSIVE
    if stated is None or _ORDER.index(stated) <= _ORDER.index(ceiling):
        return stated, ""
    unsupported = sum(c.status is ClaimStatus.UNSUPPORTED for c in evidence)
    if not evidence:
        why = "no evidence claim cites a step"
    elif not any(c.grounded for c in claims):
        why = "no evidence claim is backed by a step that succeeded"
    elif unsupported:
        why = f"{unsupported} of {len(evidence)} evidence claims {'is' if unsupported == 1 else 'are'} unsupported"
    else:
        matched = len(evidence) - supported
        why = f"{matched} of {len(evidence)} evidence claims {'cites' if matched == 1 else 'cite'} no step"
    return ceiling, f"lowered from {stated.value} to {ceiling.value}: {why}"


def _derived(claims: tuple[ClaimCheck, ...], root: ClaimCheck | None) -> tuple[Confidence, str]:
    """The confidence of an answer that stated none, and how it was derived: `likely` when most claims are grounded,
    the root cause's own (else the summary's) among them; `inconclusive` otherwise. Never `confirmed`: that needs a
    model's judgement backed by cited steps."""
    grounded = sum(c.grounded for c in claims)
    counted = f"{grounded} of {len(claims)} claim{'' if len(claims) == 1 else 's'} grounded in the steps"
    if not claims:
        return Confidence.INCONCLUSIVE, "the answer makes no claim to check"
    if root is None or not root.grounded:
        return Confidence.INCONCLUSIVE, f"{counted}, but not the root cause"
    if 2 * grounded <= len(claims):
        return Confidence.INCONCLUSIVE, f"only {counted}"
    return Confidence.LIKELY, f"{counted}, the root cause among them"


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
