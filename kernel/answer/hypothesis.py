"""The model's working hypothesis, stated as it goes: an optional `Hypothesis: … (likely)` line of a thought.

A labelled line costs no extra turn and reads the same in both protocols; the step records what it says.
"""

from __future__ import annotations

import re

from pydantic.dataclasses import dataclass

from kernel.answer.findings import Confidence

_LINE = re.compile(
    r"^[ \t>*_\-]*(?:working |leading |current )?hypothesis[ \t*_]*[:：][ \t*_]*(?P<text>[^\n]*?)"
    r"[ \t]*(?:[(\[][ \t]*(?P<level>confirmed|likely|inconclusive)[ \t]*[)\]])?[ \t*_.]*$",
    re.IGNORECASE | re.MULTILINE,
)
MAX_CHARS = 300
"""A hypothesis is one line; a longer one is cut (the thought keeps all of it)."""


@dataclass(frozen=True, slots=True)
class Hypothesis:
    """The leading explanation the model stated at a step, and how sure it said it was."""

    text: str
    confidence: Confidence | None = None


def hypothesis_in(thought: str) -> Hypothesis | None:
    """The last `Hypothesis: <text> (<confidence>)` line of a thought; None when it has none."""
    if "ypothesis" not in thought:  # the common case, without a regex scan
        return None
    lines = list(_LINE.finditer(thought))
    text = lines[-1].group("text").strip(" *_") if lines else ""
    if not text:
        return None
    level = lines[-1].group("level")
    return Hypothesis(text=text[:MAX_CHARS], confidence=Confidence(level.lower()) if level else None)
