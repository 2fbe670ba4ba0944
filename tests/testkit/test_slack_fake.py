"""The fake Slack Web API, driven by the real slack_sdk AsyncWebClient, and the signed-request helpers.

Also one end-to-end pass through a real Bolt AsyncApp: a signed mention, a signed button click, respond().
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import parse_qs

import pytest
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler, AsyncServerErrorRetryHandler
from slack_sdk.http_retry.builtin_interval_calculators import FixedValueRetryIntervalCalculator
from slack_sdk.signature import SignatureVerifier

from testkit.fakes.block_kit import check_blocks
from testkit.fakes.slack_api import UPLOAD, SlackFake
from testkit.fakes.slack_requests import app_mention_event, block_actions_payload, signed_action, signed_event
from testkit.fakes.slack_workspace import BOT_ID, BOT_USER_ID, SIGNING_SECRET, TEAM_ID

C = "C0INCIDENT"
ALICE, GUEST, EXTERNAL, FORMER = "U0ALICE", "U0GUEST", "U0EXTERNAL", "U0FORMER"


@pytest.fixture
async def slack():
    users = {
        ALICE: {"name": "alice"},
        GUEST: {"is_restricted": True},
        EXTERNAL: {"team_id": "T0OTHER"},
        FORMER: {"deleted": True},
    }
    async with SlackFake(users=users, usergroups={"S0ONCALL": [ALICE, "U0BOB"]}) as fake:
        yield fake


async def expect_error(call: Any) -> SlackApiError:
    with pytest.raises(SlackApiError) as caught:
        await call
    return caught.value


# --- blocks used below --------------------------------------------------------------------------


def section(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}, **extra}


def button(action_id: str = "opsagent_approve", *, text: str = "Approve", value: str = "ap_1", **extra: Any):
    return {
        "type": "button",
        "action_id": action_id,
        "text": {"type": "plain_text", "text": text},
        "value": value,
    } | extra


def actions(*elements: dict[str, Any], block_id: str = "approval") -> dict[str, Any]:
    return {"type": "actions", "block_id": block_id, "elements": list(elements)}


def confirm(*, title: str = "Roll back?", text: str = "This changes production.", label: str = "Roll back"):
    return {
        "title": {"type": "plain_text", "text": title},
        "text": {"type": "plain_text", "text": text},
        "confirm": {"type": "plain_text", "text": label},
        "deny": {"type": "plain_text", "text": "Cancel"},
        "style": "danger",
    }


def context(count: int) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": f"item {i}"} for i in range(count)]}


APPROVAL_BLOCKS = [
    section("*rollback_deployment* `order-service` to `v41`"),
    actions(button(style="primary", confirm=confirm()), button("opsagent_deny", text="Deny", value="ap_1")),
]


# --- chat, threads, reactions ---------------------------------------------------------------------


async def test_auth_test_answers_the_bot_identity(slack: SlackFake):
    response = await slack.client().auth_test()

    assert (response["team_id"], response["user_id"], response["bot_id"]) == (TEAM_ID, BOT_USER_ID, BOT_ID)
    assert response["url"] == "https://opsagent-test.slack.com/"


async def test_thread_replies_keep_their_order_and_the_parent(slack: SlackFake):
    client = slack.client()
    parent = slack.add_message(C, f"<@{BOT_USER_ID}> why are 5xx up?", user=ALICE)

    first = await client.chat_postMessage(channel=C, thread_ts=parent.ts, text="Looking at metrics")
    second = await client.chat_postMessage(channel=C, thread_ts=parent.ts, text="Proposal", blocks=APPROVAL_BLOCKS)
    await client.chat_postMessage(channel=C, text="unrelated top-level message")

    assert parent.ts < first["ts"] < second["ts"]
    assert first["channel"] == C
    assert first["message"]["thread_ts"] == parent.ts
    assert first["message"]["bot_id"] == BOT_ID
    assert first["message"]["user"] == BOT_USER_ID
    thread = slack.thread(C, parent.ts)
    assert [m.text for m in thread] == [parent.text, "Looking at metrics", "Proposal"]
    assert [b["type"] for b in thread[2].blocks] == ["section", "actions"]
    assert parent.reply_count == 2
    assert list(slack.threads) == [(C, parent.ts)]
    replies = await client.conversations_replies(channel=C, ts=parent.ts)
    assert [m["ts"] for m in replies["messages"]] == [m.ts for m in thread]
    assert slack.count("chat.postMessage") == 3


async def test_a_reply_broadcast_shows_in_the_thread_and_in_the_channel(slack: SlackFake):
    client = slack.client()
    parent = slack.add_message(C, f"<@{BOT_USER_ID}> why are 5xx up?", user=ALICE)

    await client.chat_postMessage(channel=C, thread_ts=parent.ts, text="a step")
    told = await client.chat_postMessage(channel=C, thread_ts=parent.ts, text="the verdict", reply_broadcast=True)
    alone = await client.chat_postMessage(channel=C, text="top level", reply_broadcast=True)

    assert [m.text for m in slack.thread(C, parent.ts)] == [parent.text, "a step", "the verdict"]
    assert [m.text for m in slack.channel_view(C)] == [parent.text, "the verdict", "top level"]
    assert told["message"]["subtype"] == "thread_broadcast"
    assert told["message"]["thread_ts"] == parent.ts
    assert "subtype" not in alone["message"], "without thread_ts there is nothing to broadcast: a plain message"
    history = await client.conversations_history(channel=C)
    assert [m["text"] for m in history["messages"]] == ["top level", "the verdict", parent.text], "newest first"
    assert parent.reply_count == 2


async def test_timestamps_look_like_slack_and_increase(slack: SlackFake):
    client = slack.client()
    stamps = [(await client.chat_postMessage(channel=C, text=str(i)))["ts"] for i in range(3)]

    assert stamps == ["1700000000.000100", "1700000000.000200", "1700000000.000300"]


async def test_form_encoded_blocks_arrive_as_a_json_string(slack: SlackFake):
    client = slack.client()
    form = {"channel": C, "text": "fallback", "blocks": json.dumps(APPROVAL_BLOCKS)}

    response = await client.api_call("chat.postMessage", data=form)
    broken = await expect_error(client.api_call("chat.postMessage", data=form | {"blocks": "[{not json"}))

    assert slack.message(C, response["ts"]).blocks[1]["elements"][0]["action_id"] == "opsagent_approve"
    assert broken.response["error"] == "invalid_blocks_format"


async def test_metadata_is_stored_and_checked(slack: SlackFake):
    client = slack.client()
    metadata = {"event_type": "opsagent_run", "event_payload": {"run_id": "run_7"}}

    response = await client.chat_postMessage(channel=C, text="run started", metadata=metadata)
    bad = await expect_error(client.chat_postMessage(channel=C, text="x", metadata={"event_payload": {}}))

    assert slack.message(C, response["ts"]).metadata == metadata
    assert response["message"]["metadata"] == metadata
    assert bad.response["error"] == "invalid_metadata_format"


async def test_update_keeps_history_and_rejects_unknown_or_foreign_messages(slack: SlackFake):
    client = slack.client()
    human = slack.add_message(C, "hello", user=ALICE)
    posted = await client.chat_postMessage(channel=C, text="Waiting for approval", blocks=APPROVAL_BLOCKS)
    decided = [section("Approved by <@U0ALICE>", block_id="approval_decided")]

    updated = await client.chat_update(channel=C, ts=posted["ts"], text="Approved", blocks=decided)
    unknown = await expect_error(client.chat_update(channel=C, ts="1.000001", text="x"))
    foreign = await expect_error(client.chat_update(channel=C, ts=human.ts, text="x"))

    message = slack.message(C, posted["ts"])
    assert updated["ts"] == posted["ts"]
    assert updated["text"] == "Approved"
    assert message.text == "Approved"
    assert message.blocks[0]["block_id"] == "approval_decided"
    assert [edit["text"] for edit in message.edits] == ["Waiting for approval"]
    assert message.edits[0]["blocks"][1]["type"] == "actions"
    assert message.edited is not None
    assert unknown.response["error"] == "message_not_found"
    assert foreign.response["error"] == "cant_update_message"


async def test_ephemeral_records_its_user(slack: SlackFake):
    response = await slack.client().chat_postEphemeral(channel=C, user=GUEST, text="You may not approve this.")

    assert [(e.user, e.text, e.message_ts) for e in slack.ephemerals] == [
        (GUEST, "You may not approve this.", response["message_ts"])
    ]


async def test_reactions_add_once_per_name(slack: SlackFake):
    client = slack.client()
    mention = slack.add_message(C, f"<@{BOT_USER_ID}> help", user=ALICE)

    await client.reactions_add(channel=C, name="eyes", timestamp=mention.ts)
    again = await expect_error(client.reactions_add(channel=C, name="eyes", timestamp=mention.ts))
    await client.reactions_remove(channel=C, name="eyes", timestamp=mention.ts)
    await client.reactions_add(channel=C, name="white_check_mark", timestamp=mention.ts)
    missing = await expect_error(client.reactions_add(channel=C, name="eyes", timestamp="1.000001"))

    assert again.response["error"] == "already_reacted"
    assert missing.response["error"] == "message_not_found"
    assert slack.reactions[(C, mention.ts)] == ["white_check_mark"]


async def test_unknown_channel_when_channels_are_configured():
    async with SlackFake(channels=[C]) as fake:
        error = await expect_error(fake.client().chat_postMessage(channel="C0ELSEWHERE", text="hi"))

    assert error.response["error"] == "channel_not_found"


# --- directory ------------------------------------------------------------------------------------


async def test_users_info_reports_bots_guests_deleted_and_other_teams(slack: SlackFake):
    client = slack.client()

    alice = (await client.users_info(user=ALICE))["user"]
    guest = (await client.users_info(user=GUEST))["user"]
    external = (await client.users_info(user=EXTERNAL))["user"]
    former = (await client.users_info(user=FORMER))["user"]
    bot = (await client.users_info(user=BOT_USER_ID))["user"]
    unknown = await expect_error(client.users_info(user="U0NOBODY"))

    assert (alice["name"], alice["team_id"], alice["is_bot"], alice["deleted"]) == ("alice", TEAM_ID, False, False)
    assert guest["is_restricted"]
    assert not guest["is_ultra_restricted"]
    assert external["team_id"] == "T0OTHER"
    assert former["deleted"]
    assert bot["is_bot"]
    assert unknown.response["error"] == "user_not_found"
    assert all(call.http_method == "GET" for call in slack.calls_to("users.info"))


async def test_usergroup_members_and_unknown_group(slack: SlackFake):
    client = slack.client()

    members = await client.usergroups_users_list(usergroup="S0ONCALL")
    unknown = await expect_error(client.usergroups_users_list(usergroup="S0NONE"))
    slack.fail_always("usergroups.users.list", "plan_upgrade_required")
    free_plan = await expect_error(client.usergroups_users_list(usergroup="S0ONCALL"))

    assert members["users"] == [ALICE, "U0BOB"]
    assert unknown.response["error"] == "no_such_subteam"
    assert free_plan.response["error"] == "plan_upgrade_required"


# --- files and status -----------------------------------------------------------------------------


async def test_files_upload_v2_lands_in_the_thread(slack: SlackFake):
    client = slack.client()
    parent = slack.add_message(C, "mention", user=ALICE)
    logs = "\n".join(f"2026-11-30T03:{i:02d}:00Z ERROR upstream connect error" for i in range(50))

    response = await client.files_upload_v2(
        channel=C, thread_ts=parent.ts, content=logs, filename="order-service.log", title="Logs", initial_comment="Logs"
    )

    uploaded = slack.files[response["file"]["id"]]
    assert uploaded.text == logs
    assert uploaded.length == len(logs.encode())
    assert (uploaded.channel, uploaded.thread_ts, uploaded.title, uploaded.completed) == (C, parent.ts, "Logs", True)
    share = slack.thread(C, parent.ts)[-1]
    assert (share.text, share.files[0]["id"], share.files[0]["name"]) == ("Logs", uploaded.id, "order-service.log")
    assert [call.method for call in slack.calls] == [
        "files.getUploadURLExternal",
        UPLOAD,
        "files.completeUploadExternal",
    ]


async def test_completing_a_file_whose_bytes_never_came_fails(slack: SlackFake):
    client = slack.client()
    announced = await client.files_getUploadURLExternal(filename="a.txt", length=3)

    error = await expect_error(
        client.files_completeUploadExternal(files=[{"id": announced["file_id"], "title": "a"}], channel_id=C)
    )

    assert announced["upload_url"].startswith(slack.url)
    assert error.response["error"] == "file_not_found"


async def test_set_status_is_recorded_and_cleared_by_a_reply(slack: SlackFake):
    client = slack.client()
    parent = slack.add_message(C, "mention", user=ALICE)

    await client.assistant_threads_setStatus(
        channel_id=C, thread_ts=parent.ts, status="is investigating…", loading_messages=["Querying metrics"]
    )
    during = slack.status(C, parent.ts)
    await client.chat_postMessage(channel=C, thread_ts=parent.ts, text="Found it")
    too_many = await expect_error(
        client.assistant_threads_setStatus(
            channel_id=C, thread_ts=parent.ts, status="x", loading_messages=[str(i) for i in range(11)]
        )
    )

    assert during == "is investigating…"
    assert slack.status(C, parent.ts) == ""
    assert slack.status_updates[0].loading_messages == ["Querying metrics"]
    assert too_many.response["error"] == "invalid_arguments"


@pytest.mark.parametrize("error", ["feature_not_enabled", "not_allowed_token_type"])
async def test_set_status_can_be_refused(slack: SlackFake, error: str):
    slack.fail_always("assistant.threads.setStatus", error)

    refused = await expect_error(slack.client().assistant_threads_setStatus(channel_id=C, thread_ts="1.1", status="x"))

    assert refused.response["error"] == error
    assert slack.status_updates == []


# --- Slack's limits -------------------------------------------------------------------------------

LIMIT_CASES = {
    "51 blocks": ([section("x")] * 51, "no more than 50 items allowed [json-pointer:/blocks]"),
    "section text": ([section("x" * 3001)], "must be less than 3001 characters [json-pointer:/blocks/0/text/text]"),
    "empty section": ([section("")], "[json-pointer:/blocks/0/text/text]"),
    "section fields": (
        [{"type": "section", "fields": [{"type": "mrkdwn", "text": "f"}] * 11}],
        "no more than 10 items allowed [json-pointer:/blocks/0/fields]",
    ),
    "header text": (
        [{"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}],
        "[json-pointer:/blocks/0/text/text]",
    ),
    "button text": ([actions(button(text="b" * 76))], "[json-pointer:/blocks/0/elements/0/text/text]"),
    "button value": ([actions(button(value="v" * 2001))], "[json-pointer:/blocks/0/elements/0/value]"),
    "action_id": ([actions(button("a" * 256))], "[json-pointer:/blocks/0/elements/0/action_id]"),
    "block_id": ([section("x", block_id="b" * 256)], "[json-pointer:/blocks/0/block_id]"),
    "actions elements": (
        [actions(*(button(f"a{i}") for i in range(26)))],
        "no more than 25 items allowed [json-pointer:/blocks/0/elements]",
    ),
    "context elements": ([context(11)], "no more than 10 items allowed [json-pointer:/blocks/0/elements]"),
    "confirm title": (
        [actions(button(confirm=confirm(title="t" * 101)))],
        "[json-pointer:/blocks/0/elements/0/confirm/title/text]",
    ),
    "confirm text": (
        [actions(button(confirm=confirm(text="t" * 301)))],
        "[json-pointer:/blocks/0/elements/0/confirm/text/text]",
    ),
    "confirm label": (
        [actions(button(confirm=confirm(label="l" * 31)))],
        "[json-pointer:/blocks/0/elements/0/confirm/confirm/text]",
    ),
    "duplicate block_id": ([section("a", block_id="same"), section("b", block_id="same")], "/blocks/1/block_id"),
    "duplicate action_id": ([actions(button("go"), button("go"))], "/blocks/0/elements/1/action_id"),
    "unknown block type": ([{"type": "sectoin", "text": {"type": "mrkdwn", "text": "x"}}], "unsupported type"),
}


@pytest.mark.parametrize("case", list(LIMIT_CASES))
async def test_blocks_over_a_limit_get_invalid_blocks(slack: SlackFake, case: str):
    blocks, expected = LIMIT_CASES[case]
    client = slack.client()
    posted = await client.chat_postMessage(channel=C, text="ok")

    on_post = await expect_error(client.chat_postMessage(channel=C, text="fallback", blocks=blocks))
    on_update = await expect_error(client.chat_update(channel=C, ts=posted["ts"], text="x", blocks=blocks))

    for error in (on_post, on_update):
        assert error.response["error"] == "invalid_blocks"
        assert any(expected in message for message in error.response["errors"]), error.response["errors"]
        assert error.response["response_metadata"]["messages"][0].startswith("[ERROR] ")
    assert [m.text for m in slack.messages(C)] == ["ok"]


async def test_blocks_exactly_at_the_limits_are_accepted(slack: SlackFake):
    at_limits = [
        {"type": "header", "text": {"type": "plain_text", "text": "h" * 150}},
        section("s" * 3000, block_id="b" * 255),
        actions(
            button("a" * 255, text="t" * 75, value="v" * 2000, confirm=confirm(title="t" * 100, text="x" * 300)),
            *(button(f"a{i}") for i in range(24)),
        ),
        context(10),
    ]
    blocks = at_limits + [section(f"filler {i}") for i in range(50 - len(at_limits))]

    response = await slack.client().chat_postMessage(channel=C, text="fallback", blocks=blocks)

    assert len(slack.message(C, response["ts"]).blocks) == 50


async def test_markdown_blocks_over_12000_characters_in_total_are_too_long(slack: SlackFake):
    blocks = [{"type": "markdown", "text": "m" * 7000}, {"type": "markdown", "text": "m" * 7000}]

    error = await expect_error(slack.client().chat_postMessage(channel=C, text="x", blocks=blocks))

    assert error.response["error"] == "msg_blocks_too_long"
    assert check_blocks(blocks[:1]) is None


async def test_long_text_is_truncated_with_a_warning(slack: SlackFake):
    response = await slack.client().chat_postMessage(channel=C, text="x" * 40_001)

    assert response["warning"] == "message_truncated"
    assert response["response_metadata"]["warnings"] == ["message_truncated"]
    assert len(slack.message(C, response["ts"]).text) == 40_000


async def test_a_message_needs_some_content(slack: SlackFake):
    with pytest.warns(UserWarning, match="top-level `text` argument is missing"):
        error = await expect_error(slack.client().chat_postMessage(channel=C, text=""))

    assert error.response["error"] == "no_text"


# --- auth and faults ------------------------------------------------------------------------------


async def test_wrong_or_missing_token(slack: SlackFake):
    wrong = await expect_error(slack.client(token="xoxb-not-ours").chat_postMessage(channel=C, text="x"))
    missing = await expect_error(slack.client(token=None).auth_test())

    assert wrong.response["error"] == "invalid_auth"
    assert missing.response["error"] == "not_authed"
    assert slack.messages(C) == []
    assert [call.error for call in slack.calls] == ["invalid_auth", "not_authed"]


async def test_a_method_the_fake_lacks_is_unknown(slack: SlackFake):
    error = await expect_error(slack.client().api_call("chat.startStream", json={"channel": C}))

    assert error.response["error"] == "unknown_method"


async def test_429_carries_retry_after(slack: SlackFake):
    slack.fail_next("chat.postMessage", status=429, retry_after=7)

    error = await expect_error(slack.client().chat_postMessage(channel=C, text="x"))

    assert error.response.status_code == 429
    assert error.response.headers["Retry-After"] == "7"
    assert error.response["error"] == "ratelimited"
    assert slack.messages(C) == []


async def test_rate_limit_retry_handler_honours_retry_after(slack: SlackFake):
    slack.fail_next("chat.postMessage", status=429, retry_after=1)
    client = slack.client(retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=1)])

    response = await client.chat_postMessage(channel=C, text="after the wait")

    assert response["ok"]
    assert [(call.status, call.error) for call in slack.calls_to("chat.postMessage")] == [
        (429, "ratelimited"),
        (200, None),
    ]
    assert [m.text for m in slack.messages(C)] == ["after the wait"]


async def test_server_errors_and_the_server_error_retry_handler(slack: SlackFake):
    quick = FixedValueRetryIntervalCalculator(0.01)
    client = slack.client(retry_handlers=[AsyncServerErrorRetryHandler(max_retry_count=1, interval_calculator=quick)])

    slack.fail_next("chat.update", status=503)
    slack.fail_next("chat.postMessage", status=500, times=2)
    posted_error = await expect_error(client.chat_postMessage(channel=C, text="x"))
    await client.chat_postMessage(channel=C, text="third time")
    message = slack.posted[0]
    await client.chat_update(channel=C, ts=message.ts, text="updated after a 503")

    assert (posted_error.response.status_code, posted_error.response["error"]) == (500, "fatal_error")
    assert [call.status for call in slack.calls_to("chat.update")] == [503, 200]
    assert message.text == "updated after a 503"


async def test_fail_next_with_a_plain_slack_error(slack: SlackFake):
    client = slack.client()
    slack.fail_next("chat.postMessage", status=200, error="not_in_channel")

    error = await expect_error(client.chat_postMessage(channel=C, text="x"))
    await client.chat_postMessage(channel=C, text="y")

    assert (error.response.status_code, error.response["error"]) == (200, "not_in_channel")
    assert [m.text for m in slack.messages(C)] == ["y"]


async def test_per_channel_rate_limit_on_an_injected_clock():
    now = [1000.0]
    async with SlackFake(clock=lambda: now[0]) as fake:
        fake.rate_limit("chat.postMessage", per_second=1, per_channel=True)
        client = fake.client()

        await client.chat_postMessage(channel="C1", text="1")
        limited = await expect_error(client.chat_postMessage(channel="C1", text="2"))
        await client.chat_postMessage(channel="C2", text="other channel")
        now[0] += 1.0
        await client.chat_postMessage(channel="C1", text="3")

    assert (limited.response.status_code, limited.response.headers["Retry-After"]) == (429, "1")
    assert [m.text for m in fake.messages("C1")] == ["1", "3"]


async def test_per_message_rate_limit_of_updates_on_an_injected_clock():
    now = [1000.0]
    async with SlackFake(clock=lambda: now[0]) as fake:
        fake.rate_limit("chat.update", per_second=1, per_message=True)
        client = fake.client()
        first = (await client.chat_postMessage(channel=C, text="a"))["ts"]
        second = (await client.chat_postMessage(channel=C, text="b"))["ts"]

        await client.chat_update(channel=C, ts=first, text="a1")
        limited = await expect_error(client.chat_update(channel=C, ts=first, text="a2"))
        await client.chat_update(channel=C, ts=second, text="b1")
        now[0] += 1.0
        await client.chat_update(channel=C, ts=first, text="a3")

    assert limited.response.status_code == 429
    assert [m.text for m in fake.messages(C)] == ["a3", "b1"]


async def test_views_open_keeps_the_modal_and_refuses_one_slack_would(slack: SlackFake):
    client = slack.client()
    modal = {
        "type": "modal",
        "callback_id": "why",
        "private_metadata": "run42",
        "title": {"type": "plain_text", "text": "What was wrong?"},
        "submit": {"type": "plain_text", "text": "Send"},
        "blocks": [
            {
                "type": "input",
                "block_id": "reason",
                "label": {"type": "plain_text", "text": "Reason"},
                "element": {"type": "plain_text_input", "action_id": "text", "multiline": True},
            }
        ],
    }
    trigger = slack.trigger_for("U0ALICE")
    too_long = modal | {"title": {"type": "plain_text", "text": "x" * 25}}
    refused = await expect_error(client.views_open(trigger_id=trigger, view=too_long))
    assert refused.response["error"] == "invalid_arguments"
    assert (
        "must be less than 25 characters [json-pointer:/view/title/text]"
        in refused.response["response_metadata"]["messages"]
    )
    no_trigger = await expect_error(client.views_open(trigger_id="", view=modal))
    assert no_trigger.response["error"] == "invalid_arguments"
    opened = await client.views_open(trigger_id=trigger, view=modal)

    assert opened["view"]["callback_id"] == "why"
    assert [(v.trigger_id, v.id, v.user, v.view["private_metadata"]) for v in slack.views] == [
        (trigger, opened["view"]["id"], "U0ALICE", "run42")
    ]
    reused = await expect_error(client.views_open(trigger_id=trigger, view=modal))
    assert reused.response["error"] == "invalid_trigger_id", "a trigger opens one modal"
    never_issued = await expect_error(client.views_open(trigger_id="123.456.abc", view=modal))
    assert never_issued.response["error"] == "invalid_trigger_id"
    assert len(slack.views) == 1
    submitted = slack.submission(opened["view"]["id"], {"reason": {"text": "the cache"}})
    assert (submitted["user"]["id"], submitted["view"]["id"]) == ("U0ALICE", opened["view"]["id"])
    assert submitted["view"]["private_metadata"] == "run42"
    assert submitted["view"]["state"]["values"]["reason"]["text"]["value"] == "the cache"


async def test_a_trigger_opens_no_modal_after_three_seconds():
    now = [1000.0]
    modal = {"type": "modal", "title": {"type": "plain_text", "text": "Why?"}, "blocks": []}
    async with SlackFake(clock=lambda: now[0]) as slack:
        trigger = slack.trigger_for("U0ALICE")
        now[0] += 3.01
        late = await expect_error(slack.client().views_open(trigger_id=trigger, view=modal))
    assert late.response["error"] == "expired_trigger_id"
    assert slack.views == []


async def test_hang_outlasts_the_client_timeout_then_clears(slack: SlackFake):
    slack.hang("users.info", 30)

    with pytest.raises(TimeoutError):
        await slack.client(timeout=1).users_info(user=ALICE)
    response = await slack.client().users_info(user=ALICE)

    assert response["user"]["id"] == ALICE
    assert slack.count("users.info") == 2


# --- signed requests ------------------------------------------------------------------------------


def test_signed_event_verifies_and_looks_like_an_event_callback():
    event = app_mention_event(C, ALICE, f"<@{BOT_USER_ID}> why?", "1700000000.000100", thread_ts="1699999999.000100")

    body, headers = signed_event(SIGNING_SECRET, event, team_id=TEAM_ID, event_id="Ev0RETRY", retry_num=1)

    stamp, signature = headers["X-Slack-Request-Timestamp"], headers["X-Slack-Signature"]
    assert SignatureVerifier(SIGNING_SECRET).is_valid(body, stamp, signature)
    assert SignatureVerifier(SIGNING_SECRET).is_valid_request(body, headers)
    assert not SignatureVerifier("another-secret").is_valid(body, stamp, signature)
    envelope = json.loads(body)
    assert (envelope["type"], envelope["event_id"], envelope["team_id"]) == ("event_callback", "Ev0RETRY", TEAM_ID)
    assert envelope["authorizations"][0]["user_id"] == BOT_USER_ID
    assert envelope["event"] == event
    assert event["thread_ts"] == "1699999999.000100"
    assert (headers["X-Slack-Retry-Num"], headers["X-Slack-Retry-Reason"]) == ("1", "http_timeout")
    assert headers["Content-Type"] == "application/json"


def test_signed_action_is_form_encoded_and_verifies():
    payload = block_actions_payload(
        ALICE, TEAM_ID, C, "1700000000.000200", "1700000000.000100", "opsagent_approve", "ap_1"
    )

    body, headers = signed_action(SIGNING_SECRET, payload)

    assert SignatureVerifier(SIGNING_SECRET).is_valid_request(body, headers)
    assert headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert json.loads(parse_qs(body.decode())["payload"][0]) == payload
    assert payload["container"] == {
        "type": "message",
        "message_ts": "1700000000.000200",
        "channel_id": C,
        "is_ephemeral": False,
        "thread_ts": "1700000000.000100",
    }
    assert payload["actions"][0]["type"] == "button"
    assert payload["user"]["team_id"] == TEAM_ID


def test_a_stale_timestamp_does_not_verify():
    body, headers = signed_action(SIGNING_SECRET, {"type": "block_actions"}, timestamp=int(time.time()) - 600)

    assert not SignatureVerifier(SIGNING_SECRET).is_valid_request(body, headers)


async def test_a_bolt_app_takes_signed_requests_and_talks_to_the_fake(slack: SlackFake):
    app = AsyncApp(client=slack.client(), signing_secret=SIGNING_SECRET, process_before_response=True)
    clicks: list[tuple[str, str, str | None]] = []

    @app.event("app_mention")
    async def on_mention(event, client):
        thread_ts = event.get("thread_ts") or event["ts"]
        await client.reactions_add(channel=event["channel"], name="eyes", timestamp=event["ts"])
        await client.chat_postMessage(
            channel=event["channel"], thread_ts=thread_ts, text="Approve?", blocks=APPROVAL_BLOCKS
        )

    @app.action("opsagent_approve")
    async def on_approve(ack, body, context, respond):
        await ack()
        clicks.append((body["user"]["id"], body["actions"][0]["value"], context.thread_ts))
        await respond(replace_original=True, text="Approved by <@U0ALICE>")

    mention = slack.add_message(C, f"<@{BOT_USER_ID}> roll back order-service", user=ALICE)
    body, headers = signed_event(SIGNING_SECRET, app_mention_event(C, ALICE, mention.text, mention.ts))
    mentioned = await app.async_dispatch(AsyncBoltRequest(body=body.decode(), headers=headers))

    card = slack.thread(C, mention.ts)[-1]
    payload = block_actions_payload(
        ALICE,
        TEAM_ID,
        C,
        card.ts,
        card.thread_ts,
        "opsagent_approve",
        "ap_1",
        "approval",
        message_blocks=card.blocks,
        response_url=slack.response_url(C, card.ts, user=ALICE),
    )
    body, headers = signed_action(SIGNING_SECRET, payload)
    clicked = await app.async_dispatch(AsyncBoltRequest(body=body.decode(), headers=headers))
    forged = await app.async_dispatch(
        AsyncBoltRequest(body=body.decode(), headers=headers | {"X-Slack-Signature": "v0=0"})
    )

    assert (mentioned.status, clicked.status, forged.status) == (200, 200, 401)
    assert slack.count("auth.test") >= 1
    assert slack.reactions[(C, mention.ts)] == ["eyes"]
    assert clicks == [(ALICE, "ap_1", mention.ts)]
    assert slack.message(C, card.ts).text == "Approved by <@U0ALICE>"
    assert slack.message(C, card.ts).edits[0]["text"] == "Approve?"
    assert len(slack.responses) == 1
