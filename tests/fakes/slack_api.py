"""A fake Slack Web API on 127.0.0.1 that the real AsyncWebClient talks to, with Slack's limits and injected faults.

Also signs Events API and interactivity requests the way Slack does, and builds realistic payloads, for a Bolt app.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import math
import mimetypes
import secrets
import time
import uuid
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

from aiohttp import web
from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from servers.local_server import LocalServer

# --- Identities the fake and the payload builders agree on ---------------------------------------

TEAM_ID = "T0OPSTEST"
TEAM_NAME = "OpsAgent Test"
TEAM_DOMAIN = "opsagent-test"
BOT_TOKEN = "xoxb-opsagent-test-token"
BOT_USER_ID = "U0OPSBOT"
BOT_ID = "B0OPSBOT"
BOT_NAME = "opsagent"
APP_ID = "A0OPSAGENT"
SIGNING_SECRET = "opsagent-test-signing-secret"
UPLOAD = "upload"
"""The call-log name (and fault key) of the raw byte POST to an `upload_url`."""
RESPONSE_URL = "response_url"
"""The call-log name (and fault key) of a POST to a `response_url` made by `SlackFake.response_url`."""

# --- Slack's limits (https://docs.slack.dev/reference/block-kit/blocks and the element pages) ------

MAX_TEXT = 40_000
MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3_000
MAX_SECTION_FIELDS = 10
MAX_SECTION_FIELD_TEXT = 2_000
MAX_HEADER_TEXT = 150
MAX_MARKDOWN_TEXT = 12_000
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2_000
MAX_BUTTON_URL = 3_000
MAX_ID = 255
MAX_ACTIONS_ELEMENTS = 25
MAX_CONTEXT_ELEMENTS = 10
MAX_CONTEXT_ACTIONS_ELEMENTS = 5
MAX_CONFIRM_TITLE = 100
MAX_CONFIRM_TEXT = 300
MAX_CONFIRM_LABEL = 30
MAX_LOADING_MESSAGES = 10
RESPONSE_URL_USES = 5

TRUNCATION_WARNING = (
    "[WARN] Your message was truncated but still posted. The `text` field accepts up to 40,000 characters."
)


# --- Recorded state -------------------------------------------------------------------------------


@dataclass
class Message:
    """A message in a channel: posted by the bot through the API, or seeded with `SlackFake.add_message`."""

    channel: str
    ts: str
    text: str
    user: str
    thread_ts: str | None = None
    blocks: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] | None = None
    files: list[dict[str, Any]] = field(default_factory=list)
    bot_id: str | None = None
    app_id: str | None = None
    team: str = TEAM_ID
    markdown_text: str | None = None
    reply_broadcast: bool = False
    reply_count: int = 0
    edited: dict[str, str] | None = None
    edits: list[dict[str, Any]] = field(default_factory=list)
    """Earlier versions, oldest first: {"text", "blocks", "metadata", "replaced_at"}."""

    @property
    def is_reply(self) -> bool:
        return self.thread_ts is not None and self.thread_ts != self.ts

    def to_api(self) -> dict[str, Any]:
        """The message object as Slack's API returns it."""
        body: dict[str, Any] = {
            "type": "message",
            "user": self.user,
            "text": self.text,
            "ts": self.ts,
            "team": self.team,
        }
        if self.bot_id:
            body |= {"bot_id": self.bot_id, "app_id": self.app_id}
        if self.blocks:
            body["blocks"] = self.blocks
        if self.metadata is not None:
            body["metadata"] = self.metadata
        if self.files:
            body["files"] = self.files
        if self.thread_ts is not None:
            body["thread_ts"] = self.thread_ts
        if self.reply_count:
            body["reply_count"] = self.reply_count
        if self.edited is not None:
            body["edited"] = self.edited
        return body


@dataclass
class Ephemeral:
    """A `chat.postEphemeral` (or an ephemeral `response_url` reply): seen by `user` only."""

    channel: str
    user: str
    text: str
    blocks: list[dict[str, Any]]
    thread_ts: str | None
    message_ts: str


@dataclass
class UploadedFile:
    """One file of the two-step upload: announced, then its bytes, then completed into a channel or thread."""

    id: str
    filename: str
    length: int
    upload_key: str
    content: bytes | None = None
    title: str | None = None
    alt_txt: str | None = None
    snippet_type: str | None = None
    channel: str | None = None
    thread_ts: str | None = None
    initial_comment: str | None = None
    completed: bool = False

    @property
    def text(self) -> str:
        return (self.content or b"").decode("utf-8", errors="replace")

    def to_api(self, *, user: str, team_id: str, team_domain: str) -> dict[str, Any]:
        mimetype = mimetypes.guess_type(self.filename)[0] or "text/plain"
        url = f"https://files.slack.com/files-pri/{team_id}-{self.id}/{self.filename}"
        return {
            "id": self.id,
            "created": 1_700_000_000,
            "timestamp": 1_700_000_000,
            "name": self.filename,
            "title": self.title or self.filename,
            "mimetype": mimetype,
            "filetype": self.filename.rsplit(".", 1)[-1] if "." in self.filename else "text",
            "user": user,
            "size": len(self.content or b""),
            "url_private": url,
            "permalink": f"https://{team_domain}.slack.com/files/{user}/{self.id}/{self.filename}",
        }


@dataclass
class StatusUpdate:
    """One `assistant.threads.setStatus` call; an empty status clears it."""

    channel: str
    thread_ts: str
    status: str
    loading_messages: list[str]


@dataclass
class ResponseUrlPost:
    """A POST to a `response_url` made by `SlackFake.response_url`."""

    channel: str
    message_ts: str
    body: dict[str, Any]


@dataclass
class ApiCall:
    """One request the fake received: `status` is the HTTP status, `error` Slack's error code (None when ok)."""

    method: str
    params: dict[str, Any]
    http_method: str
    at: float
    status: int = 200
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == 200 and self.error is None


@dataclass
class _Fault:
    status: int
    error: str | None
    retry_after: int | None


@dataclass
class _RateLimit:
    per_second: float
    per_channel: bool
    burst: int
    retry_after: int | None
    buckets: dict[str, tuple[float, float]] = field(default_factory=dict)


class _ApiError(Exception):
    def __init__(self, error: str, **extra: Any) -> None:
        super().__init__(error)
        self.error = error
        self.extra = extra


# --- Block Kit validation -------------------------------------------------------------------------


def _text(value: Any) -> str | None:
    """The string inside a text object (or a bare string); None when there is none."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("text"), str):
        return value["text"]
    return None


def _too_long(value: str | None, limit: int, pointer: str) -> list[str]:
    if value is not None and len(value) > limit:
        return [f"must be less than {limit + 1} characters [json-pointer:{pointer}]"]
    return []


def _confirm_errors(confirm: Any, pointer: str) -> list[str]:
    if not isinstance(confirm, Mapping):
        return []
    errors: list[str] = []
    errors += _too_long(_text(confirm.get("title")), MAX_CONFIRM_TITLE, f"{pointer}/title/text")
    errors += _too_long(_text(confirm.get("text")), MAX_CONFIRM_TEXT, f"{pointer}/text/text")
    for label in ("confirm", "deny"):
        errors += _too_long(_text(confirm.get(label)), MAX_CONFIRM_LABEL, f"{pointer}/{label}/text")
    return errors


def _element_errors(element: Any, pointer: str) -> list[str]:
    if not isinstance(element, Mapping):
        return [f"expected an object [json-pointer:{pointer}]"]
    errors: list[str] = []
    errors += _too_long(element.get("action_id"), MAX_ID, f"{pointer}/action_id")
    if element.get("type") == "button":
        errors += _too_long(_text(element.get("text")), MAX_BUTTON_TEXT, f"{pointer}/text/text")
        errors += _too_long(element.get("value"), MAX_BUTTON_VALUE, f"{pointer}/value")
        errors += _too_long(element.get("url"), MAX_BUTTON_URL, f"{pointer}/url")
    if "confirm" in element:
        errors += _confirm_errors(element["confirm"], f"{pointer}/confirm")
    return errors


def _elements_errors(block: Mapping[str, Any], limit: int, pointer: str) -> list[str]:
    elements = block.get("elements")
    if not isinstance(elements, list):
        return [f"expected an array [json-pointer:{pointer}/elements]"]
    if len(elements) > limit:
        return [f"no more than {limit} items allowed [json-pointer:{pointer}/elements]"]
    errors: list[str] = []
    seen: set[str] = set()
    for j, element in enumerate(elements):
        errors += _element_errors(element, f"{pointer}/elements/{j}") if block["type"] != "context" else []
        action_id = element.get("action_id") if isinstance(element, Mapping) else None
        if action_id is not None:
            if action_id in seen:
                errors.append(
                    f"action_id must be unique in a block: {action_id} [json-pointer:{pointer}/elements/{j}/action_id]"
                )
            seen.add(action_id)
    return errors


def _block_errors(block: Mapping[str, Any], pointer: str) -> list[str]:
    kind = block["type"]
    errors: list[str] = []
    if kind == "section":
        text, fields = block.get("text"), block.get("fields")
        if text is None and not fields:
            errors.append(f"must define either `text` or `fields` [json-pointer:{pointer}/type]")
        body = _text(text)
        if body is not None and not body:
            errors.append(f"must be more than 0 characters [json-pointer:{pointer}/text/text]")
        errors += _too_long(body, MAX_SECTION_TEXT, f"{pointer}/text/text")
        if isinstance(fields, list):
            if len(fields) > MAX_SECTION_FIELDS:
                errors.append(f"no more than {MAX_SECTION_FIELDS} items allowed [json-pointer:{pointer}/fields]")
            for j, item in enumerate(fields):
                errors += _too_long(_text(item), MAX_SECTION_FIELD_TEXT, f"{pointer}/fields/{j}/text")
        if "accessory" in block:
            errors += _element_errors(block["accessory"], f"{pointer}/accessory")
    elif kind == "header":
        body = _text(block.get("text"))
        if body is not None and len(body) > MAX_HEADER_TEXT:
            errors.append(f"must be no longer than {MAX_HEADER_TEXT} characters [json-pointer:{pointer}/text/text]")
    elif kind == "markdown":
        errors += _too_long(block.get("text"), MAX_MARKDOWN_TEXT, f"{pointer}/text")
    elif kind == "actions":
        errors += _elements_errors(block, MAX_ACTIONS_ELEMENTS, pointer)
    elif kind == "context":
        errors += _elements_errors(block, MAX_CONTEXT_ELEMENTS, pointer)
    elif kind == "context_actions":
        errors += _elements_errors(block, MAX_CONTEXT_ACTIONS_ELEMENTS, pointer)
    return errors


def check_blocks(blocks: Any) -> tuple[str, list[str]] | None:
    """Slack's verdict on a message's `blocks`: None when they are accepted, else `(error, messages)`.

    The messages look like Slack's: `must be less than 3001 characters [json-pointer:/blocks/0/text/text]`.
    Checks the documented limits first, then asks `slack_sdk`'s own models (`Block.parse(...).validate_json()`).
    """
    if not isinstance(blocks, list):
        return "invalid_blocks_format", ["blocks must be a JSON array [json-pointer:/blocks]"]
    if len(blocks) > MAX_BLOCKS:
        return "invalid_blocks", [f"no more than {MAX_BLOCKS} items allowed [json-pointer:/blocks]"]
    errors: list[str] = []
    block_ids: set[str] = set()
    markdown_total = 0
    for i, block in enumerate(blocks):
        pointer = f"/blocks/{i}"
        if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
            errors.append(f"missing required field: type [json-pointer:{pointer}]")
            continue
        block_id = block.get("block_id")
        if block_id is not None:
            errors += _too_long(block_id, MAX_ID, f"{pointer}/block_id")
            if block_id in block_ids:
                errors.append(f"duplicate block_id: {block_id} [json-pointer:{pointer}/block_id]")
            block_ids.add(block_id)
        if block["type"] == "markdown" and isinstance(block.get("text"), str):
            markdown_total += len(block["text"])
        own = _block_errors(block, pointer)
        if not own:
            own = _sdk_block_errors(block, pointer)
        errors += own
    if errors:
        return "invalid_blocks", errors
    if markdown_total > MAX_MARKDOWN_TEXT:
        return "msg_blocks_too_long", []
    return None


def _sdk_block_errors(block: Mapping[str, Any], pointer: str) -> list[str]:
    try:
        parsed = Block.parse(dict(block))
        if parsed is None:
            return [f"unsupported type: {block['type']} [json-pointer:{pointer}/type]"]
        parsed.validate_json()
    except (SlackObjectFormationError, TypeError, ValueError, KeyError, AttributeError) as exc:
        return [f"{exc} [json-pointer:{pointer}]"]
    return []


# --- The server -----------------------------------------------------------------------------------


def _truthy(value: Any) -> bool:
    return value in (True, 1, "1", "true", "True")


def _json_param(value: Any, error: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise _ApiError(error) from exc
    return value


class SlackFake(LocalServer):
    """Slack's Web API on a free 127.0.0.1 port: point `AsyncWebClient(base_url=fake.api_url)` at it.

    State: `messages(channel)`, `thread(channel, thread_ts)`, `posted`, `ephemerals`, `reactions`, `files`,
    `status_updates`, `responses`, and `calls` (every request, faults included). Faults: `fail_next`,
    `fail_always`, `rate_limit`, `hang`, `clear_faults`. A request for a method the fake lacks gets
    `unknown_method`, as on Slack. Delays end at once when the server closes.
    """

    def __init__(
        self,
        *,
        token: str = BOT_TOKEN,
        team_id: str = TEAM_ID,
        team_name: str = TEAM_NAME,
        team_domain: str = TEAM_DOMAIN,
        bot_user_id: str = BOT_USER_ID,
        bot_id: str = BOT_ID,
        bot_name: str = BOT_NAME,
        app_id: str = APP_ID,
        users: Mapping[str, Mapping[str, Any]] | None = None,
        usergroups: Mapping[str, Iterable[str]] | None = None,
        channels: Iterable[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.token = token
        self.team_id = team_id
        self.team_name = team_name
        self.team_domain = team_domain
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.bot_name = bot_name
        self.app_id = app_id
        self.clock = clock
        self.users: dict[str, dict[str, Any]] = {}
        self.add_user(bot_user_id, name=bot_name, is_bot=True)
        for user_id, fields in (users or {}).items():
            self.add_user(user_id, **fields)
        self.usergroups: dict[str, list[str]] = {k: list(v) for k, v in (usergroups or {}).items()}
        self.channels: set[str] | None = set(channels) if channels is not None else None
        """When set, any other channel answers `channel_not_found`."""

        self.calls: list[ApiCall] = []
        self.posted: list[Message] = []
        """Every message the bot posted (chat.postMessage, file shares, in_channel responses), in order."""
        self.ephemerals: list[Ephemeral] = []
        self.reactions: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.files: dict[str, UploadedFile] = {}
        self.status_updates: list[StatusUpdate] = []
        self.responses: list[ResponseUrlPost] = []
        self._channels: dict[str, dict[str, Message]] = defaultdict(dict)
        self._statuses: dict[tuple[str, str], str] = {}
        self._uploads: dict[str, str] = {}
        self._response_urls: dict[str, dict[str, Any]] = {}
        self._ts_micros = 1_700_000_000_000_000
        self._ids = itertools.count(1)
        self._faults: dict[str, deque[_Fault]] = defaultdict(deque)
        self._always: dict[str, _Fault] = {}
        self._limits: dict[str, _RateLimit] = {}
        self._hangs: dict[str, list[Any]] = {}
        self._handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._chat_post_message,
            "chat.update": self._chat_update,
            "chat.postEphemeral": self._chat_post_ephemeral,
            "reactions.add": self._reactions_add,
            "reactions.remove": self._reactions_remove,
            "users.info": self._users_info,
            "usergroups.users.list": self._usergroups_users_list,
            "files.getUploadURLExternal": self._files_get_upload_url,
            "files.completeUploadExternal": self._files_complete_upload,
            "assistant.threads.setStatus": self._assistant_set_status,
            "conversations.replies": self._conversations_replies,
        }

    # --- lifecycle --------------------------------------------------------------------------------

    @property
    def api_url(self) -> str:
        """The `base_url` for `AsyncWebClient` (it joins `{base_url}{method}`)."""
        return f"{self.url}/api/"

    def client(self, **kwargs: Any) -> AsyncWebClient:
        """A real `AsyncWebClient` on this fake, with the bot token unless `token=` says otherwise."""
        return AsyncWebClient(**({"token": self.token, "base_url": self.api_url} | kwargs))

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/upload/v1/{key}", self._handle_upload)
        app.router.add_post("/actions/{key}", self._handle_response_url)
        app.router.add_route("*", "/api/{method}", self._handle_api)

    # --- directory and seeding ----------------------------------------------------------------------

    def add_user(
        self,
        user_id: str,
        *,
        name: str | None = None,
        is_bot: bool = False,
        deleted: bool = False,
        is_restricted: bool = False,
        is_ultra_restricted: bool = False,
        team_id: str | None = None,
        is_admin: bool = False,
    ) -> dict[str, Any]:
        """Adds (or replaces) a `users.info` entry; guests are `is_restricted`/`is_ultra_restricted`."""
        name = name or user_id.lower()
        user = {
            "id": user_id,
            "team_id": team_id or self.team_id,
            "name": name,
            "deleted": deleted,
            "real_name": name.title(),
            "tz": "Etc/UTC",
            "profile": {"real_name": name.title(), "display_name": name, "team": team_id or self.team_id},
            "is_admin": is_admin,
            "is_owner": False,
            "is_bot": is_bot,
            "is_app_user": False,
            "is_restricted": is_restricted or is_ultra_restricted,
            "is_ultra_restricted": is_ultra_restricted,
            "updated": 1_700_000_000,
        }
        self.users[user_id] = user
        return user

    def add_message(
        self,
        channel: str,
        text: str,
        *,
        user: str,
        ts: str | None = None,
        thread_ts: str | None = None,
        blocks: list[dict[str, Any]] | None = None,
    ) -> Message:
        """Seeds a human message (say, the @-mention that starts a run) so that replies, reactions and
        `conversations.replies` can find it. It is not an API call and is not logged."""
        message = Message(
            channel=channel, ts=ts or self.next_ts(), text=text, user=user, thread_ts=thread_ts, blocks=blocks or []
        )
        self._store(message)
        return message

    def next_ts(self) -> str:
        """A fresh message timestamp, later than every earlier one: "1700000000.000100", "...000200", …"""
        self._ts_micros += 100
        return f"{self._ts_micros // 1_000_000}.{self._ts_micros % 1_000_000:06d}"

    def response_url(self, channel: str, message_ts: str, *, user: str | None = None) -> str:
        """A `response_url` on this fake for a click on `(channel, message_ts)` by `user`.

        Bolt's `respond()` posts there: `replace_original` edits the message, `delete_original` removes it,
        `response_type="in_channel"` posts a new one, anything else is an ephemeral to `user`. Like Slack,
        a URL takes at most 5 posts; later ones get HTTP 404 `used_url`.
        """
        key = secrets.token_hex(8)
        self._response_urls[key] = {"channel": channel, "message_ts": message_ts, "user": user, "uses": 0}
        return f"{self.url}/actions/{key}"

    # --- reading state ------------------------------------------------------------------------------

    def messages(self, channel: str) -> list[Message]:
        """Every message in a channel, top-level and replies, in ts order."""
        return sorted(self._channels.get(channel, {}).values(), key=lambda m: m.ts)

    def message(self, channel: str, ts: str) -> Message:
        """The message at `(channel, ts)`; KeyError when there is none."""
        return self._channels[channel][ts]

    def thread(self, channel: str, thread_ts: str) -> list[Message]:
        """The thread at `(channel, thread_ts)`: the parent (when known) first, then the replies, in order."""
        return [m for m in self.messages(channel) if m.ts == thread_ts or m.thread_ts == thread_ts]

    @property
    def threads(self) -> dict[tuple[str, str], list[Message]]:
        """Every thread with at least one reply, keyed by `(channel, thread_ts)`."""
        keys = {(m.channel, m.thread_ts) for ch in self._channels.values() for m in ch.values() if m.is_reply}
        return {(channel, ts): self.thread(channel, ts) for channel, ts in sorted(keys) if ts is not None}

    def status(self, channel: str, thread_ts: str) -> str:
        """The thread's current assistant status; "" when unset or cleared (by "" or by a bot reply)."""
        return self._statuses.get((channel, thread_ts), "")

    def calls_to(self, method: str) -> list[ApiCall]:
        return [call for call in self.calls if call.method == method]

    def count(self, method: str | None = None) -> int:
        """How many requests reached the fake (for `method`, or all), faults and errors included."""
        return len(self.calls) if method is None else len(self.calls_to(method))

    # --- faults -------------------------------------------------------------------------------------

    def fail_next(
        self,
        method: str,
        *,
        times: int = 1,
        status: int = 429,
        retry_after: int | None = None,
        error: str | None = None,
    ) -> None:
        """The next `times` calls to `method` fail before anything else is checked.

        429 sends `Retry-After` (default 1 s; Slack never sends 0) and `{"ok": false, "error": "ratelimited"}`;
        500/503 send `fatal_error`/`service_unavailable` (and `Retry-After` only when given); status 200 with
        `error=` sends a plain Slack error such as `not_in_channel`.
        """
        if status == 429 and retry_after is None:
            retry_after = 1
        self._faults[method].extend(_Fault(status, error, retry_after) for _ in range(times))

    def fail_always(self, method: str, error: str, *, status: int = 200, retry_after: int | None = None) -> None:
        """Every authenticated call to `method` answers `error` until `clear_faults`, e.g.
        `fail_always("assistant.threads.setStatus", "feature_not_enabled")` or `("usergroups.users.list",
        "plan_upgrade_required")`; with status 429 (an outage of rate limits) `Retry-After` defaults to 1 s."""
        if status == 429 and retry_after is None:
            retry_after = 1
        self._always[method] = _Fault(status, error, retry_after)

    def rate_limit(
        self,
        method: str = "chat.postMessage",
        *,
        per_second: float = 1.0,
        per_channel: bool = True,
        burst: int = 1,
        retry_after: int | None = None,
    ) -> None:
        """Emulates a rate limit (by default chat.postMessage's ~1 msg/s per channel) with a token bucket on
        `clock`: a call beyond it gets HTTP 429 with `Retry-After` (whole seconds, at least 1)."""
        self._limits[method] = _RateLimit(per_second, per_channel, burst, retry_after)

    def hang(self, method: str, seconds: float, *, times: int | None = 1) -> None:
        """The next `times` calls to `method` (every call when None) wait `seconds` before being handled.

        aiohttp keeps handling after the client gives up, so a timed-out call may still take effect, as on Slack.
        """
        self._hangs[method] = [seconds, times]

    def clear_faults(self, method: str | None = None) -> None:
        for table in (self._faults, self._always, self._limits, self._hangs):
            if method is None:
                table.clear()
            else:
                table.pop(method, None)

    # --- request plumbing ---------------------------------------------------------------------------

    async def _read_params(self, request: web.Request) -> dict[str, Any]:
        params: dict[str, Any] = dict(request.query)
        if request.content_type == "multipart/form-data":
            form = await request.post()
            params.update({k: (v if isinstance(v, str) else v.file.read()) for k, v in form.items()})
            return params
        raw = await request.read()
        if not raw:
            return params
        if request.content_type == "application/json":
            try:
                body = json.loads(raw)
            except ValueError as exc:
                raise _ApiError("invalid_json") from exc
            if not isinstance(body, dict):
                raise _ApiError("invalid_json")
            params.update(body)
        elif request.content_type in ("application/x-www-form-urlencoded", "text/plain"):
            params.update(parse_qsl(raw.decode("utf-8"), keep_blank_values=True))
        else:
            raise _ApiError("invalid_post_type")
        return params

    async def _wait_if_hanging(self, method: str) -> None:
        hang = self._hangs.get(method)
        if hang is None:
            return
        seconds, times = hang
        if times is not None:
            hang[1] = times - 1
            if hang[1] <= 0:
                del self._hangs[method]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._closing.wait(), seconds)

    def _fault_response(self, call: ApiCall, fault: _Fault) -> web.Response:
        defaults = {429: "ratelimited", 500: "fatal_error", 503: "service_unavailable"}
        error = fault.error or defaults.get(fault.status, "fatal_error")
        headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
        call.status, call.error = fault.status, error
        return web.json_response({"ok": False, "error": error}, status=fault.status, headers=headers)

    def _rate_limited(self, method: str, params: dict[str, Any]) -> int | None:
        """Seconds to wait when this call is over the method's limit; None when it may go ahead."""
        limit = self._limits.get(method)
        if limit is None:
            return None
        key = str(params.get("channel") or params.get("channel_id") or "") if limit.per_channel else ""
        now = self.clock()
        tokens, last = limit.buckets.get(key, (float(limit.burst), now))
        tokens = min(float(limit.burst), tokens + (now - last) * limit.per_second)
        if tokens >= 1.0:
            limit.buckets[key] = (tokens - 1.0, now)
            return None
        limit.buckets[key] = (tokens, now)
        return limit.retry_after or max(1, math.ceil((1.0 - tokens) / limit.per_second))

    async def _handle_api(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        call = ApiCall(method=method, params={}, http_method=request.method, at=self.clock())
        self.calls.append(call)
        try:
            params = await self._read_params(request)
        except _ApiError as exc:
            call.error = exc.error
            return web.json_response({"ok": False, "error": exc.error})
        header = request.headers.get("Authorization", "")
        token = header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else params.pop("token", None)
        params.pop("token", None)
        call.params = params
        await self._wait_if_hanging(method)
        if self._faults.get(method):
            return self._fault_response(call, self._faults[method].popleft())
        try:
            handler = self._handlers.get(method)
            if handler is None:
                raise _ApiError("unknown_method", req_method=method)
            if not token:
                raise _ApiError("not_authed")
            if token != self.token:
                raise _ApiError("invalid_auth")
            if method in self._always:
                fault = self._always[method]
                if fault.status != 200:
                    return self._fault_response(call, fault)
                raise _ApiError(fault.error or "fatal_error")
            wait = self._rate_limited(method, params)
            if wait is not None:
                return self._fault_response(call, _Fault(429, "ratelimited", wait))
            body = handler(params)
        except _ApiError as exc:
            call.error = exc.error
            return web.json_response({"ok": False, "error": exc.error} | exc.extra)
        return web.json_response({"ok": True} | body)

    # --- helpers for the handlers -------------------------------------------------------------------

    def _channel(self, params: Mapping[str, Any], name: str = "channel") -> str:
        channel = params.get(name)
        if not channel or (self.channels is not None and channel not in self.channels):
            raise _ApiError("channel_not_found")
        return str(channel)

    def _store(self, message: Message) -> None:
        self._channels[message.channel][message.ts] = message
        if message.is_reply:
            parent = self._channels[message.channel].get(message.thread_ts or "")
            if parent is not None:
                parent.thread_ts = parent.ts
                parent.reply_count += 1

    def _checked_blocks(self, params: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        if "blocks" not in params or params["blocks"] is None:
            return None
        blocks = _json_param(params["blocks"], "invalid_blocks_format")
        verdict = check_blocks(blocks)
        if verdict is not None:
            error, messages = verdict
            extra: dict[str, Any] = {}
            if messages:
                extra = {"errors": messages, "response_metadata": {"messages": [f"[ERROR] {m}" for m in messages]}}
            raise _ApiError(error, **extra)
        for block in blocks:
            block.setdefault("block_id", f"fake{next(self._ids)}")
            for element in block.get("elements", []) if block.get("type") == "actions" else []:
                if isinstance(element, dict):
                    element.setdefault("action_id", f"fake{next(self._ids)}")
        return blocks

    def _metadata(self, params: Mapping[str, Any]) -> dict[str, Any] | None:
        if params.get("metadata") in (None, ""):
            return None
        metadata = _json_param(params["metadata"], "invalid_metadata_format")
        if not isinstance(metadata, dict) or "event_type" not in metadata or "event_payload" not in metadata:
            raise _ApiError("invalid_metadata_format")
        return metadata

    @staticmethod
    def _truncated(text: str) -> tuple[str, dict[str, Any]]:
        if len(text) <= MAX_TEXT:
            return text, {}
        warning = {
            "warning": "message_truncated",
            "response_metadata": {"warnings": ["message_truncated"], "messages": [TRUNCATION_WARNING]},
        }
        return text[:MAX_TEXT], warning

    def _bot_message(self, channel: str, text: str, **fields: Any) -> Message:
        message = Message(
            channel=channel,
            ts=self.next_ts(),
            text=text,
            user=self.bot_user_id,
            bot_id=self.bot_id,
            app_id=self.app_id,
            team=self.team_id,
            **fields,
        )
        self._store(message)
        self.posted.append(message)
        if message.thread_ts is not None:
            self._statuses.pop((channel, message.thread_ts), None)
        return message

    def _find(self, channel: str, ts: Any) -> Message:
        message = self._channels.get(channel, {}).get(str(ts or ""))
        if message is None:
            raise _ApiError("message_not_found")
        return message

    # --- methods ------------------------------------------------------------------------------------

    def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "url": f"https://{self.team_domain}.slack.com/",
            "team": self.team_name,
            "user": self.bot_name,
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def _chat_post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(params)
        blocks = self._checked_blocks(params)
        text = params.get("text")
        markdown_text = params.get("markdown_text")
        if not text and not blocks and not params.get("attachments") and not markdown_text:
            raise _ApiError("no_text")
        text, warning = self._truncated(str(text or ""))
        thread_ts = params.get("thread_ts") or None
        message = self._bot_message(
            channel,
            text,
            thread_ts=str(thread_ts) if thread_ts else None,
            blocks=blocks or [],
            metadata=self._metadata(params),
            markdown_text=markdown_text,
            reply_broadcast=_truthy(params.get("reply_broadcast")),
        )
        return {"channel": channel, "ts": message.ts, "message": message.to_api()} | warning

    def _chat_update(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(params)
        message = self._find(channel, params.get("ts"))
        if message.user != self.bot_user_id:
            raise _ApiError("cant_update_message")
        blocks = self._checked_blocks(params)
        metadata = self._metadata(params)
        warning: dict[str, Any] = {}
        message.edits.append(
            {"text": message.text, "blocks": message.blocks, "metadata": message.metadata, "replaced_at": self.clock()}
        )
        if params.get("text") is not None:
            message.text, warning = self._truncated(str(params["text"]))
        if blocks is not None:
            message.blocks = blocks
        if metadata is not None:
            message.metadata = metadata
        message.edited = {"user": self.bot_user_id, "ts": self.next_ts()}
        return {"channel": channel, "ts": message.ts, "text": message.text, "message": message.to_api()} | warning

    def _chat_post_ephemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(params)
        user = params.get("user")
        if not user:
            raise _ApiError("user_not_found")
        blocks = self._checked_blocks(params)
        if not params.get("text") and not blocks and not params.get("attachments"):
            raise _ApiError("no_text")
        text, warning = self._truncated(str(params.get("text") or ""))
        ephemeral = Ephemeral(
            channel=channel,
            user=str(user),
            text=text,
            blocks=blocks or [],
            thread_ts=params.get("thread_ts") or None,
            message_ts=self.next_ts(),
        )
        self.ephemerals.append(ephemeral)
        return {"message_ts": ephemeral.message_ts} | warning

    def _reactions_add(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(params)
        name = str(params.get("name") or "")
        if not name:
            raise _ApiError("invalid_name")
        message = self._find(channel, params.get("timestamp"))
        names = self.reactions[(channel, message.ts)]
        if name in names:
            raise _ApiError("already_reacted")
        names.append(name)
        return {}

    def _reactions_remove(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(params)
        message = self._find(channel, params.get("timestamp"))
        names = self.reactions[(channel, message.ts)]
        name = str(params.get("name") or "")
        if name not in names:
            raise _ApiError("no_reaction")
        names.remove(name)
        return {}

    def _users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user = self.users.get(str(params.get("user") or ""))
        if user is None:
            raise _ApiError("user_not_found")
        return {"user": user}

    def _usergroups_users_list(self, params: dict[str, Any]) -> dict[str, Any]:
        users = self.usergroups.get(str(params.get("usergroup") or ""))
        if users is None:
            raise _ApiError("no_such_subteam")
        return {"users": list(users)}

    def _files_get_upload_url(self, params: dict[str, Any]) -> dict[str, Any]:
        filename = params.get("filename")
        try:
            length = int(params.get("length", ""))
        except ValueError as exc:
            raise _ApiError("invalid_arguments") from exc
        if not filename or length < 0:
            raise _ApiError("invalid_arguments")
        file_id = f"F{next(self._ids):010d}"
        key = secrets.token_urlsafe(12)
        self.files[file_id] = UploadedFile(
            id=file_id,
            filename=str(filename),
            length=length,
            upload_key=key,
            alt_txt=params.get("alt_txt"),
            snippet_type=params.get("snippet_type"),
        )
        self._uploads[key] = file_id
        return {"upload_url": f"{self.url}/upload/v1/{key}", "file_id": file_id}

    def _files_complete_upload(self, params: dict[str, Any]) -> dict[str, Any]:
        items = _json_param(params.get("files"), "invalid_arguments")
        if not isinstance(items, list) or not items:
            raise _ApiError("invalid_arguments")
        channel = params.get("channel_id") or None
        if channel is None and params.get("channels"):
            channel = str(params["channels"]).split(",")[0]
        if channel is not None:
            channel = self._channel({"channel": channel})
        thread_ts = params.get("thread_ts") or None
        if thread_ts is not None and channel is None:
            raise _ApiError("invalid_arguments")
        completed: list[UploadedFile] = []
        for item in items:
            upload = self.files.get(str(item.get("id"))) if isinstance(item, Mapping) else None
            if upload is None or upload.content is None or upload.completed:
                raise _ApiError("file_not_found")
            completed.append(upload)
        shared = []
        for item, upload in zip(items, completed, strict=True):
            upload.title = item.get("title") or upload.filename
            upload.channel, upload.thread_ts = channel, thread_ts
            upload.initial_comment = params.get("initial_comment")
            upload.completed = True
            shared.append(upload.to_api(user=self.bot_user_id, team_id=self.team_id, team_domain=self.team_domain))
        if channel is not None:
            self._bot_message(channel, str(params.get("initial_comment") or ""), thread_ts=thread_ts, files=shared)
        return {"files": shared}

    def _assistant_set_status(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(params, "channel_id")
        thread_ts = params.get("thread_ts")
        if not thread_ts or "status" not in params:
            raise _ApiError("invalid_arguments")
        loading = _json_param(params.get("loading_messages") or [], "invalid_arguments")
        if not isinstance(loading, list) or len(loading) > MAX_LOADING_MESSAGES:
            raise _ApiError("invalid_arguments")
        status = str(params["status"])
        self.status_updates.append(StatusUpdate(channel, str(thread_ts), status, [str(m) for m in loading]))
        self._statuses[(channel, str(thread_ts))] = status
        return {}

    def _conversations_replies(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(params)
        messages = self.thread(channel, str(params.get("ts") or ""))
        if not messages:
            raise _ApiError("thread_not_found")
        limit = int(params.get("limit") or 1000)
        page = [m.to_api() for m in messages[:limit]]
        return {"messages": page, "has_more": len(messages) > limit, "response_metadata": {"next_cursor": ""}}

    # --- the non-API endpoints ----------------------------------------------------------------------

    async def _handle_upload(self, request: web.Request) -> web.StreamResponse:
        """Slack's files.slack.com/upload/v1/... answers `OK - <size>` in text/plain."""
        content = await request.read()
        call = ApiCall(method=UPLOAD, params={"key": request.match_info["key"]}, http_method="POST", at=self.clock())
        self.calls.append(call)
        await self._wait_if_hanging(UPLOAD)
        if self._faults.get(UPLOAD):
            return self._fault_response(call, self._faults[UPLOAD].popleft())
        file_id = self._uploads.get(request.match_info["key"])
        if file_id is None:
            call.status, call.error = 404, "upload_url_not_found"
            return web.Response(status=404, text="upload_url_not_found", content_type="text/plain")
        self.files[file_id].content = content
        call.params["file_id"] = file_id
        return web.Response(text=f"OK - {len(content)}", content_type="text/plain")

    async def _handle_response_url(self, request: web.Request) -> web.StreamResponse:
        call = ApiCall(method=RESPONSE_URL, params={}, http_method="POST", at=self.clock())
        self.calls.append(call)
        try:
            body = json.loads(await request.read() or b"{}")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            call.status, call.error = 400, "invalid_payload"
            return web.Response(status=400, text="invalid_payload")
        call.params = body
        await self._wait_if_hanging(RESPONSE_URL)
        if self._faults.get(RESPONSE_URL):
            return self._fault_response(call, self._faults[RESPONSE_URL].popleft())
        target = self._response_urls.get(request.match_info["key"])
        if target is None or target["uses"] >= RESPONSE_URL_USES:
            call.status, call.error = 404, "used_url"
            return web.Response(status=404, text="used_url")
        target["uses"] += 1
        channel, message_ts = target["channel"], target["message_ts"]
        try:
            self._respond(channel, message_ts, target["user"], body)
        except _ApiError as exc:
            call.status, call.error = 400, exc.error
            return web.Response(status=400, text=exc.error)
        self.responses.append(ResponseUrlPost(channel, message_ts, body))
        return web.Response(text="ok")

    def _respond(self, channel: str, message_ts: str, user: str | None, body: dict[str, Any]) -> None:
        blocks = self._checked_blocks(body)
        text, _ = self._truncated(str(body.get("text") or ""))
        if _truthy(body.get("delete_original")):
            self._find(channel, message_ts)
            del self._channels[channel][message_ts]
        elif _truthy(body.get("replace_original")):
            message = self._find(channel, message_ts)
            message.edits.append(
                {
                    "text": message.text,
                    "blocks": message.blocks,
                    "metadata": message.metadata,
                    "replaced_at": self.clock(),
                }
            )
            message.text, message.blocks = text, blocks or []
            message.edited = {"user": self.bot_user_id, "ts": self.next_ts()}
        elif body.get("response_type") == "in_channel":
            self._bot_message(channel, text, thread_ts=body.get("thread_ts") or None, blocks=blocks or [])
        else:
            ephemeral = Ephemeral(channel, user or "", text, blocks or [], body.get("thread_ts"), self.next_ts())
            self.ephemerals.append(ephemeral)


# --- Signed requests for an HTTP-mode Bolt app ------------------------------------------------------

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
) -> dict[str, Any]:
    """A `block_actions` payload for a button click on a message, shaped like Slack's.

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
        "type": "button",
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
