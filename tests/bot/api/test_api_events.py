"""A run's event stream, read as a client reads it: every event once and in order, live or from the start, and
after a reconnect with `Last-Event-ID`; the same events on every read, since they come from the run store."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from bot.slack.action_ids import APPROVE
from kernel import Verification, VerificationOutcome, native_turn
from testkit.slack_bot import ALICE, CHANNEL, FINISH
from worlds.api_world import run_status

READS_AND_AN_ACTION = native_turn(
    ("query_metrics", {"service": "order-service"}),
    ("rollback_deployment", {"service": "order-service", "to_version": "v2.13.2"}),
    ("query_metrics", {"service": "payments"}),
    text="Known: 5xx at 12%. Why: compare, and roll back the bad deploy.",
)
"""One turn: two reads (run at once) around a side effect that pauses for a person: the paused step settles after
the read that follows it, which is what the events' order must survive."""


def ids(events):
    return [event.id for event in events]


async def test_a_live_stream_and_a_later_read_give_the_same_events_once_each(harness, claude, script):
    script.append([READS_AND_AN_ACTION, FINISH])
    run_id = (await claude.investigate("order-service 5xx", channel=CHANNEL)).json["run_id"]
    live = []
    async for event in claude.events(run_id):
        live.append(event)
        if event.event == "approval_requested":  # a person approves while the client watches
            thread = harness.slack.messages(CHANNEL)[0].ts
            message, approval_id = await harness.until(lambda t=thread: harness.approval_message(t), "approval")
            assert await harness.click(APPROVE, approval_id, message.ts, thread, user=ALICE) == 200
    later = await claude.whole_run(run_id)
    assert [(e.id, e.event, e.data) for e in live] == [(e.id, e.event, e.data) for e in later]
    assert len(set(ids(live))) == len(live), "no event twice"
    kinds = [(e.event, e.data.get("step")) for e in live]
    assert kinds == [
        ("step_started", 1),
        ("step_completed", 1),
        ("step_started", 2),
        ("approval_requested", 2),
        ("step_started", 3),
        ("step_completed", 3),
        ("approval_decided", 2),
        ("step_completed", 2),
        ("run_finished", None),
    ]
    assert live[-1].data["status"] == "finished"
    assert live[-1].data["verdict"]["actions"][0]["approved_by"] == ALICE
    assert live[6].data["decision"] == "approved"


async def test_a_client_that_reconnects_with_the_last_id_it_read_gets_the_rest_once(harness, claude, script):
    script.append([READS_AND_AN_ACTION, FINISH])
    run_id = (await claude.investigate("order-service 5xx", channel=CHANNEL)).json["run_id"]
    first = []
    async for event in claude.events(run_id):  # the client drops the stream after the approval is asked
        first.append(event)
        if event.event == "approval_requested":
            break
    thread = harness.slack.messages(CHANNEL)[0].ts
    message, approval_id = await harness.until(lambda: harness.approval_message(thread), "approval")
    assert await harness.click(APPROVE, approval_id, message.ts, thread, user=ALICE) == 200
    await run_status(claude, run_id, "finished")
    rest = await claude.whole_run(run_id, last_event_id=first[-1].id)
    whole = await claude.whole_run(run_id)
    assert ids(first) + ids(rest) == ids(whole)
    assert rest[0].event == "step_started"
    assert rest[-1].event == "run_finished"
    again = await claude.whole_run(run_id, last_event_id=whole[-1].id)
    assert again == [], "after the end, nothing more: the stream just closes"


async def test_the_checks_of_an_action_made_after_the_end_come_after_run_finished_in_the_order_made(
    harness, claude, script
):
    script.append([READS_AND_AN_ACTION, FINISH])
    run_id = (await claude.investigate("order-service 5xx", channel=CHANNEL)).json["run_id"]
    thread = harness.slack.messages(CHANNEL)[0].ts
    message, approval_id = await harness.until(lambda: harness.approval_message(thread), "approval")
    assert await harness.click(APPROVE, approval_id, message.ts, thread, user=ALICE) == 200
    await run_status(claude, run_id, "finished")
    ended = await claude.whole_run(run_id)
    assert ended[-1].event == "run_finished"
    at = datetime(2026, 12, 5, 14, 9, tzinfo=UTC)
    held = Verification(2, 1, at, VerificationOutcome.HELD, 1, "http_5xx_rate", "12.0%", "0.20%", "0.10%–0.12%")
    gone = Verification(2, 2, at, VerificationOutcome.DID_NOT_HOLD, 1, "http_5xx_rate", "12.0%", "9.0%", "0.10%")
    runs = harness.services.store.runs  # what the checks' service writes once a check is made
    assert await runs.record_verification(run_id, held)
    first = await claude.whole_run(run_id, last_event_id=ended[-1].id)
    assert await runs.record_verification(run_id, gone)
    second = await claude.whole_run(run_id, last_event_id=first[-1].id)
    assert [(e.event, e.data["check"], e.data["outcome"]) for e in first + second] == [
        ("verification", 1, "held"),
        ("verification", 2, "did_not_hold"),
    ]
    assert first[0].data["line"] == "verified 14:09 UTC: http_5xx_rate 12.0% → 0.20% · held"
    assert ids(await claude.whole_run(run_id)) == ids(ended) + ids(first) + ids(second)
    view = (await claude.call("GET", f"/v1/investigations/{run_id}")).json
    assert view["verdict"]["actions"][0]["verified"]["outcome"] == "did_not_hold", "the latest check"


async def test_a_last_event_id_this_api_never_sent_is_refused(harness, claude, script):
    script.append([FINISH])
    run_id = (await claude.investigate("order-service 5xx")).json["run_id"]
    answer = await claude.call("GET", f"/v1/investigations/{run_id}/events", headers={"Last-Event-ID": "x; DROP"})
    assert answer.status == 400
    assert answer.json["code"] == "invalid_last_event_id"
    assert json.dumps(answer.json).count("DROP") == 0, "the caller's junk is not echoed back"
