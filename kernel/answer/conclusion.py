"""How a run's final answer is read: `finish`'s arguments validated into `Findings`, or a prose answer mapped.

Invalid fields are a typed result the loop turns into a `bad_args` error the model can fix, never a crash.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from kernel.answer.findings import Findings, FinishedBy
from kernel.answer.prose_findings import findings_from_prose


class FinishArgs(Findings):
    """`finish`'s arguments: the findings' fields, all optional, and a free-form `answer`."""

    summary: str = ""
    answer: str = ""
    """The answer in Markdown; with only this, the findings are read from it (`findings_from_prose`)."""


@dataclass(frozen=True, slots=True)
class Conclusion:
    """A run's final answer: the structured findings, the Markdown text surfaces show, and how it came."""

    findings: Findings
    answer: str
    by: FinishedBy


@dataclass(frozen=True, slots=True)
class InvalidFinish:
    """`finish` arguments that cannot be used."""

    problems: tuple[str, ...]
    """One line per invalid field; empty when the call held neither a summary nor an answer."""


def conclude(args: dict[str, Any]) -> Conclusion | InvalidFinish:
    """Validate `finish`'s arguments. Typed fields win; the ones left out are read from `answer` when given."""
    try:
        given = FinishArgs.model_validate(args)
    except ValidationError as exc:
        return InvalidFinish(
            tuple(f"- {'.'.join(map(str, e['loc'])) or '(arguments)'}: {e['msg']}" for e in exc.errors())
        )
    if not given.summary and not given.answer:
        return InvalidFinish(())
    typed = {name: getattr(given, name) for name in Findings.model_fields if getattr(given, name) not in ("", None, ())}
    if not given.answer:
        findings = Findings(**typed)
        return Conclusion(findings, findings.markdown(), FinishedBy.FINISH)
    mapped = findings_from_prose(given.answer)
    return Conclusion(mapped.model_copy(update=typed) if typed else mapped, given.answer, FinishedBy.FINISH)


def conclude_prose(text: str) -> Conclusion:
    """A prose answer as the run's conclusion: the text as written, and the findings mapped from it."""
    return Conclusion(findings_from_prose(text), text.strip(), FinishedBy.PROSE)
