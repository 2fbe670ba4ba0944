"""What follows a person's click: the `response_url` the app answers on, and the `trigger_id` that opens a modal
(`views.open`), with the submission Slack sends back from it."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from testkit.fakes.block_kit import check_blocks
from testkit.fakes.slack_api.base import ApiBase, ApiCall, ApiError, json_param, truthy
from testkit.fakes.slack_requests import view_submission_payload
from testkit.fakes.slack_workspace import Ephemeral, OpenedView, ResponseUrlPost

RESPONSE_URL = "response_url"
"""The call-log name (and fault key) of a POST to a `response_url` made by `SlackFake.response_url`."""
RESPONSE_URL_USES = 5
TRIGGER_TTL_S = 3.0
"""How long an interaction's `trigger_id` may open a modal (https://docs.slack.dev/interactivity/handling-user-interaction)."""
MAX_VIEW_LABEL = 24
"""A modal's title, submit and close labels (https://docs.slack.dev/reference/views/modal-views)."""
MAX_PRIVATE_METADATA = 3000


class InteractionMethods(ApiBase):
    """Response URLs (`response_url`, and the posts to it) and modals (`trigger_for`, `views.open`, `submission`)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._response_urls: dict[str, dict[str, Any]] = {}
        self._triggers: dict[str, tuple[str, float]] = {}
        """Trigger ids the fake issued with an interaction: whose, and until when they may open a modal."""

    def response_url(self, channel: str, message_ts: str, *, user: str | None = None) -> str:
        """A `response_url` on this fake for a click on `(channel, message_ts)` by `user`.

        Bolt's `respond()` posts there: `replace_original` edits the message, `delete_original` removes it,
        `response_type="in_channel"` posts a new one, anything else is an ephemeral to `user`. Like Slack,
        a URL takes at most 5 posts; later ones get HTTP 404 `used_url`.
        """
        key = secrets.token_hex(8)
        self._response_urls[key] = {"channel": channel, "message_ts": message_ts, "user": user, "uses": 0}
        return f"{self.url}/actions/{key}"

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
        except ApiError as exc:
            call.status, call.error = 400, exc.error
            return web.Response(status=400, text=exc.error)
        self.responses.append(ResponseUrlPost(channel, message_ts, body))
        return web.Response(text="ok")

    def _respond(self, channel: str, message_ts: str, user: str | None, body: dict[str, Any]) -> None:
        blocks = self._checked_blocks(body)
        text, _ = self._truncated(str(body.get("text") or ""))
        if truthy(body.get("delete_original")):
            self._find(channel, message_ts)
            del self._channels[channel][message_ts]
        elif truthy(body.get("replace_original")):
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
            raise ApiError("invalid_arguments")
        view = json_param(params.get("view"), "invalid_arguments")
        if not isinstance(view, dict) or view.get("type") != "modal":
            raise ApiError("invalid_arguments")
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
            raise ApiError(
                "invalid_arguments", response_metadata={"messages": errors + (verdict[1] if verdict else [])}
            )
        issued = self._triggers.pop(str(params["trigger_id"]), None)
        if issued is None:
            raise ApiError("invalid_trigger_id")
        if self.clock() > issued[1]:
            raise ApiError("expired_trigger_id")
        view_id = f"V{next(self._ids):010d}"
        self.views.append(OpenedView(str(params["trigger_id"]), view, view_id, issued[0]))
        return {"view": {"id": view_id, "team_id": self.team_id, **view, "state": {"values": {}}}}
