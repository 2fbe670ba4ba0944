"""Suite (g): grounding by code against a hand-labelled corpus (`bench/grounding_corpus.py`): precision and recall of
"grounded" over the claims that cite no step.

A claim the gate calls grounded is a true positive when the label says a step shows it and every step the gate
names is one of the labelled steps (a claim linked to the wrong step counts against precision); a false negative
when the label names steps and the gate found none. Targets (issue 22): precision ≥ 0.95, recall ≥ 0.8, over both
batches: the first (the gate was adjusted after seeing it) and the held-out one (written after, scored untuned).
"""

from __future__ import annotations

from typing import Any

from bench.grounding_corpus import CORPUS, HELD_OUT, Case, Kind, traces
from bench.report import table, verdict
from kernel import ClaimCheck, Step, check_evidence, findings_from_prose

PRECISION_TARGET = 0.95
RECALL_TARGET = 0.8
BATCHES = {"first": CORPUS, "held out": HELD_OUT}
_COUNTS = ("answers", "claims", "tp", "fp", "fn")


class CorpusError(ValueError):
    """The corpus's labels do not name the claims the gate checks: a label to add, rename or drop."""


def judged(case: Case, runs: dict[str, list[Step]]) -> list[tuple[ClaimCheck, tuple[int, ...]]]:
    """The case's claims that cite no step, as the gate checked them, each with its label."""
    findings = case.findings or findings_from_prose(case.answer)
    check = check_evidence(findings, runs[case.trace], case.answer)
    uncited = [claim for claim in check.claims if not claim.steps]
    labels = dict(case.labels)
    unlabelled = [claim.text for claim in uncited if claim.text not in labels]
    stale = sorted(set(labels) - {claim.text for claim in uncited})
    if unlabelled or stale:
        raise CorpusError(f"{case.trace} {case.kind} answer: no label for {unlabelled}; labels of no claim: {stale}")
    return [(claim, labels[claim.text]) for claim in uncited]


def grounding() -> dict[str, Any]:
    """(g) Every claim of the corpus that cites no step, checked by the evidence gate and scored against its label."""
    runs = traces()
    rows: list[dict[str, Any]] = []
    wrong: list[dict[str, Any]] = []
    for batch, cases in BATCHES.items():
        for kind in Kind:
            count = dict.fromkeys(_COUNTS, 0)
            for case in (case for case in cases if case.kind is kind):
                count["answers"] += 1
                for claim, label in judged(case, runs):
                    said = outcome(claim, label)
                    count["claims"] += 1
                    count[said] = count.get(said, 0) + 1
                    if said in ("fp", "fn"):
                        wrong.append(
                            {
                                "batch": batch,
                                "kind": kind.value,
                                "claim": claim.text,
                                "label": list(label),
                                "gate": said,
                                "steps": list(claim.supported_by),
                            }
                        )
            rows.append({"batch": batch, "kind": kind.value, **{key: count[key] for key in _COUNTS}})
    totals = {batch: _total([row for row in rows if row["batch"] == batch]) for batch in BATCHES}
    total = _total(rows)
    return {
        "rows": [{**row, **_ratios(row)} for row in rows],
        "batches": {batch: {**count, **_ratios(count)} for batch, count in totals.items()},
        "total": {**total, **_ratios(total)},
        "targets": {"precision": PRECISION_TARGET, "recall": RECALL_TARGET},
        "pass": _ratios(total)["precision"] >= PRECISION_TARGET and _ratios(total)["recall"] >= RECALL_TARGET,
        "wrong": wrong,
    }


def outcome(claim: ClaimCheck, label: tuple[int, ...]) -> str:
    """tp: grounded by steps the label names; fp: grounded, but the label names none or other steps; fn: not grounded
    though the label names steps; tn: neither."""
    if claim.grounded:
        return "tp" if label and set(claim.supported_by) <= set(label) else "fp"
    return "fn" if label else "tn"


def _total(rows: list[dict[str, Any]]) -> dict[str, int]:
    return {key: sum(row[key] for row in rows) for key in _COUNTS}


def _ratios(count: dict[str, Any]) -> dict[str, float]:
    """Precision and recall (1.0 when there is nothing to be wrong about)."""
    said, there = count["tp"] + count["fp"], count["tp"] + count["fn"]
    return {"precision": count["tp"] / said if said else 1.0, "recall": count["tp"] / there if there else 1.0}


def markdown(r: dict[str, Any]) -> str:
    """The suite's section of the report."""

    def line(first: str, second: str, c: dict[str, Any], bold: bool = False) -> list[Any]:
        mark = "**" if bold else ""
        ratios = [f"{mark}{c['precision']:.2f}{mark}", f"{mark}{c['recall']:.2f}{mark}"]
        return [first, second, c["answers"], c["claims"], c["tp"], c["fp"], c["fn"], *ratios]

    rows = []
    for batch, count in r["batches"].items():
        rows += [line(batch, row["kind"], row) for row in r["rows"] if row["batch"] == batch]
        rows.append(line(batch, "all", count, bold=True))
    rows.append(line("**both**", "all", r["total"], bold=True))
    head = [
        "batch",
        "kind",
        "answers",
        "claims citing no step",
        "grounded, right steps",
        "grounded wrongly",
        "missed",
        "precision",
        "recall",
    ]
    targets = r["targets"]
    note = (
        "The evidence gate on a hand-labelled corpus (`bench/grounding_corpus.py`: prose answers, `finish` with only "
        "`answer`, and typed findings over one recorded and two built traces; each claim labelled with the steps that "
        f"show it). Targets over both batches: precision ≥ {targets['precision']:.2f}, recall ≥ "
        f"{targets['recall']:.2f}: {verdict(r['pass'])}."
    )
    wrong = [
        [w["gate"], w["batch"], w["kind"], w["claim"].replace("|", "\\|"), w["label"], w["steps"]] for w in r["wrong"]
    ]
    listed = table(["", "batch", "kind", "claim", "labelled steps", "gate's steps"], wrong) if wrong else "None."
    return (
        f"### (g) Grounding by code\n{note}\n\n{table(head, rows)}\n\nWhere the gate and the labels differ:\n\n{listed}"
    )
