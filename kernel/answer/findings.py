"""The typed final answer of an investigation: summary, root cause, confidence, evidence, what was ruled out.

`finish` fills it field by field (natively or in the text protocol); a prose answer is mapped onto it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, Strict, field_validator, model_validator

from kernel.answer.citations import cited_steps, without_trailing_citation


class Confidence(StrEnum):
    """How sure a finding is, defined by the evidence rather than by how sure the model sounds.

    The evidence gate (`kernel.answer.evidence`) caps the stated level by what the trace supports.
    """

    CONFIRMED = "confirmed"
    """The cause is directly observed: e.g. a config or code diff at the deploy that explains the symptom,
    plus the symptom's change point at that time."""
    LIKELY = "likely"
    """Consistent evidence from several signals, without direct confirmation."""
    INCONCLUSIVE = "inconclusive"
    """Leads only; the next steps should say what would settle it."""


class FinishedBy(StrEnum):
    """How a finished run ended: the model called `finish`, or its prose answer was accepted."""

    FINISH = "finish"
    PROSE = "prose"
    """The model answered in prose without a call, and again (or with no new call) after one reminder."""


StepNumber = Annotated[int, Strict(), Field(ge=1)]
"""A step number as the model cites it: a positive integer, not a string or a float."""


class _Cited(BaseModel):
    """A statement with the steps that show it; a bare string is read as the statement, its citations parsed."""

    model_config = ConfigDict(frozen=True, extra="ignore", str_strip_whitespace=True)

    if TYPE_CHECKING:  # declared by each subclass after its statement, so the statement comes first in a trace
        steps: tuple[int, ...]

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {cls._text_field(): without_trailing_citation(value), "steps": cited_steps(value)}
        if isinstance(value, dict) and isinstance(value.get("steps"), int) and not isinstance(value["steps"], bool):
            return {**value, "steps": [value["steps"]]}
        return value

    @classmethod
    def _text_field(cls) -> str:
        return next(iter(cls.model_fields))

    def cited(self, text: str) -> str:
        """`text` with its steps cited before its final period: "5xx rose at t-11m (steps 1, 2)."."""
        if not self.steps:
            return text
        citation = f" (step{'s' if len(self.steps) > 1 else ''} {', '.join(map(str, self.steps))})"
        return f"{text[:-1]}{citation}." if text.endswith(".") else f"{text}{citation}"


class Evidence(_Cited):
    """One claim of the answer and the steps whose observations show it."""

    claim: str = Field(min_length=1)
    steps: tuple[StepNumber, ...] = ()


class RuledOut(_Cited):
    """A hypothesis the investigation excluded, and the steps that excluded it."""

    hypothesis: str = Field(min_length=1)
    steps: tuple[StepNumber, ...] = ()


class Findings(BaseModel):
    """The structured answer. "Actions taken" is not here: it comes from the trace (`RunResult.actions_taken`)."""

    model_config = ConfigDict(frozen=True, extra="ignore", str_strip_whitespace=True)

    summary: str
    """One sentence: what happened."""
    root_cause: str = ""
    confidence: Confidence | None = None
    """As the model stated it; None when it did not say. The checked level is `EvidenceCheck.confidence`."""
    evidence: tuple[Evidence, ...] = ()
    ruled_out: tuple[RuledOut, ...] = ()
    next_steps: tuple[str, ...] = ()

    @field_validator("confidence", mode="before")
    @classmethod
    def _level_in_any_case(cls, value: Any) -> Any:
        if isinstance(value, str):
            return value.strip().lower() or None
        return value

    @field_validator("evidence", "ruled_out", "next_steps", mode="before")
    @classmethod
    def _one_is_a_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, str | dict) else value

    def markdown(self) -> str:
        """The findings as Markdown, for surfaces that show a text answer; `kernel.answer.prose_findings` reads it back."""
        lines = [self.summary]
        if self.root_cause:
            lines.append(f"**Root cause:** {self.root_cause}")
        if self.confidence is not None:
            lines.append(f"**Confidence:** {self.confidence.value}")
        sections = (
            ("Evidence", [e.cited(e.claim) for e in self.evidence]),
            ("Ruled out", [r.cited(r.hypothesis) for r in self.ruled_out]),
            ("Next steps", list(self.next_steps)),
        )
        for title, items in sections:
            if items:
                lines += ["", f"**{title}:**", *(f"- {item}" for item in items)]
        return "\n".join(lines)
