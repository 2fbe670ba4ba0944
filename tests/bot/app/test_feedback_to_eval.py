"""The loop from production to the eval suite, whole: a 👎 and its reason given in the fake Slack become a scenario
that `opsagent eval --scripted` runs, and the rated-wrong investigation, replayed, fails on the corrected answer."""

from __future__ import annotations

from bot.eval.export import rated_scenarios, write_scenarios
from bot.eval.run import run_evaluation, scripted_model
from bot.eval.scenarios import load_scenarios
from bot.eval.tools import catalogue_names
from bot.slack.action_ids import FEEDBACK
from bot.slack.feedback import REASON_BLOCK, REASON_INPUT
from kernel import text_turn
from testkit.slack_bot import ALICE, ratings_when

WRONG = text_turn(
    "finish",
    summary="Checkout failed after the deploy.",
    root_cause="The deploy broke it.",
    confidence="likely",
    evidence=[{"claim": "5xx jumped", "steps": [1]}],
)


async def test_a_thumbs_down_and_its_reason_in_slack_become_a_scenario_that_eval_runs(harness, script, tmp_path):
    script.append([text_turn("query_metrics", "Why: the 5xx.", service="checkout"), WRONG])
    ts = await harness.mention("checkout 5xx, find the root cause")
    verdict = await harness.ended(ts)
    [buttons] = next(b for b in verdict.blocks if b["type"] == "context_actions")["elements"]
    down = buttons["negative_button"]["value"]
    run_id = down.split(":", 1)[1]
    clicked = await harness.click(FEEDBACK, down, verdict.ts, ts, user=ALICE, element_type="feedback_buttons")
    assert clicked == 200
    [opened] = await harness.until(lambda: harness.slack.views, "the modal asking why")
    reason = "no: the `payments-db` pool was exhausted"
    assert await harness.submit(harness.slack.submission(opened.id, {REASON_BLOCK: {REASON_INPUT: reason}})) == 200
    await ratings_when(harness.services.store, run_id, lambda got: ALICE in got and got[ALICE][1])

    names = catalogue_names()
    texts, skipped = await rated_scenarios(harness.services.store.feedback, harness.services.store.runs, names)
    assert skipped == []
    [written], failed = write_scenarios(texts, tmp_path, names)
    assert failed == []
    assert written.name == f"feedback-{run_id}.toml"
    [scenario] = load_scenarios(tmp_path, names)
    report = await run_evaluation([scenario], scripted_model)
    [outcome] = report.outcomes
    assert outcome.passed is False, "the replayed investigation reaches the answer rated wrong"
    assert outcome.scores.problems() == ["answer: missing fact: names payments-db (any of payments\\-db)"]
