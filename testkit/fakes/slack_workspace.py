"""The fake Slack's workspace: the identities the fake and the request builders agree on, the objects Slack keeps
(messages, ephemerals, files, statuses, responses), and the state of one workspace, seeded and read by tests."""

from __future__ import annotations

import mimetypes
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

TEAM_ID = "T0OPSTEST"
TEAM_NAME = "OpsAgent Test"
TEAM_DOMAIN = "opsagent-test"
BOT_TOKEN = "xoxb-opsagent-test-token"
BOT_USER_ID = "U0OPSBOT"
BOT_ID = "B0OPSBOT"
BOT_NAME = "opsagent"
APP_ID = "A0OPSAGENT"
SIGNING_SECRET = "opsagent-test-signing-secret"


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
    """A reply sent to the channel too ("Also send to channel"): the thread has it, and so does the channel's top."""
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
        if self.reply_broadcast:
            body["subtype"] = "thread_broadcast"
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
class OpenedView:
    """A modal opened with `views.open`: the trigger it was opened with, the view as sent, the id Slack gave it and
    the person whose interaction issued the trigger (the one who sees the modal, and the only one who can submit it)."""

    trigger_id: str
    view: dict[str, Any]
    id: str = ""
    user: str = ""


@dataclass
class ResponseUrlPost:
    """A POST to a `response_url` made by `SlackFake.response_url`."""

    channel: str
    message_ts: str
    body: dict[str, Any]


class SlackWorkspace:
    """One workspace's users, channels and what was said in them; `SlackFake` serves it as the Web API.

    Seed it with `add_user` and `add_message`; read `messages(channel)`, `channel_view(channel)`,
    `thread(channel, thread_ts)`, `threads`, `status(channel, thread_ts)`, `posted`, `ephemerals`, `reactions`, `files`, `status_updates`, `views`
    and `responses`. `clock` is what the fake's timestamps and rate limits count by.
    """

    def __init__(
        self,
        *,
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

        self.posted: list[Message] = []
        """Every message the bot posted (chat.postMessage, file shares, in_channel responses), in order."""
        self.ephemerals: list[Ephemeral] = []
        self.reactions: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.files: dict[str, UploadedFile] = {}
        self.status_updates: list[StatusUpdate] = []
        self.responses: list[ResponseUrlPost] = []
        self.views: list[OpenedView] = []
        self._channels: dict[str, dict[str, Message]] = defaultdict(dict)
        self._statuses: dict[tuple[str, str], str] = {}
        self._ts_micros = 1_700_000_000_000_000

    # --- seeding ------------------------------------------------------------------------------------

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

    # --- reading ------------------------------------------------------------------------------------

    # --- reading state ------------------------------------------------------------------------------

    def messages(self, channel: str) -> list[Message]:
        """Every message in a channel, top-level and replies, in ts order."""
        return sorted(self._channels.get(channel, {}).values(), key=lambda m: m.ts)

    def channel_view(self, channel: str) -> list[Message]:
        """What the channel itself shows, oldest first (`conversations.history`): its top-level messages and the
        replies sent to the channel too; the other replies only in their threads."""
        return [m for m in self.messages(channel) if not m.is_reply or m.reply_broadcast]

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

    # --- storing what the bot posts -----------------------------------------------------------------

    def _store(self, message: Message) -> None:
        self._channels[message.channel][message.ts] = message
        if message.is_reply:
            parent = self._channels[message.channel].get(message.thread_ts or "")
            if parent is not None:
                parent.thread_ts = parent.ts
                parent.reply_count += 1

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
