"""The hand-labelled grounding corpus (`bench/grounding_corpus.py`) scored as suite (g) scores it: its targets hold,
every claim the gate checks has a label, and a label that no longer matches the gate's claims is an error."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.grounding_bench import CorpusError, grounding, judged, outcome
from bench.grounding_corpus import CORPUS, HELD_OUT, Kind, traces


def test_the_corpus_has_thirty_answers_and_more_of_every_kind():
    cases = (*CORPUS, *HELD_OUT)
    assert len(cases) >= 30
    assert {kind: sum(case.kind is kind for case in cases) >= 5 for kind in Kind} == dict.fromkeys(Kind, True)
    assert any(not label for case in cases for _, label in case.labels), "claims no step shows are labelled too"


def test_grounded_by_code_reaches_its_targets_on_the_labelled_corpus():
    scored = grounding()
    assert scored["total"]["claims"] >= 100
    assert scored["total"]["precision"] >= 0.95, scored["wrong"]
    assert scored["total"]["recall"] >= 0.8, scored["wrong"]
    assert scored["pass"]


def test_a_claim_linked_to_a_step_the_label_does_not_name_counts_against_precision():
    case = CORPUS[0]
    claim, steps = case.labels[1]
    assert steps == (1, 2)
    moved = replace(case, labels=tuple((text, (3,) if text == claim else label) for text, label in case.labels))
    [(check, label)] = [(check, label) for check, label in judged(moved, traces()) if check.text == claim]
    assert check.grounded, "by steps the label does not name"
    assert (outcome(check, label), outcome(check, steps)) == ("fp", "tp")
    assert outcome(check, ()) == "fp", "grounded where the label says no step shows it"


def test_a_label_the_gate_does_not_check_is_an_error_of_the_corpus():
    case = CORPUS[0]
    with pytest.raises(CorpusError, match="labels of no claim"):
        judged(replace(case, labels=(*case.labels, ("A sentence the answer does not say.", ()))), traces())
    with pytest.raises(CorpusError, match="no label for"):
        judged(replace(case, labels=case.labels[1:]), traces())
