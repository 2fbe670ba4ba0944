"""Runs started through the API, with people still in Slack: a run posted in a channel lives in its thread (summary,
steps, approvals), and its side effect runs only after an approver clicks; a run posted in no channel asks in the
approval channel, or has its side effects denied; nothing of the API approves."""

from __future__ import annotations

import asyncio
import json

import pytest

from bot.api.settings import ApiSettings
from bot.runs.quiet import NO_APPROVER_REASON
from bot.slack.action_ids import APPROVE, DENY
from testkit.slack_bot import ALICE, CHANNEL, FINISH
from worlds.api_world import APPROVALS, ROLLBACK_TURN, WAIT_TURN, run_status, top_messages

TASK = "order-service 5xx since 14:02 <@U0ALICE> <!channel> ```"


async def test_an_api_run_in_a_channel_asks_there_and_acts_only_after_an_approver_clicks(harness, claude, script):
    script.append([ROLLBACK_TURN, FINISH])
    started = await claude.investigate(TASK, channel=CHANNEL)
    assert started.status == 202, started.json
    assert started.json["status"] == "running"
    run_id = started.json["run_id"]
    [opening] = await harness.until(lambda: top_messages(harness.slack, CHANNEL), "the run's opening message")
    assert "API client `claude` asked OpsAgent to investigate" in opening.text
    shown = json.dumps(opening.blocks)
    assert "<@U0ALICE>" not in shown, "the client's text cannot mention anyone"
    assert "<!channel>" not in shown
    assert "&lt;@U0ALICE&gt;" in shown
    message, approval_id = await harness.until(lambda: harness.approval_message(opening.ts), "the approval")
    assert "run requested by API client `claude`" in json.dumps(message.blocks)
    summary = harness.summary(opening.ts)
    assert "requested by API client `claude`" in json.dumps(summary.blocks)
    assert await run_status(claude, run_id, "waiting_for_approval")
    assert harness.executed == [], "nothing ran before a person clicked"

    assert await harness.click(APPROVE, approval_id, message.ts, opening.ts, user=ALICE) == 200
    finished = await run_status(claude, run_id, "finished")
    assert harness.executed == [("order-service", "v2.13.2")]
    verdict = finished["verdict"]
    assert verdict["ok"] is True
    assert [(a["step"], a["approved_by"], a["ok"]) for a in verdict["actions"]] == [(1, ALICE, True)]
    permalink = f"https://opsagent-test.slack.com/archives/{CHANNEL}/p{opening.ts.replace('.', '')}"
    assert finished["thread"] == started.json["thread"] == permalink
    assert finished["requested_by"] == "claude"
    await harness.until(lambda: harness.verdict(opening.ts, CHANNEL), "the verdict in the thread")
    audit = await harness.services.store.audit.audit_log(run_id=run_id)
    [opened] = [event for event in audit if event.kind == "run_started"]
    assert (opened.actor, opened.detail["actor_name"]) == ("api:claude", "API client claude")


async def test_a_denial_in_slack_is_the_api_runs_too(harness, claude, script):
    script.append([ROLLBACK_TURN, FINISH])
    run_id = (await claude.investigate("roll back order-service", channel=CHANNEL)).json["run_id"]
    [opening] = await harness.until(lambda: top_messages(harness.slack, CHANNEL), "the run's opening message")
    message, approval_id = await harness.until(lambda: harness.approval_message(opening.ts), "the approval")
    assert await harness.click(DENY, approval_id, message.ts, opening.ts, user=ALICE) == 200
    finished = await run_status(claude, run_id, "finished")
    assert harness.executed == []
    [step] = [s for s in finished["steps"] if s["tool"] == "rollback_deployment"]
    assert step["status"] == "denied"
    assert f"denied by {ALICE}" in step["outcome"]
    events = await claude.whole_run(run_id)
    [decided] = [e for e in events if e.event == "approval_decided"]
    assert (decided.data["decision"], decided.data["by"]) == ("denied", ALICE)


@pytest.mark.parametrize("api_settings", [ApiSettings(enabled=True, approval_channel=APPROVALS)])
async def test_a_run_in_no_channel_asks_in_the_approval_channel(harness, claude, script, api_settings):
    script.append([ROLLBACK_TURN, FINISH])
    started = await claude.investigate("roll back order-service if v2.14.0 broke it")
    assert started.json["thread"] is None
    [context] = await harness.until(lambda: top_messages(harness.slack, APPROVALS), "the approval's context")
    said = json.dumps(context.blocks)
    assert "API client `claude` started through the API needs an approval" in said
    assert "roll back order-service if v2.14.0 broke it" in said
    message, approval_id = await harness.until(lambda: harness.approval_message(context.ts, APPROVALS), "approval")
    assert harness.executed == []
    assert await harness.click(APPROVE, approval_id, message.ts, context.ts, user=ALICE, channel=APPROVALS) == 200
    await run_status(claude, started.json["run_id"], "finished")
    assert harness.executed == [("order-service", "v2.13.2")]
    await harness.until(
        lambda: "rolled back order-service" in json.dumps(harness.slack.message(APPROVALS, message.ts).blocks),
        "the approval collapsed to the action's outcome",
    )
    assert top_messages(harness.slack, CHANNEL) == [], "the run itself posts nowhere"


async def test_a_run_in_no_channel_without_an_approval_channel_has_its_side_effect_denied(harness, claude, script):
    script.append([ROLLBACK_TURN, FINISH])
    run_id = (await claude.investigate("roll back order-service")).json["run_id"]
    finished = await run_status(claude, run_id, "finished")
    assert harness.executed == []
    [step] = [s for s in finished["steps"] if s["tool"] == "rollback_deployment"]
    assert step["status"] == "denied"
    assert step["outcome"].startswith("denied by opsagent at ")
    assert step["refusal"]["reason"] == NO_APPROVER_REASON, "the whole reason, with what to set"
    assert step["refusal"]["by"] == "opsagent"
    assert harness.slack.posted == [], "no channel, no approval channel: nothing in Slack at all"


async def test_another_tokens_run_is_not_found_and_not_listed(harness, claude, ci, script):
    script.append([FINISH])
    run_id = (await claude.investigate("order-service 5xx")).json["run_id"]
    await run_status(claude, run_id, "finished")
    for answer in (
        await ci.investigation(run_id),
        await ci.call("POST", f"/v1/investigations/{run_id}/guidance", json={"text": "look at payments"}),
        await ci.call("GET", f"/v1/investigations/{run_id}/events"),
        await claude.investigation("r-does-not-exist"),
    ):
        assert answer.status == 404, answer
        assert answer.json["code"] == "not_found"
    unknown = (await claude.investigation("r-does-not-exist")).json["error"]
    other = (await ci.investigation(run_id)).json["error"]
    assert other.replace(run_id, "ID") == unknown.replace("r-does-not-exist", "ID"), "the same words: nothing revealed"
    assert [i["run_id"] for i in (await claude.call("GET", "/v1/investigations")).json["investigations"]] == [run_id]
    assert (await ci.call("GET", "/v1/investigations?limit=5")).json == {"investigations": []}


async def test_guidance_through_the_api_reaches_the_run_in_the_clients_name(harness, claude, script):
    script.append([WAIT_TURN, FINISH])
    run_id = (await claude.investigate("checkout latency", channel=CHANNEL)).json["run_id"]
    await asyncio.sleep(0)
    kept = await claude.call(
        "POST", f"/v1/investigations/{run_id}/guidance", json={"text": "payments deployed at 14:02"}
    )
    assert kept.status == 202, kept.json
    assert kept.json == {"run_id": run_id, "seq": 1}
    harness.incident.released.set()
    finished = await run_status(claude, run_id, "finished")
    [given] = finished["verdict"]["guidance"]
    assert (given["by"], given["text"]) == ("API client claude", "payments deployed at 14:02")
    assert [e.data["text"] for e in await claude.whole_run(run_id) if e.event == "guidance"] == [given["text"]]
    late = await claude.call("POST", f"/v1/investigations/{run_id}/guidance", json={"text": "too late"})
    assert (late.status, late.json["code"]) == (409, "ended")


async def test_a_secret_in_the_task_is_redacted_where_it_arrives(harness, claude, script):
    script.append([FINISH])
    secret = "AKIAIOSFODNN7EXAMPLE"
    run_id = (await claude.investigate(f"checkout fails since the key {secret} rotated", channel=CHANNEL)).json[
        "run_id"
    ]
    finished = await run_status(claude, run_id, "finished")
    assert finished["task"] == "checkout fails since the key [REDACTED:aws_access_key_id] rotated"
    [opening] = top_messages(harness.slack, CHANNEL)
    assert secret not in json.dumps(opening.blocks) + opening.text
    [model] = harness.models
    assert all(secret not in message.content for request in model.requests for message in request.messages)
