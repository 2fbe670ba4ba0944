"""Who may stop a run, by the button and by “@opsagent stop”: its requester, approvers and (by default) members of
the installing workspace; a Slack Connect user of another workspace and a guest are refused privately, the refusal
is audited and the run goes on. Who stopped is a fact the final message renders as a real mention."""

from __future__ import annotations

import json

import pytest

from bot.access.settings import AccessSettings
from bot.slack.action_ids import STOP
from kernel import text_turn
from testkit.slack_bot import ALICE, BOB, CAROL, CHANNEL, GUEST, HttpHarness

PARTNER = "T0PARTNER"
SLOW = [text_turn("slow", "Waiting on a slow check.", seconds=60)]


async def running(harness: HttpHarness, script: list) -> tuple[str, str, str]:
    """A slow run asked for by BOB: its thread, its run id and its header's ts."""
    script.append(list(SLOW))
    ts = await harness.mention("check something slow", user=BOB)
    header = await harness.until(lambda: len(harness.thread(ts)) > 1 and harness.thread(ts)[1], "the header")
    await harness.until(lambda: harness.models and harness.models[0].calls == 1, "the slow call started")
    run_id = next(e["value"] for b in header.blocks for e in b.get("elements", []) if e.get("action_id") == STOP)
    return ts, run_id, header.ts


async def refused_stops(harness: HttpHarness, run_id: str) -> list[tuple[str, str]]:
    return [
        (event.actor, event.detail["reason"])
        for event in await harness.services.store.audit.audit_log(run_id=run_id)
        if event.kind == "request_refused" and event.detail["action"] == "stop"
    ]


def ephemeral_texts(harness: HttpHarness) -> str:
    """What was said privately: button answers (response_url) and ephemeral messages."""
    return json.dumps([r.body for r in harness.slack.responses] + [e.text for e in harness.slack.ephemerals])


async def test_a_slack_connect_user_of_another_workspace_cannot_press_stop(harness, script) -> None:
    ts, run_id, header_ts = await running(harness, script)
    await harness.click(STOP, run_id, header_ts, ts, user="U0EXTERNAL", user_team=PARTNER)
    await harness.until(lambda: harness.slack.responses, "an ephemeral refusal")
    assert "Only members of the workspace that installed OpsAgent can stop" in ephemeral_texts(harness)
    assert f"or an approver (<@{ALICE}>)" in ephemeral_texts(harness), "the refusal names who can stop it"
    assert await refused_stops(harness, run_id) == [("U0EXTERNAL", "workspace")]
    assert run_id in harness.services.investigations.active
    assert not any("stopped this investigation" in m.text for m in harness.thread(ts))


async def test_a_guest_cannot_say_stop(harness, script) -> None:
    ts, run_id, _ = await running(harness, script)
    await harness.mention("stop", thread_ts=ts, user=GUEST)
    await harness.until(lambda: harness.slack.ephemerals, "an ephemeral refusal")
    [refusal] = harness.slack.ephemerals
    assert (refusal.user, refusal.channel, refusal.thread_ts) == (GUEST, CHANNEL, ts)
    assert refusal.text.startswith("Guests cannot stop OpsAgent investigations.")
    assert await refused_stops(harness, run_id) == [(GUEST, "guest")]
    assert run_id in harness.services.investigations.active


async def test_a_member_may_stop_anyones_run_and_the_final_message_mentions_them(harness, script) -> None:
    ts, run_id, header_ts = await running(harness, script)
    await harness.click(STOP, run_id, header_ts, ts, user=CAROL)
    final = await harness.ended(ts)
    shown = json.dumps(final.blocks, ensure_ascii=False)
    assert f"Stopped by <@{CAROL}>" in shown, "a real mention, rendered by Slack"
    assert "&lt;@" not in shown
    kinds = [e.kind for e in await harness.services.store.audit.audit_log(run_id=run_id)]
    assert "stop_requested" in kinds


@pytest.mark.parametrize(
    "access_settings",
    [AccessSettings(who_may_stop="approvers", runs_per_user_per_hour=None, runs_per_channel_per_hour=None)],
)
async def test_with_approvers_only_a_member_is_refused_and_an_approver_stops(harness, script) -> None:
    ts, run_id, header_ts = await running(harness, script)
    await harness.click(STOP, run_id, header_ts, ts, user=CAROL)
    await harness.until(lambda: harness.slack.responses, "an ephemeral refusal")
    assert "Only the person who asked for this investigation and the approvers can stop it" in ephemeral_texts(harness)
    assert await refused_stops(harness, run_id) == [(CAROL, "not_an_approver")]
    await harness.click(STOP, run_id, header_ts, ts, user=ALICE)
    await harness.until(lambda: harness.reacted(ts, "x"), "the approver's Stop ends the run")
