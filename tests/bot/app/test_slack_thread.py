"""The thread a responder reads, end to end on the fake Slack: one summary kept current within Slack's update
limits (its final state written through a 429 storm too), approvals that name their approvers and collapse to one
line, the evidence gate in the verdict, hostile text that cannot ping or spoof anything, and 👍/👎 kept per person.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.slack.action_ids import APPROVE, FEEDBACK, FEEDBACK_REASON, STOP
from bot.slack.feedback import REASON_BLOCK, REASON_INPUT
from bot.store.records import Rating
from kernel import native_turn, text_turn
from samples.slack_messages import HOSTILE
from testkit.slack_bot import ALICE, BOB, CAROL, CHANNEL, FINISH, ROLLBACK, ratings_when

RAW_TOKENS = ("<!channel>", "<!here>", "<@U0EVIL99>", "<!subteam^S0EVIL>", "<#C0EVIL>", "<https://evil")


def everything_posted(harness: Any, ts: str) -> str:
    """Every text and block the thread ever showed, each message's earlier versions included."""
    return json.dumps([[m.text, m.blocks, m.edits] for m in harness.thread(ts)[1:]], default=str, ensure_ascii=False)


def summary_updates(harness: Any, summary_ts: str) -> list[Any]:
    return [c for c in harness.slack.calls_to("chat.update") if c.params.get("ts") == summary_ts]


def thinking(hypothesis: str) -> str:
    return f"Known: a little more.\nHypothesis: {hypothesis} (likely)"


async def test_the_summary_goes_from_live_to_the_verdict_coalesced_within_slacks_update_limits(harness, script):
    harness.slack.rate_limit("chat.update", per_second=1.0, per_message=True, burst=1)
    harness.slack.rate_limit("chat.update", per_second=50 / 60, per_channel=False, burst=50)
    steps = [text_turn("slow", thinking(f"cause {i}"), seconds=0.3 + i / 100) for i in range(8)]
    script.append([*steps, FINISH])
    ts = await harness.mention("checkout 5xx, find the root cause")
    verdict = await harness.ended(ts, within=30)
    first = verdict.edits[0]
    assert first["text"] == "🔎 Investigating: checkout 5xx, find the root cause"
    assert STOP in json.dumps(first["blocks"]), "posted at once, with its Stop button"
    assert "Leading hypothesis" in json.dumps(verdict.edits[-1]["blocks"]), "kept current while it ran"
    assert STOP not in json.dumps(verdict.blocks)
    assert "v2.14.0" in json.dumps(verdict.blocks), "and the verdict at the end"
    updates = summary_updates(harness, verdict.ts)
    assert 2 <= len(updates) < 9, f"coalesced: 8 changes of the hypothesis, {len(updates)} updates"
    assert not [c for c in harness.slack.calls_to("chat.update") if c.status == 429], "never faster than allowed"


async def test_the_verdict_is_written_through_a_429_storm(harness, script):
    script.append([text_turn("query_metrics", service="order-service"), FINISH])
    harness.slack.fail_next("chat.update", times=6, status=429, retry_after=1)
    ts = await harness.mention("checkout 5xx, find the root cause")
    verdict = await harness.ended(ts, within=40)
    assert "v2.14.0" in json.dumps(verdict.blocks)
    assert sum(1 for c in harness.slack.calls_to("chat.update") if c.status == 429) == 6


@pytest.mark.parametrize("slack_settings", [{"approver_groups": ["S0SRE1"]}], indirect=True)
async def test_the_approval_follows_its_step_names_the_approvers_and_collapses_once_decided(harness, script):
    script.append([text_turn("query_metrics", service="order-service"), ROLLBACK, FINISH])
    ts = await harness.mention("roll back order-service")
    message, approval_id = await harness.until(lambda: harness.approval_message(ts), "the approval message")
    thread = harness.thread(ts)
    step_index = next(
        i for i, m in enumerate(thread) if i > 1 and "query_metrics order-service" in json.dumps(m.blocks)
    )
    assert thread.index(message) == step_index + 1, "the approval follows the step before it, and is its step"
    asked = json.dumps(message.blocks)
    assert f"*needs approval* from <@{ALICE}>, <!subteam^S0SRE1>" in asked, "real mentions: they are notified"
    assert f"<@{ALICE}>, <!subteam^S0SRE1>" in message.text
    sections = [b["text"]["text"] for b in message.blocks if b["type"] == "section"]
    assert "".join(sections).count("rollback_deployment") == 1, "the call once (the confirm dialog names it on click)"
    waiting = await harness.until(
        lambda: "waits for approval" in json.dumps(harness.summary(ts).blocks) and harness.summary(ts),
        "the summary says what it waits for",
    )
    assert f"waits for approval from <@{ALICE}>, <!subteam^S0SRE1>" in json.dumps(waiting.blocks)
    await harness.click(APPROVE, approval_id, message.ts, ts)
    await harness.ended(ts)
    line = await harness.until(
        lambda: (
            "rolled back" in json.dumps(harness.slack.message(CHANNEL, message.ts).blocks)
            and harness.slack.message(CHANNEL, message.ts).blocks
        ),
        "one line: who approved, when, what came of it",
    )
    assert len(line) == 1
    assert f"approved by <@{ALICE}> at <!date^" in line[0]["text"]["text"]
    others = [m for m in harness.thread(ts)[2:] if m.ts != message.ts and "rollback" in json.dumps(m.blocks)]
    assert others == [], "the call and its reason are shown once"


async def test_the_evidence_gate_is_shown_in_the_verdict(harness, script):
    finish = text_turn(
        "finish",
        summary="v2.14.0 broke checkout.",
        confidence="confirmed",
        evidence=[{"claim": "5xx jumped", "steps": [1]}, {"claim": "the gateway times out", "steps": [9]}],
    )
    script.append([text_turn("query_metrics", service="order-service"), finish])
    ts = await harness.mention("checkout 5xx, find the root cause")
    shown = json.dumps((await harness.ended(ts)).blocks, ensure_ascii=False)
    assert "lowered from confirmed to likely: 1 of 2 evidence claims is unsupported" in shown
    assert "_unsupported (step 9 does not exist):_ the gateway times out" in shown


async def test_reads_that_ran_at_once_say_so_once_on_the_first_of_them(harness, script):
    reads = native_turn(*(("slow", {"seconds": seconds}) for seconds in (0.05, 0.03, 0.01)), text="Known: little.")
    script.append([reads, FINISH])
    ts = await harness.mention("checkout 5xx, find the root cause")
    await harness.ended(ts)
    steps = [m for m in harness.thread(ts)[2:] if m.blocks and "slow" in m.text]
    said = [json.dumps(m.blocks, ensure_ascii=False).count("⇉ 3 reads in parallel: steps 1, 2, 3") for m in steps]
    assert sum(said) == 1, f"the group is named once: {said}"
    first = json.dumps(steps[0].blocks, ensure_ascii=False)
    assert first.index("*1*") < first.index("⇉ 3 reads in parallel"), "on the group's first step, in call order"


async def test_hostile_text_cannot_ping_or_spoof_in_any_message_of_the_thread(harness, script):
    finish = text_turn(
        "finish",
        HOSTILE,
        summary=HOSTILE,
        root_cause=HOSTILE,
        confidence="likely",
        evidence=[{"claim": HOSTILE, "steps": [1]}],
        ruled_out=[{"hypothesis": HOSTILE, "steps": [1]}],
        next_steps=[HOSTILE],
    )
    rollback = text_turn("rollback_deployment", HOSTILE, service=HOSTILE, to_version="v1")
    script.append([text_turn("query_metrics", f"{HOSTILE}\nHypothesis: {HOSTILE}", service=HOSTILE), rollback, finish])
    ts = await harness.mention(f"why 5xx? {HOSTILE}")
    message, approval_id = await harness.until(lambda: harness.approval_message(ts), "the approval message")
    await harness.click(APPROVE, approval_id, message.ts, ts)
    await harness.ended(ts)
    await harness.until(lambda: "rolled back" in json.dumps(harness.slack.message(CHANNEL, message.ts).blocks), "done")
    shown = everything_posted(harness, ts)
    for token in RAW_TOKENS:
        assert token not in shown, token
    assert "&lt;!channel&gt;" in shown, "the hostile text was shown, escaped"
    assert f"<@{ALICE}>" in shown, "our own mentions stay real mentions"


async def test_a_rating_is_kept_per_person_last_click_winning_and_a_thumbs_down_asks_why(harness, script):
    script.append([FINISH])
    ts = await harness.mention("checkout 5xx, find the root cause")
    verdict = await harness.ended(ts)
    [buttons] = next(b for b in verdict.blocks if b["type"] == "context_actions")["elements"]
    up, down = buttons["positive_button"]["value"], buttons["negative_button"]["value"]
    run_id = up.split(":", 1)[1]
    store = harness.services.store

    async def click(value: str, user: str) -> None:
        assert await harness.click(FEEDBACK, value, verdict.ts, ts, user=user, element_type="feedback_buttons") == 200

    await click(up, ALICE)
    await click(up, BOB)
    await ratings_when(store, run_id, lambda got: len(got) == 2)
    assert harness.slack.views == [], "a 👍 asks nothing"
    await click(down, ALICE)
    [opened] = await harness.until(lambda: harness.slack.views, "the modal asking why")
    assert (opened.view["callback_id"], opened.view["private_metadata"]) == (FEEDBACK_REASON, run_id)
    reason = f"wrong service, it was payments {HOSTILE} password=hunter2hunter2"
    assert await harness.submit(harness.slack.submission(opened.id, {REASON_BLOCK: {REASON_INPUT: reason}})) == 200
    got = await ratings_when(store, run_id, lambda got: got[ALICE][1])
    assert got[BOB] == (Rating.UP, "")
    assert got[ALICE][0] is Rating.DOWN, "ALICE's last click wins"
    assert got[ALICE][1].startswith("wrong service, it was payments")
    assert "hunter2hunter2" not in got[ALICE][1], "the reason is redacted where it enters the store"
    audit = [e for e in await store.audit.audit_log(run_id=run_id) if e.kind == "feedback_given"]
    assert [(e.actor, e.detail["rating"]) for e in audit] == [
        (ALICE, "up"),
        (BOB, "up"),
        (ALICE, "down"),
        (ALICE, "down"),
    ]
    await click(f"up:{run_id}0", BOB)  # a forged value: no such run
    await click(up, CAROL)
    got = await ratings_when(store, run_id, lambda got: CAROL in got)
    assert set(got) == {ALICE, BOB, CAROL}, "the forged click was dropped"
