"""The answer of a run: its typed findings, how a `finish` or a prose answer becomes them, and what they are worth.

The rest of the kernel enters by the names re-exported here.

- `findings.py`       the typed answer: summary, root cause, confidence, evidence, what was ruled out.
- `conclusion.py`     `finish`'s arguments validated into findings, or a prose answer mapped onto them
  (`prose_findings.py`, by labels, sections and step citations).
- `citations.py`      the one citation parser: which steps a text cites.
- `claims.py`         the answer split into claims (the findings' and a prose answer's other sentences), and what is
  left of a prose answer once its summary and evidence are shown apart.
- `grounding.py`      a claim that cites no step looked for in the steps' output by its anchors (numbers, versions…).
- `quantities.py`     numbers with units read as values, in a claim and in a step's output (`0.2%` is `0.20%`).
- `evidence.py`       the evidence gate: findings checked against the steps by code, the confidence capped or derived,
  and the actions taken.
- `hypothesis.py`     the working hypothesis a thought states as the run goes.
"""

from kernel.answer.citations import StepCitations, cited_steps, step_references
from kernel.answer.claims import ClaimRole, answer_rest
from kernel.answer.conclusion import Conclusion, InvalidFinish, conclude, conclude_prose
from kernel.answer.evidence import (
    ActionTaken,
    CitationIssue,
    CitationProblem,
    ClaimCheck,
    ClaimStatus,
    EvidenceCheck,
    UnbackedAction,
    actions_taken,
    check_evidence,
)
from kernel.answer.findings import Confidence, Evidence, Findings, FinishedBy, RuledOut
from kernel.answer.hypothesis import Hypothesis, hypothesis_in
from kernel.answer.prose_findings import findings_from_prose

__all__ = [
    "ActionTaken",
    "CitationIssue",
    "CitationProblem",
    "ClaimCheck",
    "ClaimRole",
    "ClaimStatus",
    "Conclusion",
    "Confidence",
    "Evidence",
    "EvidenceCheck",
    "Findings",
    "FinishedBy",
    "Hypothesis",
    "InvalidFinish",
    "RuledOut",
    "StepCitations",
    "UnbackedAction",
    "actions_taken",
    "answer_rest",
    "check_evidence",
    "cited_steps",
    "conclude",
    "conclude_prose",
    "findings_from_prose",
    "hypothesis_in",
    "step_references",
]
