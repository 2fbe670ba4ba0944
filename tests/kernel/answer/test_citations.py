"""The one citation parser: which steps a text cites, as the gate, the prose mapping and Slack read them."""

from __future__ import annotations

from kernel import cited_steps, step_references
from kernel.answer.citations import without_trailing_citation


def test_step_references() -> None:
    refs = step_references("Steps 1, 2 and 6 agree; see step #9 and step 3 to 5, not step 7 and 200 users.")
    assert refs.leading == {1, 9, 3, 7}
    assert refs.numbers == {1, 2, 6, 9, 3, 5, 7, 200}
    assert refs.ranges == ((3, 5),)
    assert 4 in refs
    assert 8 not in refs
    assert "4" not in refs


def test_cited_steps_expand_ranges_but_not_absurd_ones():
    assert cited_steps("steps 4-6 and step 2") == (2, 4, 5, 6)
    assert cited_steps("steps 1–100000") == (1, 100000)
    assert cited_steps("no citation here, 3 of 4 pods") == ()


def test_a_trailing_citation_is_dropped_from_a_claim():
    assert without_trailing_citation("5xx rose at t-11m (steps 1-2).") == "5xx rose at t-11m."
    assert without_trailing_citation("the diff [step 3]") == "the diff"
    assert without_trailing_citation("step 3 shows the diff") == "step 3 shows the diff"
    assert without_trailing_citation("pool of 4 (down from 64)") == "pool of 4 (down from 64)"
