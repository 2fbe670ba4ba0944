"""A fake Slack Web API on 127.0.0.1 that the real AsyncWebClient talks to, with Slack's limits and injected faults.

The workspace it serves is `slack_workspace.SlackWorkspace`, the faults `slack_faults.InjectedFaults`, the
verdict on Block Kit `block_kit.check_blocks`; what Slack sends to the app is built by `slack_requests`.
"""

from __future__ import annotations

import itertools
import json
import secrets
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import parse_qsl

from aiohttp import web
from slack_sdk.web.async_client import AsyncWebClient

from testkit.fakes.block_kit import check_blocks
from testkit.fakes.slack_faults import Fault, InjectedFaults
from testkit.fakes.slack_requests import view_submission_payload
from testkit.fakes.slack_workspace import (
    BOT_TOKEN,
    Ephemeral,
    Message,
    OpenedView,
    ResponseUrlPost,
    SlackWorkspace,
    StatusUpdate,
    UploadedFile,
)
from testkit.servers.local_server import LocalServer

UPLOAD = "upload"
"""The call-log name (and fault key) of the raw byte POST to an `upload_url`."""
RESPONSE_URL = "response_url"
"""The call-log name (and fault key) of a POST to a `response_url` made by `SlackFake.response_url`."""
MAX_TEXT = 40_000
MAX_LOADING_MESSAGES = 10
RESPONSE_URL_USES = 5
TRIGGER_TTL_S = 3.0
"""How long an interaction's `trigger_id` may open a modal (https://docs.slack.dev/interactivity/handling-user-interaction)."""
MAX_VIEW_LABEL = 24
"""A modal's title, submit and close labels (https://docs.slack.dev/reference/views/modal-views)."""
MAX_PRIVATE_METADATA = 3000
TRUNCATION_WARNING = (
    "[WARN] Your message was truncated but still posted. The `text` field accepts up to 40,000 characters."
)


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


class _ApiError(Exception):
    def __init__(self, error: str, **extra: Any) -> None:
        super().__init__(error)
        self.error = error
        self.extra = extra


def _truthy(value: Any) -> bool:
    return value in (True, 1, "1", "true", "True")


def _json_param(value: Any, error: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise _ApiError(error) from exc
    return value


class SlackFake(SlackWorkspace, InjectedFaults, LocalServer):
    """Slack's Web API on a free 127.0.0.1 port: point `AsyncWebClient(base_url=fake.api_url)` at it.

    State: the workspace's (`messages(channel)`, `channel_view(channel)`, `thread(channel, thread_ts)`, `posted`, `ephemerals`,
    `reactions`, `files`, `status_updates`, `responses`) and `calls` (every request, faults included).
    Faults: `fail_next`, `fail_always`, `rate_limit`, `hang`, `clear_faults`. A request for a method the
    fake lacks gets `unknown_method`, as on Slack. Delays end at once when the server closes.
    """

    made: ClassVar[weakref.WeakSet[SlackFake]] = weakref.WeakSet()
    """Every fake alive, so a suite-wide check can read what each was sent (tests/conftest.py: no hint for the
    model reaches Slack)."""

    def __init__(self, *, token: str = BOT_TOKEN, **workspace: Any) -> None:
        """`token` is the bot token the fake accepts; `workspace` are `SlackWorkspace`'s identities and seeds."""
        SlackFake.made.add(self)
        LocalServer.__init__(self)
        SlackWorkspace.__init__(self, **workspace)
        InjectedFaults.__init__(self)
        self.token = token
        self.calls: list[ApiCall] = []
        self._uploads: dict[str, str] = {}
        self._response_urls: dict[str, dict[str, Any]] = {}
        self._ids = itertools.count(1)
        self._triggers: dict[str, tuple[str, float]] = {}
        """Trigger ids the fake issued with an interaction: whose, and until when they may open a modal."""
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
            "conversations.history": self._conversations_history,
            "views.open": self._views_open,
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

    # --- what tests call ----------------------------------------------------------------------------

    def response_url(self, channel: str, message_ts: str, *, user: str | None = None) -> str:
        """A `response_url` on this fake for a click on `(channel, message_ts)` by `user`.

        Bolt's `respond()` posts there: `replace_original` edits the message, `delete_original` removes it,
        `response_type="in_channel"` posts a new one, anything else is an ephemeral to `user`. Like Slack,
        a URL takes at most 5 posts; later ones get HTTP 404 `used_url`.
        """
        key = secrets.token_hex(8)
        self._response_urls[key] = {"channel": channel, "message_ts": message_ts, "user": user, "uses": 0}
        return f"{self.url}/actions/{key}"

    def sent(self, since: int = 0) -> Iterator[tuple[str, str]]:
        """What each request (from the `since`-th on) carried, as (method, its parameters as JSON): every text,
        block and modal people see."""
        for call in self.calls[since:]:
            yield call.method, json.dumps(call.params, ensure_ascii=False)

    def calls_to(self, method: str) -> list[ApiCall]:
        return [call for call in self.calls if call.method == method]

    def count(self, method: str | None = None) -> int:
        """How many requests reached the fake (for `method`, or all), faults and errors included."""
        return len(self.calls) if method is None else len(self.calls_to(method))

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

    def _fault_response(self, call: ApiCall, fault: Fault) -> web.Response:
        defaults = {429: "ratelimited", 500: "fatal_error", 503: "service_unavailable"}
        error = fault.error or defaults.get(fault.status, "fatal_error")
        headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
        call.status, call.error = fault.status, error
        return web.json_response({"ok": False, "error": error}, status=fault.status, headers=headers)

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
        await self._wait_if_hanging(method, self._closing)
        if (fault := self._queued_fault(method)) is not None:
            return self._fault_response(call, fault)
        try:
            handler = self._handlers.get(method)
            if handler is None:
                raise _ApiError("unknown_method", req_method=method)
            if not token:
                raise _ApiError("not_authed")
            if token != self.token:
                raise _ApiError("invalid_auth")
            if (fault := self._standing_fault(method)) is not None:
                if fault.status != 200:
                    return self._fault_response(call, fault)
                raise _ApiError(fault.error or "fatal_error")
            wait = self._rate_limited(method, params, self.clock())
            if wait is not None:
                return self._fault_response(call, Fault(429, "ratelimited", wait))
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
            reply_broadcast=thread_ts is not None and _truthy(params.get("reply_broadcast")),  # alone, it means nothing
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

    def _conversations_history(self, params: dict[str, Any]) -> dict[str, Any]:
        """The channel's messages, newest first: its top level and the replies broadcast to it (with their
        `thread_ts` and the subtype `thread_broadcast`)."""
        channel = self._channel(params)
        messages = list(reversed(self.channel_view(channel)))
        limit = int(params.get("limit") or 100)
        page = [m.to_api() for m in messages[:limit]]
        return {"messages": page, "has_more": len(messages) > limit, "response_metadata": {"next_cursor": ""}}

    def trigger_for(self, user: str) -> str:
        """A `trigger_id` as Slack issues one with an interaction of `user`: good for one modal, within
        `TRIGGER_TTL_S`."""
        trigger = f"{int(time.time())}.{next(self._ids)}.{secrets.token_hex(16)}"
        self._triggers[trigger] = (user, self.clock() + TRIGGER_TTL_S)
        return trigger

    def submission(self, view_id: str, values: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
        """The `view_submission` Slack sends when the person who saw modal `view_id` submits it with `values`
        (`{block_id: {action_id: typed text}}`)."""
        opened = next(v for v in self.views if v.id == view_id)
        payload = view_submission_payload(
            opened.user,
            self.team_id,
            str(opened.view.get("callback_id") or ""),
            str(opened.view.get("private_metadata") or ""),
            values,
        )
        payload["view"]["id"] = view_id
        return payload

    def _views_open(self, params: dict[str, Any]) -> dict[str, Any]:
        """A modal for the user whose interaction gave `trigger_id`; its view checked as Slack checks one."""
        if not params.get("trigger_id"):
            raise _ApiError("invalid_arguments")
        view = _json_param(params.get("view"), "invalid_arguments")
        if not isinstance(view, dict) or view.get("type") != "modal":
            raise _ApiError("invalid_arguments")
        errors = []
        for name in ("title", "submit", "close"):
            text = view.get(name, {}).get("text", "") if isinstance(view.get(name), dict) else ""
            if name == "title" and not text:
                errors.append("missing required field: title [json-pointer:/view/title]")
            if len(text) > MAX_VIEW_LABEL:
                errors.append(f"must be less than {MAX_VIEW_LABEL + 1} characters [json-pointer:/view/{name}/text]")
        if len(str(view.get("private_metadata") or "")) > MAX_PRIVATE_METADATA:
            errors.append(
                f"must be less than {MAX_PRIVATE_METADATA + 1} characters [json-pointer:/view/private_metadata]"
            )
        verdict = check_blocks(view.get("blocks", []))
        if errors or verdict is not None:
            raise _ApiError(
                "invalid_arguments", response_metadata={"messages": errors + (verdict[1] if verdict else [])}
            )
        issued = self._triggers.pop(str(params["trigger_id"]), None)
        if issued is None:
            raise _ApiError("invalid_trigger_id")
        if self.clock() > issued[1]:
            raise _ApiError("expired_trigger_id")
        view_id = f"V{next(self._ids):010d}"
        self.views.append(OpenedView(str(params["trigger_id"]), view, view_id, issued[0]))
        return {"view": {"id": view_id, "team_id": self.team_id, **view, "state": {"values": {}}}}

    # --- the non-API endpoints ----------------------------------------------------------------------

    async def _handle_upload(self, request: web.Request) -> web.StreamResponse:
        """Slack's files.slack.com/upload/v1/... answers `OK - <size>` in text/plain."""
        content = await request.read()
        call = ApiCall(method=UPLOAD, params={"key": request.match_info["key"]}, http_method="POST", at=self.clock())
        self.calls.append(call)
        await self._wait_if_hanging(UPLOAD, self._closing)
        if (fault := self._queued_fault(UPLOAD)) is not None:
            return self._fault_response(call, fault)
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
        await self._wait_if_hanging(RESPONSE_URL, self._closing)
        if (fault := self._queued_fault(RESPONSE_URL)) is not None:
            return self._fault_response(call, fault)
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
