"""An answer split into claims, and what is left of a prose answer once its claims are shown elsewhere.

The findings hold the summary, the root cause, the evidence and what was ruled out; a prose answer says more
sentences than those. Each sentence (or bullet item) the findings do not already hold is a statement the evidence
gate grounds like the rest. A surface that shows the summary and the evidence on their own lines shows the rest of
a prose answer as a paragraph (`answer_rest`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from enum import StrEnum

from kernel.answer.citations import cited_steps, without_trailing_citation
from kernel.answer.findings import Findings
from kernel.answer.prose_findings import prose_pieces, sentences

_NOT_CLAIMS = (
    "i recommend",
    "i'd recommend",
    "i would recommend",
    "we recommend",
    "recommend",
    "i suggest",
    "suggest",
    "consider",
    "you should",
    "you could",
    "you may want",
    "let me know",
    "feel free",
    "hope this",
    "i hope",
    "happy to",
    "if you",
    "please",
)
"""How a sentence that is advice or courtesy, not a claim about what was found, starts."""
_ADVICE = (
    "add adjust alert audit bump check confirm consider contact cordon decrease deploy disable document downgrade "
    "drain enable escalate fix increase investigate keep limit lower monitor notify page patch pin raise "
    "redeploy reduce restart restore retry revert review roll rollback rerun run scale set tune update upgrade "
    "verify watch"
)
"""The first words of an imperative sentence ("Restore `max_size: 50`", "Roll back checkout"): advice."""
_ADVICE_VERBS = frozenset(_ADVICE.split())


class ClaimRole(StrEnum):
    """What a claim is to the answer."""

    SUMMARY = "summary"
    ROOT_CAUSE = "root_cause"
    EVIDENCE = "evidence"
    RULED_OUT = "ruled_out"
    STATEMENT = "statement"
    """Another sentence of a prose answer."""


@dataclass(frozen=True, slots=True)
class Statement:
    """A claim of the answer that is not one of its evidence items or ruled-out hypotheses."""

    text: str
    role: ClaimRole
    steps: tuple[int, ...] = ()
    """The steps it cites, if any."""


def statements(findings: Findings, answer: str) -> tuple[Statement, ...]:
    """The summary, the root cause (when it says more than the summary) and every other sentence of a prose `answer`
    that is neither an evidence item, a ruled-out hypothesis, advice nor courtesy; each once, in that order."""
    held = {key(e.claim) for e in findings.evidence} | {key(r.hypothesis) for r in findings.ruled_out}
    found: dict[str, Statement] = {}
    for text, role in ((findings.summary, ClaimRole.SUMMARY), (findings.root_cause, ClaimRole.ROOT_CAUSE)):
        if text and key(text) not in held:
            found.setdefault(key(text), Statement(text, role))
    for piece in prose_pieces(answer):
        if piece.section is not None or piece.verbatim or not piece.text:
            continue
        for sentence in sentences(piece.text):
            text = without_trailing_citation(sentence)
            if text and key(text) not in held and not _not_a_claim(text):
                found.setdefault(key(text), Statement(text, ClaimRole.STATEMENT, cited_steps(sentence)))
    return tuple(found.values())


def answer_rest(answer: str, shown: Collection[str]) -> str:
    """What a prose answer says besides its sections and the sentences in `shown` (its summary, evidence…), laid out
    as written: paragraphs, bullets, code blocks and headings kept, emphasis dropped. "" when nothing is left."""
    gone = {key(text) for text in shown}
    lines: list[tuple[str, bool]] = []
    """Each line, and whether it is a heading."""
    for piece in prose_pieces(answer):
        if piece.heading:
            lines.append((f"### {piece.text}", True))
        elif piece.verbatim or not piece.text:
            lines.append((piece.text, False))
        elif piece.section is None:
            kept = [s for s in sentences(piece.text) if s.strip() and key(s) not in gone]
            if kept:
                lines.append((("- " if piece.bullet else "") + " ".join(kept), False))
    return _tidy(lines)


def key(text: str) -> str:
    """A claim as compared with another: its trailing citation, case and spacing left out."""
    return " ".join(without_trailing_citation(text).split()).casefold().rstrip(".")


def _not_a_claim(sentence: str) -> bool:
    lowered = sentence.lstrip("*_ ").lower()
    first = lowered.split(maxsplit=1)[0] if lowered else ""
    return lowered.endswith("?") or lowered.startswith(_NOT_CLAIMS) or first in _ADVICE_VERBS


def _tidy(lines: list[tuple[str, bool]]) -> str:
    """The lines without runs of blank lines, and without a heading that nothing follows any more."""
    kept: list[tuple[str, bool]] = []
    for line, heading in lines:
        if heading:
            while kept and (kept[-1][1] or not kept[-1][0].strip()):
                kept.pop()  # a heading before this one heads nothing now
            if kept:
                kept.append(("", False))
        if line.strip() or (kept and kept[-1][0].strip()):
            kept.append((line, heading))
    while kept and (kept[-1][1] or not kept[-1][0].strip()):
        kept.pop()
    return "\n".join(line for line, _ in kept)
