"""The verdict's evidence as people see it: each claim of the answer the evidence gate checked, with the steps that back
it (cited, or found in their output by code) and their source links; and what is left of a prose answer once its
summary and evidence are shown on their own lines.

Plain facts, like the rest of the verdict (`bot.verdict`): each surface escapes, links and lays them out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kernel import ClaimCheck, ClaimRole, ClaimStatus, EvidenceCheck, Findings, SourceLink, answer_rest


@dataclass(frozen=True, slots=True)
class Claim:
    """A claim of the answer (an evidence item, a ruled-out hypothesis, a sentence of a prose answer), checked
    against the trace by the evidence gate."""

    text: str
    steps: tuple[int, ...]
    """The steps it cites; for a claim that cites none (`matched`), the steps whose output shows it."""
    supported: bool
    problem: str
    """Why it is unsupported ("cites no step, and no step shows 15%", "step 9 does not exist"); "" when supported."""
    links: tuple[SourceLink, ...]
    """The source links of the steps that back it."""
    matched: bool = False
    """It cites no step: code found it in the output of `steps` (surfaces say "found in step 2")."""


@dataclass(frozen=True, slots=True)
class AnswerEvidence:
    """What the verdict shows of the gate's claims."""

    evidence: tuple[Claim, ...]
    """The evidence items as the gate checked them, then the other sentences of the answer it found in the steps."""
    ruled_out: tuple[Claim, ...]
    rest: str
    """What a prose answer says besides its summary, root cause, evidence, ruled-out hypotheses and next steps, laid
    out as written (Markdown); "" for typed findings, or when nothing is left."""


def answer_evidence(
    findings: Findings, check: EvidenceCheck, answer: str, links_of: Callable[[int], Sequence[SourceLink]]
) -> AnswerEvidence:
    """The verdict's evidence: the evidence items (supported, found, or unsupported and why), then every other
    sentence of the answer the gate grounded (an answer in prose has its evidence there); `links_of(step)` gives a
    step's source links. `answer` is the answer as written: when it is prose, what it says besides these is `rest`."""
    found = tuple(c for c in check.statements if c.role is ClaimRole.STATEMENT and c.grounded)
    evidence = tuple(_claim(c, links_of) for c in (*check.evidence, *found))
    ruled_out = tuple(_claim(c, links_of) for c in check.ruled_out)
    rest = ""
    if answer.strip() and answer.strip() != findings.markdown().strip():
        shown = [findings.summary, findings.root_cause, *(c.text for c in (*check.evidence, *check.ruled_out, *found))]
        rest = answer_rest(answer, shown)
    return AnswerEvidence(evidence, ruled_out, rest)


def _claim(check: ClaimCheck, links_of: Callable[[int], Sequence[SourceLink]]) -> Claim:
    links = _unique([link for index in check.supported_by for link in links_of(index)])
    matched = check.status is ClaimStatus.MATCHED
    steps = check.supported_by if matched else check.steps
    return Claim(check.text, steps, check.grounded, "" if check.grounded else check.reason, links, matched)


def _unique(links: Sequence[SourceLink]) -> tuple[SourceLink, ...]:
    seen: dict[str, SourceLink] = {}
    for link in links:
        seen.setdefault(link.url, link)
    return tuple(seen.values())
