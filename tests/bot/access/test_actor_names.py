"""People by name: Slack's directory (the fake Web API's `users.info`) says what a person is called, the audit trail
keeps that name with each event a person caused, as they acted, and `names_in` reads them back for the surfaces
(the trace viewer, the drafts). A name never holds up the record: a directory that does not answer leaves it out."""

from __future__ import annotations

import asyncio

from bot.access.identity import Identities
from bot.audit.trail import ACTOR_NAME, AuditKind, AuditTrail, names_in
from bot.slack.approval_ui import SlackDirectory
from bot.store.factory import opened_store
from testkit.fakes.slack_api import SlackFake
from testkit.fakes.slack_workspace import TEAM_ID

ALICE, BOB = "U0ALICE", "U0BOB"


async def test_a_person_is_named_as_slack_shows_them_and_a_service_costs_no_lookup() -> None:
    users = {ALICE: {"name": "alice"}, BOB: {"name": "bob"}}
    async with SlackFake(users=users) as slack:
        slack.users[BOB]["profile"]["display_name"] = ""  # no display name: the full name
        identities = Identities(SlackDirectory(slack.client()), installing_team=TEAM_ID)
        assert await identities.name_of(ALICE) == "alice"
        assert await identities.name_of(BOB) == "Bob"
        assert await identities.name_of("U0NOBODY") == "", "users.info says user_not_found: no name, no error"
        asked = slack.count("users.info")
        assert await identities.name_of("alertmanager") == ""
        assert await identities.name_of("alice (terminal)") == ""
        assert slack.count("users.info") == asked, "what is no user id is never looked up"


async def test_the_trail_keeps_each_persons_name_as_they_acted(tmp_path) -> None:
    names = {ALICE: "alice", BOB: "bob"}

    async def name_of(user: str) -> str:
        return names.get(user, "")

    async with opened_store(f"sqlite:///{tmp_path}/runs.db") as store:
        trail = AuditTrail(store.audit, names=name_of)
        await trail.record(AuditKind.RUN_STARTED, run_id="r1", actor=BOB, task="why 5xx?")
        await trail.record(AuditKind.APPROVAL_DECIDED, run_id="r1", actor=ALICE, decision="approved")
        names[ALICE] = "Alice Liddell"  # renamed in Slack afterwards: her next act carries the new name
        await trail.record(AuditKind.STOP_REQUESTED, run_id="r1", actor=ALICE)
        await trail.record(AuditKind.RUN_FINISHED, run_id="r1", stop_reason="cancelled")
        events = await store.audit.audit_log(run_id="r1")
    assert [e.detail.get(ACTOR_NAME) for e in events] == ["bob", "alice", "Alice Liddell", None]
    assert names_in(events) == {BOB: "bob", ALICE: "Alice Liddell"}


async def test_a_directory_that_does_not_answer_leaves_the_name_out_not_the_event(tmp_path) -> None:
    async def never(user: str) -> str:
        await asyncio.Event().wait()
        return "never"

    async with opened_store(f"sqlite:///{tmp_path}/runs.db") as store:
        await AuditTrail(store.audit, names=never).record(AuditKind.STOP_REQUESTED, run_id="r1", actor=ALICE)
        [event] = await store.audit.audit_log(run_id="r1")
    assert (event.kind, event.actor, event.detail) == (AuditKind.STOP_REQUESTED, ALICE, {})
