"""One gate for every way in, end to end in the fake Slack: every listener the app registers goes through it; a guest
and another workspace's user can neither rate a run, nor have a draft made, nor submit a modal for a run; drafts
count against the limits like runs; a modal's submission is bound to the 👎 that opened it. Each refusal is one
ephemeral, and one line of the audit log."""

from __future__ import annotations

import json

import pytest

from bot.access.settings import AccessSettings, Raters
from bot.slack.action_ids import APPROVE, DENY, FEEDBACK, FEEDBACK_REASON, STOP
from bot.slack.feedback import REASON_BLOCK, REASON_INPUT
from bot.store.records import Rating
from kernel import ScriptedModel, text_turn
from testkit.fakes.slack_requests import view_submission_payload
from testkit.fakes.slack_workspace import TEAM_ID
from testkit.slack_bot import ALICE, BOB, FINISH, GUEST, USERS, HttpHarness, ratings_when

PARTNER = "T0PARTNER"
STRANGER = "U0STRANGER"
"""A Slack Connect user of another workspace, in the shared incident channel."""
STATUS = json.dumps({"affected": "Checkout.", "known": "A deploy.", "doing": "Rolled back.", "next_update": "Soon."})


@pytest.fixture
def slack_users():
    return USERS | {STRANGER: {"name": "stranger", "team_id": PARTNER}}


@pytest.fixture
def access_settings(request):
    """Five runs or drafts a person per hour; a test may change more with indirect parametrisation."""
    limits = {"runs_per_user_per_hour": 5, "runs_per_channel_per_hour": None, "max_concurrent_runs": 25}
    return AccessSettings(**(limits | getattr(request, "param", {})))


@pytest.fixture
def drafter():
    return ScriptedModel([STATUS] * 12, model="drafter-1")


@pytest.fixture
def app_options(drafter):
    return {"drafter": drafter}


async def finished_run(harness: HttpHarness, script: list) -> tuple[str, object, str]:
    """A run Bob asked for, ended: its thread, its verdict message and its run id."""
    script.append([FINISH])
    ts = await harness.mention("checkout 5xx, find the root cause", user=BOB)
    verdict = await harness.ended(ts)
    [buttons] = next(b for b in verdict.blocks if b["type"] == "context_actions")["elements"]
    return ts, verdict, buttons["negative_button"]["value"].split(":", 1)[1]


async def refusals(harness: HttpHarness) -> list[tuple[str, str, str, str]]:
    """Who was refused what, by which rule, in the audit log's order."""
    return [
        (event.actor, event.detail["request"], event.detail["action"], event.detail["reason"])
        for event in await harness.services.store.audit.audit_log()
        if event.kind == "request_refused"
    ]


def said_privately(harness: HttpHarness, user: str) -> list[str]:
    """What `user` was told privately: ephemeral messages, and answers through a click's response_url (which
    the fake keeps as ephemerals too)."""
    return [e.text for e in harness.slack.ephemerals if e.user == user]


async def test_strangers_and_guests_can_neither_rate_nor_have_drafts_made(harness, script, drafter):
    ts, verdict, run_id = await finished_run(harness, script)
    for user, team in ((GUEST, TEAM_ID), (STRANGER, PARTNER)):
        for value in (f"down:{run_id}", f"up:{run_id}"):
            status = await harness.click(
                FEEDBACK, value, verdict.ts, ts, user=user, user_team=team, element_type="feedback_buttons"
            )
            assert status == 200
        await harness.mention("status", thread_ts=ts, user=user, author_team=team)
        await harness.mention("postmortem", thread_ts=ts, user=user, author_team=team)
    await harness.until(lambda: len(harness.slack.ephemerals) >= 8, "every click and mention answered")
    assert sorted(await refusals(harness)) == [
        (GUEST, "AskDraft", "draft", "guest"),
        (GUEST, "AskDraft", "draft", "guest"),
        (GUEST, "Rate", "rate", "guest"),
        (GUEST, "Rate", "rate", "guest"),
        (STRANGER, "AskDraft", "draft", "workspace"),
        (STRANGER, "AskDraft", "draft", "workspace"),
        (STRANGER, "Rate", "rate", "workspace"),
        (STRANGER, "Rate", "rate", "workspace"),
    ]
    assert await harness.services.store.feedback.feedback_for(run_id) == []
    assert harness.slack.views == [], "no modal opened for a refused 👎"
    assert drafter.calls == 0, "no draft made"
    assert not any(f.filename.startswith("postmortem") for f in harness.slack.files.values())
    guest_heard = said_privately(harness, GUEST)
    assert any("Guests cannot rate OpsAgent verdicts." in text for text in guest_heard)
    assert any("Guests cannot have OpsAgent drafts made." in text for text in guest_heard)
    assert any(
        "Only members of the workspace that installed OpsAgent can rate OpsAgent verdicts." in text
        for text in said_privately(harness, STRANGER)
    )
    assert len(said_privately(harness, GUEST)) == 4, "one answer per refused request"


async def test_a_modal_submitted_by_anyone_but_the_person_whose_thumbs_down_opened_it_is_refused(harness, script):
    ts, verdict, run_id = await finished_run(harness, script)
    clicked = await harness.click(
        FEEDBACK, f"down:{run_id}", verdict.ts, ts, user=ALICE, element_type="feedback_buttons"
    )
    assert clicked == 200
    [opened] = await harness.until(lambda: harness.slack.views, "the modal asking Alice why")
    await ratings_when(harness.services.store, run_id, lambda got: ALICE in got)
    forged = [
        view_submission_payload(BOB, TEAM_ID, FEEDBACK_REASON, run_id, {REASON_BLOCK: {REASON_INPUT: "a member's"}}),
        view_submission_payload(GUEST, TEAM_ID, FEEDBACK_REASON, run_id, {REASON_BLOCK: {REASON_INPUT: "a guest's"}}),
        view_submission_payload(
            STRANGER, PARTNER, FEEDBACK_REASON, run_id, {REASON_BLOCK: {REASON_INPUT: "a stranger's"}}
        ),
    ]
    for payload in forged:
        assert await harness.submit(payload) == 200
    await harness.until(lambda: len(harness.slack.ephemerals) >= 3, "each forged submission refused")
    assert sorted(await refusals(harness)) == [
        (BOB, "Explain", "rate", "not_their_modal"),
        (GUEST, "Explain", "rate", "guest"),
        (STRANGER, "Explain", "rate", "workspace"),
    ]
    assert any("does not belong to a 👎 of yours" in text for text in said_privately(harness, BOB))
    reason = "the cache, not the deploy"
    assert await harness.submit(harness.slack.submission(opened.id, {REASON_BLOCK: {REASON_INPUT: reason}})) == 200
    got = await ratings_when(harness.services.store, run_id, lambda got: got.get(ALICE, (None, ""))[1])
    assert got == {ALICE: (Rating.DOWN, reason)}, "only Alice's own modal was kept"


async def test_twelve_status_asks_in_a_minute_are_limited_like_runs(harness, script, drafter):
    ts, _, _ = await finished_run(harness, script)  # Bob's first of five this hour
    for _ in range(12):
        await harness.mention("status", thread_ts=ts, user=BOB)
    refused = await harness.until(lambda: said_privately(harness, BOB)[7:8], "the eighth refusal")
    assert refused[0].startswith("No draft: you started 5 investigations and drafts in the last hour")
    await harness.until(lambda: drafter.calls == 4, "four drafts written by the model")
    drafting = [m for m in harness.thread(ts) if m.text.startswith("📝 Drafting")]
    assert len(drafting) == 4
    assert len(said_privately(harness, BOB)) == 8
    assert [reason for *_, reason in await refusals(harness)] == ["user_rate"] * 8
    await harness.mention("and the root cause of the 5xx now?", user=BOB)
    await harness.until(lambda: len(said_privately(harness, BOB)) == 9, "a new run is refused too")
    assert said_privately(harness, BOB)[8].startswith("Not started: you started 5 investigations in the last hour")


@pytest.mark.parametrize("access_settings", [{"who_may_rate": Raters.APPROVERS}], indirect=True)
async def test_when_only_approvers_rate_a_member_is_told_so(harness, script):
    ts, verdict, run_id = await finished_run(harness, script)
    await harness.click(FEEDBACK, f"up:{run_id}", verdict.ts, ts, user=BOB, element_type="feedback_buttons")
    await harness.click(FEEDBACK, f"up:{run_id}", verdict.ts, ts, user=ALICE, element_type="feedback_buttons")
    got = await ratings_when(harness.services.store, run_id, lambda got: ALICE in got)
    assert got == {ALICE: (Rating.UP, "")}
    await harness.until(lambda: said_privately(harness, BOB), "Bob's refusal")
    assert "Only approvers can rate OpsAgent verdicts. Approvers: <@U0ALICE>." in said_privately(harness, BOB)[0]


async def test_every_listener_the_app_registers_goes_through_the_gate(harness, script):
    """Walk Bolt's own list of listeners: each is one of ours, made by `gated`, and a guest's payload of each kind
    is refused by the gate (an audit line for it) before any service acts."""
    registered = [listener.ack_function for listener in harness.services.app._async_listeners]
    assert set(registered) == set(harness.services.listeners), "every Bolt listener is a gated one of ours"
    assert len(registered) == 6, "the mention, four buttons and the 👎 modal"
    script.append([text_turn("slow", seconds=30)])
    ts = await harness.mention("check something slow", user=BOB)
    summary = await harness.until(lambda: harness.summary(ts), "the run's summary")
    run_id = next(e["value"] for b in summary.blocks for e in b.get("elements", []) if e.get("action_id") == STOP)
    sent = {
        "on_mention": [harness.mention("why 5xx?", user=GUEST)],
        "on_click": [
            harness.click(action_id, value, summary.ts, ts, user=GUEST)
            for action_id, value in ((APPROVE, "any"), (DENY, "any"), (STOP, run_id))
        ]
        + [harness.click(FEEDBACK, f"up:{run_id}", summary.ts, ts, user=GUEST, element_type="feedback_buttons")],
        "on_reason": [
            harness.submit(
                view_submission_payload(GUEST, TEAM_ID, FEEDBACK_REASON, run_id, {REASON_BLOCK: {REASON_INPUT: "x"}})
            )
        ],
    }
    assert set(sent) == {listener.__name__ for listener in harness.services.listeners}, "a payload for each"
    for sends in sent.values():
        for send in sends:
            await send
    expected = {"Investigate", "Decide", "StopRun", "Rate", "Explain"}
    await harness.until(lambda: len(harness.slack.ephemerals) >= 6, "every guest payload answered")
    seen = await refusals(harness)
    assert {request for _, request, _, _ in seen} == expected
    assert all((actor, reason) == (GUEST, "guest") for actor, _, _, reason in seen)
    assert len(seen) == 6
    assert run_id in harness.services.investigations.active, "the guest's Stop did not stop it"
