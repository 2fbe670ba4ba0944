"""What every part of the fake Web API shares: the call log's entries, Slack's error answer, reading a request's
parameters, and Slack's checks of a channel, a message, blocks, metadata and text."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web

from testkit.fakes.block_kit import check_blocks
from testkit.fakes.slack_faults import Fault, InjectedFaults
from testkit.fakes.slack_workspace import Message, SlackWorkspace
from testkit.servers.local_server import LocalServer

MAX_TEXT = 40_000
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


class ApiError(Exception):
    """Slack's `{"ok": false, "error": …}` answer, with the `extra` fields some errors carry."""

    def __init__(self, error: str, **extra: Any) -> None:
        super().__init__(error)
        self.error = error
        self.extra = extra


def truthy(value: Any) -> bool:
    return value in (True, 1, "1", "true", "True")


def json_param(value: Any, error: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise ApiError(error) from exc
    return value


class ApiBase(SlackWorkspace, InjectedFaults, LocalServer):
    """The state every group of methods reads: the workspace, the faults, the server, the accepted `token`, the
    call log (`calls`) and the one counter the fake's ids are drawn from."""

    def __init__(self, *, token: str, **workspace: Any) -> None:
        LocalServer.__init__(self)
        SlackWorkspace.__init__(self, **workspace)
        InjectedFaults.__init__(self)
        self.token = token
        self.calls: list[ApiCall] = []
        self._ids = itertools.count(1)

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
                raise ApiError("invalid_json") from exc
            if not isinstance(body, dict):
                raise ApiError("invalid_json")
            params.update(body)
        elif request.content_type in ("application/x-www-form-urlencoded", "text/plain"):
            params.update(parse_qsl(raw.decode("utf-8"), keep_blank_values=True))
        else:
            raise ApiError("invalid_post_type")
        return params

    def _fault_response(self, call: ApiCall, fault: Fault) -> web.Response:
        defaults = {429: "ratelimited", 500: "fatal_error", 503: "service_unavailable"}
        error = fault.error or defaults.get(fault.status, "fatal_error")
        headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
        call.status, call.error = fault.status, error
        return web.json_response({"ok": False, "error": error}, status=fault.status, headers=headers)

    def _channel(self, params: Mapping[str, Any], name: str = "channel") -> str:
        channel = params.get(name)
        if not channel or (self.channels is not None and channel not in self.channels):
            raise ApiError("channel_not_found")
        return str(channel)

    def _checked_blocks(self, params: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        if "blocks" not in params or params["blocks"] is None:
            return None
        blocks = json_param(params["blocks"], "invalid_blocks_format")
        verdict = check_blocks(blocks)
        if verdict is not None:
            error, messages = verdict
            extra: dict[str, Any] = {}
            if messages:
                extra = {"errors": messages, "response_metadata": {"messages": [f"[ERROR] {m}" for m in messages]}}
            raise ApiError(error, **extra)
        for block in blocks:
            block.setdefault("block_id", f"fake{next(self._ids)}")
            for element in block.get("elements", []) if block.get("type") == "actions" else []:
                if isinstance(element, dict):
                    element.setdefault("action_id", f"fake{next(self._ids)}")
        return blocks

    def _metadata(self, params: Mapping[str, Any]) -> dict[str, Any] | None:
        if params.get("metadata") in (None, ""):
            return None
        metadata = json_param(params["metadata"], "invalid_metadata_format")
        if not isinstance(metadata, dict) or "event_type" not in metadata or "event_payload" not in metadata:
            raise ApiError("invalid_metadata_format")
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
            raise ApiError("message_not_found")
        return message
