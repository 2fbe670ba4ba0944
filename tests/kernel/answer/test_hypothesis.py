"""The working hypothesis: an optional `Hypothesis: … (likely)` line of a thought, recorded on its step."""

from __future__ import annotations

import pytest

from kernel import Agent, Confidence, Hypothesis, ScriptedModel, hypothesis_in, native_turn, text_turn
from kernel.prompt import INSTRUCTIONS


@pytest.mark.parametrize(
    ("thought", "expected"),
    [
        (
            "Known: 5xx at t-11m.\nHypothesis: the v3.8.0 timeout change (likely)",
            Hypothesis("the v3.8.0 timeout change", Confidence.LIKELY),
        ),
        ("**Hypothesis:** payments is down [inconclusive].", Hypothesis("payments is down", Confidence.INCONCLUSIVE)),
        ("- Working hypothesis: TLS expiry (Confirmed)", Hypothesis("TLS expiry", Confidence.CONFIRMED)),
        ("Hypothesis: pool exhaustion", Hypothesis("pool exhaustion")),
        ("Hypothesis: a (likely)\nMore.\nHypothesis: b (inconclusive)", Hypothesis("b", Confidence.INCONCLUSIVE)),
        ("Known: nothing yet. Why: the metrics first.", None),
        ("My hypothesis is still open.", None),
        ("Hypothesis:   ", None),
    ],
)
def test_the_labelled_line_is_read(thought, expected):
    assert hypothesis_in(thought) == expected


def test_a_long_hypothesis_is_cut_to_one_line():
    found = hypothesis_in("Hypothesis: " + "x" * 1000)
    assert found is not None
    assert len(found.text) == 300


async def test_each_step_records_the_hypothesis_its_thought_states(tools):
    script = [
        text_turn("query_metrics", "Known: nothing yet.", service="order-service"),
        text_turn(
            "search_logs",
            "Known: 5xx at t-10m (step 1).\nHypothesis: the v2.14.0 deploy (likely)",
            service="order-service",
        ),
        native_turn(
            ("finish", {"summary": "v2.14.0 broke it.", "confidence": "likely"}), text="Hypothesis: v2.14.0 (confirmed)"
        ),
    ]
    model = ScriptedModel(script)
    result = await Agent(llm=model, tools=tools).run("t")
    assert [s.hypothesis for s in result.steps] == [
        None,
        Hypothesis("the v2.14.0 deploy", Confidence.LIKELY),
        Hypothesis("v2.14.0", Confidence.CONFIRMED),
    ]
    assert result.leading_hypothesis == Hypothesis("v2.14.0", Confidence.CONFIRMED)


def test_the_instructions_ask_for_it_in_one_line():
    assert "`Hypothesis: <it> (confirmed|likely|inconclusive)`" in INSTRUCTIONS
