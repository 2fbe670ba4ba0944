"""Findings as the typed final answer: `finish`'s fields validated, prose mapped onto them, bad fields fixable."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernel import (
    Agent,
    Budget,
    Confidence,
    ErrorKind,
    Evidence,
    Findings,
    FinishedBy,
    RuledOut,
    ScriptedModel,
    StopReason,
    findings_from_prose,
    native_turn,
    text_turn,
)
from kernel.answer.conclusion import Conclusion, InvalidFinish, conclude
from kernel.prompt import finish_spec

TYPED = {
    "summary": "v3.8.0 cut the payments timeout from 2s to 200ms.",
    "root_cause": "upstream_timeout 2s → 200ms in v3.8.0, while payments p99 is about 500ms.",
    "confidence": "confirmed",
    "evidence": [{"claim": "5xx went from 0.2% to 31% one minute after the rollout", "steps": [1]}],
    "ruled_out": [{"hypothesis": "an expired TLS certificate", "steps": [2]}],
    "next_steps": ["Roll back checkout to v3.7.2."],
}


def test_typed_fields_become_findings_and_a_markdown_answer():
    conclusion = conclude(TYPED)
    assert isinstance(conclusion, Conclusion)
    assert conclusion.by is FinishedBy.FINISH
    assert conclusion.findings == Findings(
        summary="v3.8.0 cut the payments timeout from 2s to 200ms.",
        root_cause="upstream_timeout 2s → 200ms in v3.8.0, while payments p99 is about 500ms.",
        confidence=Confidence.CONFIRMED,
        evidence=(Evidence(claim="5xx went from 0.2% to 31% one minute after the rollout", steps=(1,)),),
        ruled_out=(RuledOut(hypothesis="an expired TLS certificate", steps=(2,)),),
        next_steps=("Roll back checkout to v3.7.2.",),
    )
    assert conclusion.answer == (
        "v3.8.0 cut the payments timeout from 2s to 200ms.\n"
        "**Root cause:** upstream_timeout 2s → 200ms in v3.8.0, while payments p99 is about 500ms.\n"
        "**Confidence:** confirmed\n\n"
        "**Evidence:**\n- 5xx went from 0.2% to 31% one minute after the rollout (step 1)\n\n"
        "**Ruled out:**\n- an expired TLS certificate (step 2)\n\n"
        "**Next steps:**\n- Roll back checkout to v3.7.2."
    )


def test_only_an_answer_still_works_and_is_mapped():
    conclusion = conclude({"answer": "Root cause: bad deploy v2.14.0 (steps 1-2). Confidence: high."})
    assert isinstance(conclusion, Conclusion)
    assert conclusion.answer == "Root cause: bad deploy v2.14.0 (steps 1-2). Confidence: high."
    assert conclusion.findings.summary == "bad deploy v2.14.0."
    assert conclusion.findings.confidence is Confidence.CONFIRMED
    assert conclusion.findings.evidence == (Evidence(claim="bad deploy v2.14.0.", steps=(1, 2)),)


def test_typed_fields_win_over_the_answer_and_the_rest_is_read_from_it():
    conclusion = conclude(
        {"answer": "The pool is exhausted (step 2).\n\nNext steps: raise the pool", "confidence": "likely"}
    )
    assert isinstance(conclusion, Conclusion)
    assert conclusion.findings.confidence is Confidence.LIKELY
    assert conclusion.findings.summary == "The pool is exhausted."
    assert conclusion.findings.next_steps == ("raise the pool",)


def test_lenient_where_it_is_unambiguous():
    conclusion = conclude(
        {
            "summary": "s",
            "confidence": " Likely ",
            "evidence": "5xx rose at t-11m (steps 1, 3)",
            "ruled_out": [{"hypothesis": "TLS", "steps": 4}],
            "next_steps": "roll back",
            "impact": "an extra field the schema does not have",
        }
    )
    assert isinstance(conclusion, Conclusion)
    assert conclusion.findings.confidence is Confidence.LIKELY
    assert conclusion.findings.evidence == (Evidence(claim="5xx rose at t-11m", steps=(1, 3)),)
    assert conclusion.findings.ruled_out == (RuledOut(hypothesis="TLS", steps=(4,)),)
    assert conclusion.findings.next_steps == ("roll back",)


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (
            {"summary": "s", "confidence": "high"},
            "- confidence: Input should be 'confirmed', 'likely' or 'inconclusive'",
        ),
        (
            {"summary": "s", "evidence": [{"claim": "c", "steps": ["2"]}]},
            "- evidence.0.steps.0: Input should be a valid integer",
        ),
        (
            {"summary": "s", "evidence": [{"claim": "c", "steps": [2.5]}]},
            "- evidence.0.steps.0: Input should be a valid integer",
        ),
        (
            {"summary": "s", "evidence": [{"claim": "c", "steps": [True]}]},
            "- evidence.0.steps.0: Input should be a valid integer",
        ),
        (
            {"summary": "s", "evidence": [{"claim": "c", "steps": [0]}]},
            "- evidence.0.steps.0: Input should be greater than or equal to 1",
        ),
        ({"summary": "s", "evidence": [{"steps": [1]}]}, "- evidence.0.claim: Field required"),
        ({"summary": ["not", "text"]}, "- summary: Input should be a valid string"),
    ],
)
def test_invalid_fields_are_named(args, problem):
    invalid = conclude(args)
    assert isinstance(invalid, InvalidFinish)
    assert problem in invalid.problems


def test_no_summary_and_no_answer_is_nothing_to_conclude_with():
    assert conclude({"confidence": "likely"}) == InvalidFinish(())
    assert conclude({"summary": "  ", "answer": ""}) == InvalidFinish(())


async def test_an_invalid_finish_is_a_bad_args_error_the_model_fixes(tools):
    bad = native_turn(
        ("finish", {"summary": "v2.14.0", "confidence": "high", "evidence": [{"claim": "c", "steps": ["1"]}]})
    )
    good = native_turn(("finish", {"summary": "v2.14.0 broke checkout.", "confidence": "likely"}), start_id=2)
    model = ScriptedModel([bad, good])
    result = await Agent(llm=model, tools=tools).run("t")
    model.assert_complete()
    assert result.ok
    assert [(s.call.name, s.error) for s in result.steps] == [("finish", ErrorKind.BAD_ARGS), ("finish", None)]
    observation = result.steps[0].observation
    assert observation.startswith("[ToolError] bad_args: Invalid arguments for 'finish':\n")
    assert "- confidence: Input should be 'confirmed', 'likely' or 'inconclusive'" in observation
    assert "- evidence.0.steps.0: Input should be a valid integer" in observation
    assert 'confidence: "confirmed" | "likely" | "inconclusive"' in observation
    assert "evidence: {claim: string, steps: integer[]}[]" in observation


async def test_a_finish_without_findings_says_what_it_needs(tools):
    model = ScriptedModel([text_turn("finish", confidence="likely"), text_turn("finish", summary="Found it.")])
    result = await Agent(llm=model, tools=tools).run("t")
    assert result.steps[0].observation == (
        "[ToolError] bad_args: 'finish' was called without findings. Give your findings: at least a non-empty "
        "'summary' (one sentence)."
    )
    assert result.ok
    assert result.answer == "Found it."


def test_the_finish_schema_offers_exactly_the_findings_fields():
    offered = set(finish_spec().parameters["properties"])
    assert offered == set(Findings.model_fields)
    assert finish_spec().parameters["properties"]["confidence"]["enum"] == [c.value for c in Confidence]


PROSE = """## Summary
Checkout 5xx comes from the v3.8.0 timeout change.

**Root cause:** upstream_timeout went from 2s to 200ms in v3.8.0 (step 3).
**Confidence:** high — the diff and the change point agree.

5xx went from 0.2% to 31% at t-11m (step 1). The gateway logged 217 504s from checkout (steps 1-2).
The TLS certificate was ruled out: 21 days left (step 4).

### Recommended actions
1. Roll back checkout to v3.7.2.
2. Restore the timeout to at least 2s before re-release.

Let me know if you need more."""


def test_prose_is_mapped_by_labels_sections_and_citations():
    assert findings_from_prose(PROSE) == Findings(
        summary="Checkout 5xx comes from the v3.8.0 timeout change.",
        root_cause="upstream_timeout went from 2s to 200ms in v3.8.0.",
        confidence=Confidence.CONFIRMED,
        evidence=(
            Evidence(claim="upstream_timeout went from 2s to 200ms in v3.8.0.", steps=(3,)),
            Evidence(claim="5xx went from 0.2% to 31% at t-11m.", steps=(1,)),
            Evidence(claim="The gateway logged 217 504s from checkout.", steps=(1, 2)),
        ),
        ruled_out=(RuledOut(hypothesis="The TLS certificate was ruled out: 21 days left.", steps=(4,)),),
        next_steps=("Roll back checkout to v3.7.2.", "Restore the timeout to at least 2s before re-release."),
    )


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("The deploy did it. Confidence: medium.", Confidence.LIKELY),
        ("The deploy did it, with low confidence.", Confidence.INCONCLUSIVE),
        ("Root cause: the deploy (likely).", Confidence.LIKELY),
        ("It is most likely the deploy.", None),
    ],
)
def test_confidence_is_read_only_where_it_is_stated(text, level):
    assert findings_from_prose(text).confidence is level


def test_a_plain_sentence_is_a_summary_without_evidence():
    assert findings_from_prose("The pool is exhausted.") == Findings(summary="The pool is exhausted.")


def cited_answer(claims: int, *, one_paragraph: bool) -> str:
    """A prose answer with `claims` sentences that cite a step, one per line or all in one paragraph, then its first
    claim again, and a confidence label: on the paragraph's own line, or opening its last sentence."""
    cited = [f"The pool of db-{i} was full at 10:{i % 60:02d} (step {i % 9 + 1})." for i in range(claims)]
    if one_paragraph:
        return "\n".join(["Summary: the database pool ran out.", " ".join([*cited, cited[0], "Confidence: likely."])])
    return "\n".join(["Summary: the database pool ran out.", *cited, cited[0], "Confidence: likely"])


@pytest.mark.parametrize("one_paragraph", [False, True], ids=["5000 lines", "a 5000-sentence paragraph"])
def test_a_long_prose_answer_maps_as_its_short_equivalent_claim_for_claim(one_paragraph):
    short = findings_from_prose(cited_answer(3, one_paragraph=one_paragraph))
    long = findings_from_prose(cited_answer(5000, one_paragraph=one_paragraph))
    assert short == Findings(
        summary="the database pool ran out.",
        confidence=Confidence.LIKELY,
        evidence=tuple(Evidence(claim=f"The pool of db-{i} was full at 10:0{i}.", steps=(i + 1,)) for i in range(3)),
    )
    assert len(long.evidence) == 5000, "every claim once: the repeated first one is not a second claim"
    assert long.model_copy(update={"evidence": long.evidence[:3]}) == short
    assert long.evidence[4321] == Evidence(claim="The pool of db-4321 was full at 10:01.", steps=(2,))
    assert long.evidence[-1] == Evidence(claim="The pool of db-4999 was full at 10:19.", steps=(5,))


WORDS = (
    st.text(alphabet=st.sampled_from("abcdefghij klmno"), min_size=1, max_size=40)
    .map(lambda s: " ".join(s.split()))
    .filter(lambda s: len(s) > 0)
)


@given(
    summary=WORDS,
    root_cause=WORDS,
    confidence=st.sampled_from(Confidence),
    evidence=st.lists(st.tuples(WORDS, st.lists(st.integers(1, 40), min_size=1, max_size=3, unique=True)), max_size=3),
    ruled_out=st.lists(st.tuples(WORDS, st.lists(st.integers(1, 40), min_size=1, max_size=2, unique=True)), max_size=2),
    next_steps=st.lists(WORDS, max_size=3),
)
def test_the_markdown_answer_reads_back_as_the_same_findings(
    summary, root_cause, confidence, evidence, ruled_out, next_steps
):
    findings = Findings(
        summary=f"Summary {summary}.",
        root_cause=root_cause,
        confidence=confidence,
        evidence=tuple(Evidence(claim=c, steps=tuple(sorted(s))) for c, s in evidence),
        ruled_out=tuple(RuledOut(hypothesis=h, steps=tuple(sorted(s))) for h, s in ruled_out),
        next_steps=tuple(next_steps),
    )
    assert findings_from_prose(findings.markdown()) == findings


async def test_a_typed_finish_in_the_summary_turn_is_rendered_as_the_partial_answer(tools):
    summary = native_turn(("finish", {"summary": "a jumped at t-10m.", "evidence": [{"claim": "a", "steps": [1]}]}))
    model = ScriptedModel([text_turn("query_metrics", service="a"), summary])
    result = await Agent(llm=model, tools=tools, budget=Budget(max_steps=1)).run("t")
    model.assert_complete()
    assert result.stop_reason is StopReason.MAX_STEPS
    assert result.partial_answer == "a jumped at t-10m.\n\n**Evidence:**\n- a (step 1)"
    assert result.findings is None, "a partial answer is not a conclusion"
