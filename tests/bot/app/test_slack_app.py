"""The Slack bot end to end in HTTP mode: signed events and clicks in, a fake Slack Web API out.

The model is a strict scripted one; Slack is `fakes.slack_api.SlackFake`, a real HTTP server speaking the
Web API's JSON; requests reach the app exactly as Slack sends them, signed.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from bot.slack.action_ids import APPROVE, DENY, STOP
from kernel import text_turn
from testkit.fakes.slack_requests import app_mention_event, signed_event
from testkit.fakes.slack_workspace import SIGNING_SECRET
from testkit.slack_bot import ALICE, BOB, CHANNEL, FINISH, GUEST, ROLLBACK, fenced

THREAD_URL = f"https://opsagent-test.slack.com/archives/{CHANNEL}"


async def test_a_mention_becomes_a_full_investigation_thread(harness, script):
    script.append([text_turn("query_metrics", "Known: nothing.", service="order-service"), FINISH])
    ts = await harness.mention("order-service 5xx at 12%, find the root cause")
    verdict = await harness.ended(ts)
    thread = harness.thread(ts)
    assert harness.reacted(ts, "eyes")
    assert harness.reacted(ts, "white_check_mark")
    first = harness.slack.message(CHANNEL, verdict.ts).edits[0]
    assert "Investigating" in first["text"], "the summary is posted first, as the run starts"
    assert STOP in json.dumps(first["blocks"]), "with a Stop button while the run goes on"
    assert STOP not in json.dumps(verdict.blocks), "and none once it ended"
    assert "v2.14.0" in json.dumps(verdict.blocks), "the summary became the verdict"
    step = json.dumps(thread[2].blocks)
    assert "query_metrics order-service" in step
    assert "jumped from 0.10% to 12.0%" in step
    assert len(thread) == 5, "then the trace file and one last reply"
    assert thread[3].files, "the trace"
    assert thread[4].text == (
        f"🟡 *Likely cause* · confidence *likely (derived)* — v2.14.0. · <{THREAD_URL}/p{ts.replace('.', '')}|Open "
        "the thread>"
    ), "no confidence stated: the gate's, from its one claim citing a step that succeeded"
    assert thread[4].reply_broadcast, "the channel sees the verdict too (tests/bot/app/test_verdict_broadcast.py)"
    trace = next(f for f in harness.slack.files.values() if f.thread_ts == ts)
    assert json.loads(trace.content)["ok"] is True


async def test_a_secret_typed_in_the_mention_reaches_neither_the_thread_the_model_the_trace_nor_the_store(
    harness, script, run_store
):
    script.append([FINISH])
    ts = await harness.mention("login fails with DB_PASSWORD=hunter2hunter2, see postgres://app:pa55w0rd@db/orders")
    await harness.ended(ts)
    trace = json.loads(next(f for f in harness.slack.files.values() if f.thread_ts == ts).content)
    record = await run_store.runs.run_in_thread(CHANNEL, ts)
    seen = {
        "thread": json.dumps([[m.text, m.blocks, m.edits] for m in harness.thread(ts)[1:]], default=str),
        "model": json.dumps([m.content for m in harness.models[0].requests[0].messages]),
        "trace": trace["task"],
        "store": record.task,
    }
    for where, text in seen.items():
        assert "hunter2hunter2" not in text, where
        assert "pa55w0rd" not in text, where
        assert "DB_PASSWORD=[REDACTED:password]" in text, where


async def test_an_approved_action_runs_exactly_once(harness, script):
    script.append([ROLLBACK, FINISH])
    ts = await harness.mention("roll back order-service")
    message, approval_id = await harness.until(lambda: harness.approval_message(ts), "an approval message")
    assert harness.executed == []
    assert await harness.click(APPROVE, approval_id, message.ts, ts) == 200
    await harness.ended(ts)
    assert harness.executed == [("order-service", "v2.13.2")]
    line = await harness.until(
        lambda: (
            "rolled back" in json.dumps(harness.slack.message(CHANNEL, message.ts).blocks)
            and harness.slack.message(CHANNEL, message.ts).blocks[0]["text"]["text"]
        ),
        "the approval and its step, collapsed into one line with the outcome",
    )
    assert f"approved by <@{ALICE}> at <!date^" in line
    assert "rollback_deployment order-service v2.13.2" in line
    assert len(harness.slack.message(CHANNEL, message.ts).blocks) == 1, "one line, no buttons"
    assert not any("rollback" in json.dumps(m.blocks) for m in harness.thread(ts)[2:] if m.ts != message.ts), (
        "the step is not posted again"
    )
    assert await harness.click(APPROVE, approval_id, message.ts, ts) == 200
    await harness.until(lambda: harness.slack.responses, "an ephemeral answer to the second click")
    assert f"Already approved by <@{ALICE}> at <!date^" in json.dumps([r.body for r in harness.slack.responses])
    assert harness.executed == [("order-service", "v2.13.2")]


async def test_a_denial_reaches_the_model_and_nothing_runs(harness, script):
    script.append([ROLLBACK, FINISH])
    ts = await harness.mention("roll back order-service")
    message, approval_id = await harness.until(lambda: harness.approval_message(ts), "an approval message")
    await harness.click(DENY, approval_id, message.ts, ts)
    await harness.ended(ts)
    assert harness.executed == []
    await harness.until(
        lambda: f"denied by <@{ALICE}>" in json.dumps(harness.slack.message(CHANNEL, message.ts).blocks),
        "the denial in the approval's one line",
    )


async def test_an_unauthorised_clicker_is_refused_and_the_approval_stays_pending(harness, script):
    script.append([ROLLBACK, FINISH])
    ts = await harness.mention("roll back order-service")
    message, approval_id = await harness.until(lambda: harness.approval_message(ts), "an approval message")
    await harness.click(APPROVE, approval_id, message.ts, ts, user=GUEST)
    await harness.until(lambda: harness.slack.responses, "an ephemeral refusal")
    assert "Guests cannot approve" in json.dumps([r.body for r in harness.slack.responses])
    assert harness.executed == []
    await harness.click(APPROVE, approval_id, message.ts, ts, user=ALICE)
    await harness.until(lambda: harness.executed, "the approved action")


async def test_stop_cancels_the_run_and_says_so(harness, script):
    script.append([text_turn("slow", seconds=30)])
    ts = await harness.mention("check something slow")
    header = await harness.until(lambda: len(harness.thread(ts)) > 1 and harness.thread(ts)[1], "the header")
    run_id = next(e["value"] for b in header.blocks for e in b.get("elements", []) if e.get("action_id") == STOP)
    await asyncio.sleep(0.1)
    await harness.click(STOP, run_id, header.ts, ts, user=ALICE)
    await harness.until(lambda: harness.reacted(ts, "x"), "the run ends with ❌")
    verdict = await harness.ended(ts)
    assert f"Stopped by <@{ALICE}>" in json.dumps(verdict.blocks), "a real mention of who stopped it"
    assert STOP not in json.dumps(verdict.blocks)


async def test_a_retried_event_starts_one_run(harness, script):
    script.append([FINISH])
    ts = await harness.mention("why 5xx?", event_id="Ev0SAME")
    await harness.mention("why 5xx?", event_id="Ev0SAME", retry_num=1, ts=ts)
    await harness.ended(ts)
    summaries = [m for m in harness.thread(ts) if m.edits and "Investigating" in m.edits[0]["text"]]
    assert len(summaries) == 1


async def test_a_bad_signature_is_refused(harness):
    body, headers = signed_event(SIGNING_SECRET, app_mention_event(CHANNEL, BOB, "hi", "1.1"))
    headers["X-Slack-Signature"] = "v0=" + "0" * 64
    assert await harness.post(body, headers) == 401


async def test_a_follow_up_in_the_thread_knows_the_earlier_answer(harness, script):
    script.extend([[FINISH], [text_turn("finish", answer="Still v2.14.0.")]])
    ts = await harness.mention("why 5xx?")
    await harness.until(lambda: harness.reacted(ts, "white_check_mark"), "the first run ends")
    await harness.mention("is it still the deploy?", thread_ts=ts)
    await harness.until(lambda: len(harness.models) == 2 and harness.models[1].calls == 1, "the follow-up run")
    first_message = harness.models[1].requests[0].messages[0].content
    authority, data = fenced(first_message)
    assert authority.startswith("Task: is it still the deploy?\n")
    assert "Root cause" not in authority, "the earlier answer is model output: data, never the task"
    [earlier] = [part for part in data if "Earlier in this conversation" in part]
    assert "Earlier in this conversation you investigated: why 5xx?" in earlier
    assert "**Root cause**: v2.14.0 (step 1)." in earlier


async def test_a_429_storm_loses_nothing_and_keeps_the_order(harness, script):
    script.append([text_turn("query_metrics", service=f"svc-{i}") for i in range(3)] + [FINISH])
    harness.slack.fail_next("chat.postMessage", times=2, status=429, retry_after=1)
    ts = await harness.mention("check three services")
    await harness.ended(ts, within=30)
    after_header = json.dumps([m.blocks for m in harness.thread(ts)[2:]])
    firsts = [after_header.find(f"query_metrics svc-{i}") for i in range(3)]
    assert -1 not in firsts, "every step reached the thread"
    assert firsts == sorted(firsts), "in order"
    assert sum(1 for call in harness.slack.calls_to("chat.postMessage") if call.status == 429) == 2


async def test_twenty_concurrent_investigations_in_twenty_channels(harness, script):
    script.extend([[text_turn("query_metrics", service=f"svc-{i}"), FINISH] for i in range(20)])
    mentions = await asyncio.gather(*(harness.mention(f"check svc {i}", channel=f"C{i:04d}") for i in range(20)))
    for i, ts in enumerate(mentions):
        await harness.until(lambda i=i, ts=ts: harness.reacted(ts, "white_check_mark", f"C{i:04d}"), f"run {i} ends")
    assert all(len(harness.thread(ts, f"C{i:04d}")) >= 4 for i, ts in enumerate(mentions))
    assert not harness.services.investigations.active


async def test_without_the_loading_status_the_run_goes_on(harness, script):
    harness.slack.fail_always("assistant.threads.setStatus", "feature_not_enabled")
    script.append([FINISH])
    ts = await harness.mention("why 5xx?")
    await harness.until(lambda: harness.reacted(ts, "white_check_mark"), "the run ends")
    assert harness.slack.calls_to("assistant.threads.setStatus")[0].error == "feature_not_enabled"


async def test_slack_refusing_every_post_never_kills_the_run(harness, script):
    harness.slack.fail_always("chat.postMessage", "not_in_channel")
    script.append([text_turn("query_metrics", service="a"), FINISH])
    ts = await harness.mention("why 5xx?")
    await harness.until(lambda: harness.reacted(ts, "white_check_mark"), "the run still ends, with ✅")
    assert harness.models[0].calls == 2
    assert len(harness.thread(ts)) == 1 + sum(1 for f in harness.slack.files.values() if f.thread_ts == ts)


async def test_a_stop_mention_in_the_thread_cancels_the_run(harness, script):
    script.append([text_turn("slow", seconds=30)])
    ts = await harness.mention("check something slow")
    await harness.until(lambda: harness.services.investigations.active, "the run is going")
    await asyncio.sleep(0.1)
    await harness.mention("stop", thread_ts=ts, user=ALICE)
    await harness.until(lambda: harness.reacted(ts, "x"), "the run ends with ❌")
    await harness.ended(ts)
    [reply] = await harness.until(lambda: [m for m in harness.thread(ts) if m.reply_broadcast], "the last reply")
    assert reply.text.startswith(f"⏹ *Stopped by <@{ALICE}>* after 1 step · no hypothesis yet")
    record = await harness.services.store.runs.run_in_thread(CHANNEL, ts)
    trace = json.loads(record.trace_json)
    assert (record.status, trace["stop_reason"]) == ("finished", "cancelled"), "the run ended cancelled, for good"
    assert trace["detail"] == f"stopped by {ALICE}"


@pytest.mark.parametrize("slack_settings", [{"approval_ttl_s": 0.3}], indirect=True)
async def test_an_unanswered_approval_expires_as_a_denial(harness, script):
    script.append([ROLLBACK, FINISH])
    ts = await harness.mention("roll back order-service")
    message, approval_id = await harness.until(lambda: harness.approval_message(ts), "an approval message")
    await harness.ended(ts)
    assert harness.executed == []
    await harness.until(
        lambda: "not approved within" in json.dumps(harness.slack.message(CHANNEL, message.ts).blocks),
        "the step's one line says why it did not run",
    )
    await harness.click(APPROVE, approval_id, message.ts, ts)
    await harness.until(lambda: harness.slack.responses, "an answer to the late click")
    assert harness.executed == []


async def test_a_mention_while_a_run_is_going_is_guidance_not_a_second_run(harness, script):
    script.append([text_turn("slow", seconds=30)])
    ts = await harness.mention("check something slow")
    await harness.until(lambda: harness.services.investigations.active, "the run is going")
    said = await harness.mention("and also this?", thread_ts=ts)
    await harness.until(lambda: harness.reacted(said, "writing_hand"), "taken as guidance for the run")
    assert len(harness.models) == 1
    assert not any(m.text.startswith("An investigation is still running") for m in harness.thread(ts))
