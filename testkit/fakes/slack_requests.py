"""Requests Slack sends to an HTTP-mode Bolt app, built and signed the way Slack does: Events API deliveries,
interactivity posts, and realistic `app_mention` and `block_actions` payloads."""

from __future__ import annotations

import itertools
import json
import secrets
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from slack_sdk.signature import SignatureVerifier

from testkit.fakes.slack_workspace import APP_ID, BOT_ID, BOT_USER_ID, TEAM_DOMAIN, TEAM_ID

_event_ids = itertools.count(1)


def sign(secret: str, body: bytes, *, timestamp: int | None = None) -> dict[str, str]:
    """The two signature headers Slack sends with `body` (timestamp: now unless given)."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    signature = SignatureVerifier(secret).generate_signature(timestamp=stamp, body=body)
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature or ""}


def signed_event(
    secret: str,
    event: Mapping[str, Any],
    *,
    team_id: str = TEAM_ID,
    event_id: str | None = None,
    retry_num: int | None = None,
    retry_reason: str = "http_timeout",
    api_app_id: str = APP_ID,
    bot_user_id: str = BOT_USER_ID,
    event_time: int | None = None,
    timestamp: int | None = None,
) -> tuple[bytes, dict[str, str]]:
    """An Events API delivery as Slack POSTs it: the `event_callback` JSON body and its signed headers.

    Pass the same `event_id` with `retry_num=1..3` to emulate Slack's retries (`X-Slack-Retry-Num`/`-Reason`).
    """
    envelope = {
        "token": "fake-verification-token",
        "team_id": team_id,
        "context_team_id": team_id,
        "context_enterprise_id": None,
        "api_app_id": api_app_id,
        "event": dict(event),
        "type": "event_callback",
        "event_id": event_id or f"Ev0FAKE{next(_event_ids):06d}",
        "event_time": int(time.time()) if event_time is None else event_time,
        "authorizations": [
            {
                "enterprise_id": None,
                "team_id": team_id,
                "user_id": bot_user_id,
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ],
        "is_ext_shared_channel": False,
        "event_context": f"4-fake-{uuid.uuid4().hex[:12]}",
    }
    body = json.dumps(envelope).encode()
    headers = {"Content-Type": "application/json", "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)"}
    headers |= sign(secret, body, timestamp=timestamp)
    if retry_num is not None:
        headers |= {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": retry_reason}
    return body, headers


def signed_action(
    secret: str, payload: Mapping[str, Any], *, timestamp: int | None = None
) -> tuple[bytes, dict[str, str]]:
    """An interactivity POST as Slack sends it: form-encoded `payload=<json>` and its signed headers."""
    body = urlencode({"payload": json.dumps(payload)}).encode()
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
    }
    return body, headers | sign(secret, body, timestamp=timestamp)


def app_mention_event(
    channel: str, user: str, text: str, ts: str, thread_ts: str | None = None, *, team_id: str = TEAM_ID
) -> dict[str, Any]:
    """The `event` of an `app_mention` (https://docs.slack.dev/reference/events/app_mention).

    `team_id` is the author's workspace, in `team`, `user_team` and `source_team` as Slack sends them; for a
    Slack Connect author it differs from the envelope's `team_id` (the installation the event is delivered to).
    """
    event: dict[str, Any] = {
        "type": "app_mention",
        "user": user,
        "text": text,
        "ts": ts,
        "client_msg_id": str(uuid.uuid4()),
        "team": team_id,
        "user_team": team_id,
        "source_team": team_id,
        "blocks": [
            {
                "type": "rich_text",
                "block_id": secrets.token_hex(3),
                "elements": [{"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}],
            }
        ],
        "channel": channel,
        "event_ts": ts,
    }
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    return event


def block_actions_payload(
    user_id: str,
    team_id: str,
    channel: str,
    message_ts: str,
    thread_ts: str | None,
    action_id: str,
    value: str,
    block_id: str = "opsagent_approval",
    *,
    username: str | None = None,
    user_team_id: str | None = None,
    team_domain: str = TEAM_DOMAIN,
    channel_name: str = "incident",
    message_text: str = "",
    message_blocks: Sequence[Mapping[str, Any]] | None = None,
    message_user: str = BOT_USER_ID,
    bot_id: str = BOT_ID,
    api_app_id: str = APP_ID,
    button_text: str = "Approve",
    style: str | None = None,
    is_ephemeral: bool = False,
    response_url: str | None = None,
    trigger_id: str | None = None,
    element_type: str = "button",
) -> dict[str, Any]:
    """A `block_actions` payload for a button click on a message, shaped like Slack's (`element_type`
    "feedback_buttons" for a 👍/👎, whose `value` is the clicked button's).

    `user_team_id` differs from `team_id` for a Slack Connect clicker; `response_url` may come from
    `SlackFake.response_url` so that Bolt's `respond()` lands on the fake.
    """
    message: dict[str, Any] = {
        "bot_id": bot_id,
        "type": "message",
        "text": message_text,
        "user": message_user,
        "ts": message_ts,
        "app_id": api_app_id,
        "team": team_id,
        "blocks": [dict(b) for b in message_blocks or []],
    }
    container: dict[str, Any] = {
        "type": "message",
        "message_ts": message_ts,
        "channel_id": channel,
        "is_ephemeral": is_ephemeral,
    }
    if thread_ts is not None:
        message["thread_ts"] = thread_ts
        container["thread_ts"] = thread_ts
    action: dict[str, Any] = {
        "action_id": action_id,
        "block_id": block_id,
        "text": {"type": "plain_text", "text": button_text, "emoji": True},
        "value": value,
        "type": element_type,
        "action_ts": f"{time.time():.6f}",
    }
    if style is not None:
        action["style"] = style
    name = username or user_id.lower()
    return {
        "type": "block_actions",
        "user": {"id": user_id, "username": name, "name": name, "team_id": user_team_id or team_id},
        "api_app_id": api_app_id,
        "token": "fake-verification-token",
        "container": container,
        "trigger_id": trigger_id or f"{int(time.time())}.{secrets.randbelow(10**12)}.{secrets.token_hex(16)}",
        "team": {"id": team_id, "domain": team_domain},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel, "name": channel_name},
        "message": message,
        "state": {"values": {}},
        "response_url": response_url or f"https://hooks.slack.com/actions/{team_id}/{secrets.randbelow(10**12)}/fake",
        "actions": [action],
    }


def view_submission_payload(
    user_id: str,
    team_id: str,
    callback_id: str,
    private_metadata: str,
    values: Mapping[str, Mapping[str, str]],
    *,
    api_app_id: str = APP_ID,
) -> dict[str, Any]:
    """A `view_submission` payload for a modal's Submit, shaped like Slack's: `values` is
    `{block_id: {action_id: typed text}}`, as plain-text inputs report it in `view.state.values`."""
    state = {
        block: {action: {"type": "plain_text_input", "value": text} for action, text in inputs.items()}
        for block, inputs in values.items()
    }
    name = user_id.lower()
    return {
        "type": "view_submission",
        "team": {"id": team_id, "domain": TEAM_DOMAIN},
        "user": {"id": user_id, "username": name, "name": name, "team_id": team_id},
        "api_app_id": api_app_id,
        "token": "fake-verification-token",
        "trigger_id": f"{int(time.time())}.{secrets.randbelow(10**12)}.{secrets.token_hex(16)}",
        "view": {
            "id": f"V{secrets.randbelow(10**10):010d}",
            "team_id": team_id,
            "type": "modal",
            "callback_id": callback_id,
            "private_metadata": private_metadata,
            "title": {"type": "plain_text", "text": "Modal"},
            "blocks": [],
            "state": {"values": state},
            "hash": f"{int(time.time())}.{secrets.token_hex(4)}",
            "app_id": api_app_id,
            "bot_id": BOT_ID,
        },
        "response_urls": [],
        "is_enterprise_install": False,
        "enterprise": None,
    }
