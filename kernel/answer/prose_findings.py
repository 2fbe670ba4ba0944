"""Mapping a prose answer onto `Findings` as best it can, by labels, sections and step citations.

A model that answers in prose, or calls `finish` with only `answer`, still gets a structured result.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

from kernel.answer.citations import cited_steps, without_trailing_citation
from kernel.answer.findings import Confidence, Evidence, Findings, RuledOut


class Section(StrEnum):
    """Where a piece of a prose answer belongs."""

    SUMMARY = "summary"
    ROOT_CAUSE = "root_cause"
    CONFIDENCE = "confidence"
    EVIDENCE = "evidence"
    RULED_OUT = "ruled_out"
    NEXT_STEPS = "next_steps"


_LABELS = (
    (Section.SUMMARY, r"summary|tl;?\s?dr|conclusion|verdict"),
    (Section.ROOT_CAUSE, r"(?:likely |probable |the )?root[ _-]?cause|(?:likely |probable )?cause"),
    (Section.CONFIDENCE, r"confidence(?: level)?"),
    (Section.EVIDENCE, r"evidence|findings|observations"),
    (Section.RULED_OUT, r"ruled[ _-]?out|rejected(?: hypothes[ie]s)?|not the cause|excluded"),
    (
        Section.NEXT_STEPS,
        r"next[ _-]?steps?|recommend(?:ed|ations?)?(?: actions?| next steps?)?|what to do next|follow[ -]?ups?",
    ),
)
_LABEL = re.compile(
    r"^(?:" + "|".join(f"(?P<{section.value}>{words})" for section, words in _LABELS) + r")"
    r"\s*+(?:\([^)]{0,40}\)\s*+)?(?:[:：]|(?<=\s)[-–—]\s|$)\s*+(?P<rest>.*)$",
    re.IGNORECASE,
)
"""A label line: the whitespace runs are possessive (a run of spaces is never split between two of them), and a
dash after the label needs the space before it, which the run ends with."""
_HEADING = re.compile(r"^#{1,6}\s+")
_BULLET = re.compile(r"^(?:[-*+•]|\d{1,2}[.)])\s+")
_EMPHASIS = re.compile(r"\*\*|__")
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!e\.g\.)(?<!i\.e\.)(?<!etc\.)(?<!vs\.)(?<!\bno\.)\s+(?=\S)")
_LEVEL_WORDS = {
    Confidence.CONFIRMED: ("confirmed", "certain", "high", "definite", "verified"),
    Confidence.LIKELY: ("likely", "probable", "probably", "medium", "moderate", "fairly"),
    Confidence.INCONCLUSIVE: ("inconclusive", "low", "uncertain", "unclear", "unknown", "unconfirmed"),
}
_LEVEL_OF = {word: level for level, words in _LEVEL_WORDS.items() for word in words}
_LEVEL_WORD = re.compile(r"\b(" + "|".join(_LEVEL_OF) + r")\b", re.IGNORECASE)
_LEVEL_PHRASE = re.compile(
    r"\b(high|medium|moderate|low)\s+confidence\b|\((confirmed|likely|inconclusive)\)", re.IGNORECASE
)
_RULED_OUT_WORDS = re.compile(r"\bruled? out\b|\bruling out\b|\bnot the cause\b|\bexcluded\b", re.IGNORECASE)
_SEMICOLON_OR_PARENTHESIS = re.compile(r"[;()]")
_MARKS = frozenset("#-*+•0123456789")
"""The first characters of a heading or a bullet line: other lines skip those regexes."""
_LIST_SECTIONS = frozenset({Section.EVIDENCE, Section.RULED_OUT, Section.NEXT_STEPS})


@dataclass(frozen=True, slots=True)
class ProsePiece:
    """One logical line of a prose answer (or one part of a label line) where the reader placed it."""

    section: Section | None
    """The section it belongs to; None for body text: a paragraph, or a bullet outside any known section."""
    text: str
    """Without its Markdown marks (bullet, heading, bold); "" for a blank line."""
    bullet: bool = False
    heading: bool = False
    verbatim: bool = False
    """A line kept as written and never read for findings: a code block's, or a heading the reader does not know."""


def findings_from_prose(text: str) -> Findings:
    """The findings a prose answer states. Rules, in order of strength:
    - labelled lines ("Root cause: …", "Confidence: likely", "Summary: …") and sections under a heading or a
      label line ("Next steps:", "## Recommended actions", "Ruled out:") with their bullets;
    - the summary is the labelled one, else the first sentence;
    - every other sentence that cites a step ("step 3", "steps 4-5") is an evidence claim with those steps;
      one that says "ruled out" / "not the cause" is a ruled-out hypothesis instead;
    - the confidence is a labelled level, "high/medium/low confidence", or "(likely)"-style; else not stated.
    A code block is no part of the findings."""
    found: dict[Section, str] = {}
    items: dict[Section, list[str]] = {section: [] for section in _LIST_SECTIONS}
    body: list[str] = []
    first = ""
    for piece in prose_pieces(text):
        if piece.verbatim or not piece.text:
            continue
        first = first or piece.text
        if piece.section is None:
            body.append(piece.text)
        elif piece.section in _LIST_SECTIONS:
            items[piece.section].append(piece.text)
        else:
            found.setdefault(piece.section, piece.text)
    return _assemble(found, items, body, first)


def prose_pieces(text: str) -> Iterator[ProsePiece]:
    """The answer's logical lines in order, each placed in its section: a label line starts a section (its text after
    the label is the section's first piece), a heading the reader does not know ends it, and a paragraph after a
    blank line leaves a list section. Blank lines are kept ("" pieces), for a surface that lays the body out again."""
    section: Section | None = None
    filled: set[Section] = set()
    """The one-value sections (summary, root cause, confidence) already given a value."""
    blank_before = False
    for line, heading, bullet, verbatim in _logical_lines(text):
        if verbatim:
            yield ProsePiece(None, line, verbatim=True)
            continue
        if not line:
            blank_before = True
            yield ProsePiece(None, "")
            continue
        label = _LABEL.match(line)
        if label and (heading or not bullet or label.group("rest")):
            section = Section(next(name for name in (s.value for s in Section) if label.group(name)))
            if rest := label.group("rest").strip():
                yield from _label_pieces(section, rest, filled)
            blank_before = False
            continue
        if heading:  # a heading we do not know ends the section
            section, blank_before = None, False
            yield ProsePiece(None, line, heading=True, verbatim=True)
            continue
        if section is not None and section in _LIST_SECTIONS and (bullet or not blank_before):
            yield ProsePiece(section, line, bullet)
        elif section in (Section.SUMMARY, Section.ROOT_CAUSE) and not blank_before and section not in filled:
            filled.add(section)
            yield ProsePiece(section, line)
        else:
            section = None
            yield ProsePiece(None, line, bullet)
        blank_before = False


def _label_pieces(section: Section, rest: str, filled: set[Section]) -> Iterator[ProsePiece]:
    """What a label line says after its label: for a list, items separated by semicolons (outside parentheses);
    else its first sentence is the value and the sentences after it are body text."""
    if section in _LIST_SECTIONS:
        yield from (ProsePiece(section, part.strip()) for part in _top_level_parts(rest) if part.strip())
    elif section not in filled:
        filled.add(section)
        value, *more = sentences(rest, 1)
        yield ProsePiece(section, value)
        yield from (ProsePiece(None, sentence) for sentence in more)
    else:
        yield ProsePiece(None, rest)


def _logical_lines(text: str) -> Iterator[tuple[str, bool, bool, bool]]:
    """Each line without its Markdown marks, and whether it was a heading, a bullet, or a line of a code block (kept
    as written, fences included). A line with a later sentence that opens with a label ("… (step 1). Confidence:
    likely.") is split before that sentence."""
    fenced = False
    for raw in text.replace("\r\n", "\n").split("\n"):
        if raw.lstrip().startswith("```") or fenced:
            fenced ^= raw.lstrip().startswith("```")
            yield raw.rstrip(), False, False, True
            continue
        line = (_EMPHASIS.sub("", raw) if "**" in raw or "__" in raw else raw).strip()
        heading = bullet = False
        if line[:1] in _MARKS:
            heading, bullet = bool(_HEADING.match(line)), bool(_BULLET.match(line))
            line = _BULLET.sub("", _HEADING.sub("", line)).strip()
        parts: list[str] = []  # joined once: adding each sentence to a string recopied the line per sentence
        for sentence in sentences(line):
            if parts and (label := _LABEL.match(sentence)) and label.group("rest"):
                yield " ".join(parts), heading, bullet, False
                parts, heading, bullet = [], False, False
            parts.append(sentence)
        yield " ".join(parts), heading, bullet, False


def _top_level_parts(text: str) -> list[str]:
    """`text` split at its semicolons outside parentheses: a semicolon is inside when the next parenthesis after
    it closes one. One pass from the end, where a lookahead for that parenthesis rescanned the text per semicolon."""
    cuts: list[int] = []
    next_parenthesis = ""
    for mark in reversed(list(_SEMICOLON_OR_PARENTHESIS.finditer(text))):
        if mark.group() != ";":
            next_parenthesis = mark.group()
        elif next_parenthesis != ")":
            cuts.append(mark.start())
    bounds = [-1, *reversed(cuts), len(text)]
    return [text[start + 1 : end] for start, end in itertools.pairwise(bounds)]


def _assemble(found: dict[Section, str], items: dict[Section, list[str]], body: list[str], first: str) -> Findings:
    said = [s for line in body for s in sentences(line) if s.strip()]
    root_cause = found.get(Section.ROOT_CAUSE, "")
    summary = found.get(Section.SUMMARY) or first
    evidence = [Evidence.model_validate(item) for item in items[Section.EVIDENCE]]
    ruled_out = [RuledOut.model_validate(item) for item in items[Section.RULED_OUT]]
    claimed = {e.claim for e in evidence}  # a set: comparing each sentence with every claim was quadratic
    for sentence in [root_cause, *said] if root_cause else said:
        if _rules_out(sentence):
            ruled_out.append(RuledOut.model_validate(sentence))
        elif cited_steps(sentence) and without_trailing_citation(sentence) not in claimed:
            evidence.append(Evidence.model_validate(sentence))
            claimed.add(evidence[-1].claim)
    return Findings(
        summary=without_trailing_citation(_first_sentence(summary)),
        root_cause=without_trailing_citation(root_cause),
        confidence=_confidence(found.get(Section.CONFIDENCE, ""), " ".join([root_cause, *body])),
        evidence=tuple(evidence),
        ruled_out=tuple(ruled_out),
        next_steps=tuple(items[Section.NEXT_STEPS]),
    )


def _first_sentence(text: str) -> str:
    return sentences(text.strip(), 1)[0] if text.strip() else ""


def sentences(text: str, maxsplit: int = 0) -> list[str]:
    """`text` cut into sentences (at most `maxsplit` cuts, 0 for all); a text without ". " is one sentence."""
    if ". " not in text and "! " not in text and "? " not in text:
        return [text]
    return _SENTENCE_END.split(text, maxsplit=maxsplit)


def _rules_out(sentence: str) -> bool:
    lowered = sentence.lower()
    cheap = "rule" in lowered or "not the cause" in lowered or "exclud" in lowered
    return cheap and _RULED_OUT_WORDS.search(sentence) is not None


def _confidence(labelled: str, text: str) -> Confidence | None:
    """A labelled level ("Confidence: high"), else a phrase in the text ("low confidence", "(likely)")."""
    if labelled and (word := _LEVEL_WORD.search(labelled)):
        return _LEVEL_OF[word.group(1).lower()]
    if ("onfiden" in text.lower() or "(" in text) and (phrase := _LEVEL_PHRASE.search(text)):
        return _LEVEL_OF[(phrase.group(1) or phrase.group(2)).lower()]
    return None
