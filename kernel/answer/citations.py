"""Reading which steps a text cites ("step 3", "steps 4-5", "steps 1, 2 and 6"): the one citation parser.

Findings mapped from prose, the evidence gate and every surface that links an answer to its steps use it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_STEP_REF = re.compile(r"\bsteps?\s*#?(\d{1,9})((?:\s*(?:,|&|and|to|-|–|—)\s*#?\d{1,9})*)", re.IGNORECASE)
_REF_TAIL = re.compile(r"(,|&|and|to|-|–|—)\s*#?(\d{1,9})", re.IGNORECASE)
_PARENTHESISED = re.compile(r"(?<!\s)\s*+[(\[]\s*+(?:see\s++)?steps?\s*+#?\d[^()\[\]]{0,80}[)\]]\s*+$", re.IGNORECASE)
"""A trailing "(see step 3)". It starts only where a whitespace run starts (the leftmost place it could), and its
runs are possessive: otherwise every position of a long run of spaces would rescan the run to its end."""
MAX_RANGE = 100
"""A range wider than this ("steps 1-100000") is read as its two ends, not expanded."""


@dataclass(frozen=True, slots=True)
class StepCitations:
    """The steps a text cites. `leading` are the numbers right after "step" (surely step numbers); a number
    later in a list ("step 7 and 200 users") may be something else, so only `leading` ones are safe to
    report as missing."""

    leading: frozenset[int]
    numbers: frozenset[int]
    """Every number cited, `leading` included."""
    ranges: tuple[tuple[int, int], ...]
    """`(first, last)` of each "steps 3 to 5" or "steps 4-5"."""

    @property
    def steps(self) -> tuple[int, ...]:
        """Every cited step in order, ranges expanded."""
        expanded = set(self.numbers)
        for first, last in self.ranges:
            if 0 < first <= last and last - first <= MAX_RANGE:
                expanded.update(range(first, last + 1))
        return tuple(sorted(expanded))

    def __contains__(self, index: object) -> bool:
        """Whether step `index` is cited, alone or inside a range (however wide)."""
        if not isinstance(index, int):
            return False
        return index in self.numbers or any(first <= index <= last for first, last in self.ranges)


def step_references(text: str) -> StepCitations:
    """The steps `text` cites, as written: "step 3", "steps 4-5", "steps 1, 2 and 6", "step #9"."""
    if "step" not in text.lower():  # the common case, without a regex scan
        return NO_CITATIONS
    leading: set[int] = set()
    numbers: set[int] = set()
    ranges: list[tuple[int, int]] = []
    for match in _STEP_REF.finditer(text):
        previous = int(match.group(1))
        leading.add(previous)
        for sep, number in _REF_TAIL.findall(match.group(2)):
            if sep.lower() in ("to", "-", "–", "—"):
                ranges.append((previous, int(number)))
            numbers.add(int(number))
            previous = int(number)
    return StepCitations(frozenset(leading), frozenset(numbers | leading), tuple(ranges))


NO_CITATIONS = StepCitations(frozenset(), frozenset(), ())


def cited_steps(text: str) -> tuple[int, ...]:
    """Every step `text` cites, in order, ranges expanded."""
    return step_references(text).steps


def without_trailing_citation(text: str) -> str:
    """`text` without a citation in parentheses at its end ("… at t-11m (steps 1-2)." → "… at t-11m."), so a
    surface that shows the steps as links does not show them twice."""
    stripped = text.rstrip()
    if "step" not in stripped[-90:].lower():
        return stripped
    end = stripped[-1] if stripped and stripped[-1] in ".;" else ""
    body = stripped[:-1] if end else stripped
    cut = _PARENTHESISED.sub("", body)
    return (cut + end) if cut != body else stripped
