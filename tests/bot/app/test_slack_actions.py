"""Every side effect in the verdict, end to end on the fake Slack: a denied rollback is in the verdict's actions,
denied by whom, and under next steps as a step by hand; a follow-up in the same thread starts knowing what the
earlier run did, and an approval for the same call says it already ran (when, approved by whom)."""

from __future__ import annotations

import json
from typing import Any

from bot.slack.action_ids import APPROVE, DENY
from kernel import text_turn
from testkit.slack_bot import ALICE, FINISH, ROLLBACK, fenced


def summary_text(verdict: Any) -> str:
    return "\n".join(b["text"]["text"] for b in verdict.blocks if b["type"] == "section")


async def decide(harness: Any, ts: str, action_id: str) -> None:
    """Click `action_id` (Approve or Deny) on the thread's approval message as alice, an approver."""
    message, approval_id = await harness.until(lambda: harness.approval_message(ts), "the approval message")
    assert await harness.click(action_id, approval_id, message.ts, ts, user=ALICE) == 200


async def test_a_denied_rollback_is_in_the_verdict_denied_by_whom_and_a_next_step_by_hand(harness, script):
    script.append([text_turn("query_metrics", service="order-service"), ROLLBACK, FINISH])
    ts = await harness.mention("roll back order-service")
    await decide(harness, ts, DENY)
    shown = summary_text(await harness.ended(ts))
    actions = shown[shown.index("*Actions*") :]
    assert "🚫 *2* `rollback_deployment order-service v2.13.2` · denied by <@U0ALICE> at <!date^" in actions
    assert "Next steps" in shown
    assert "• `rollback_deployment order-service v2.13.2` by hand, if you agree (step 2 was denied)" in shown
    assert harness.executed == [], "nothing ran"


async def test_a_follow_up_knows_the_rollback_ran_and_its_approval_says_the_same_call_ran(harness, script):
    again = text_turn("rollback_deployment", "Roll back again.", service="order-service", to_version="v2.13.2")
    script.extend([[ROLLBACK, FINISH], [again, FINISH]])
    ts = await harness.mention("roll back order-service")
    await decide(harness, ts, APPROVE)
    await harness.until(lambda: harness.reacted(ts, "white_check_mark"), "the first run ends")
    assert harness.executed == [("order-service", "v2.13.2")]

    await harness.mention("is it fixed? roll back if not", thread_ts=ts)
    asked = await harness.until(
        lambda: [m for m in harness.thread(ts) if m.blocks and "The same call ran" in json.dumps(m.blocks)],
        "the follow-up's approval, saying the same call ran",
    )
    said = json.dumps(asked[-1].blocks, ensure_ascii=False)
    assert "*The same call ran at <!date^" in said
    assert f"in this thread, approved by <@{ALICE}>* (step 1 of an earlier run): rolled back order-service" in said
    first_message = harness.models[1].requests[0].messages[0].content
    authority, data = fenced(first_message)
    assert "rollback_deployment" not in authority, "the earlier actions are data, never the task"
    [earlier] = [part for part in data if "Earlier in this conversation" in part]
    assert "Side effects it proposed, and what came of each (from its trace, not its answer):" in earlier
    assert f"- step 1 rollback_deployment order-service v2.13.2: done, approved by {ALICE} at " in earlier
    assert "UTC: rolled back order-service to v2.13.2" in earlier
