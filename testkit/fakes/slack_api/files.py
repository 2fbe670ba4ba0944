"""Files as Slack's external upload takes them: an upload URL, the raw bytes posted to it, then the completion
that shares them in a channel or a thread."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from testkit.fakes.slack_api.base import ApiBase, ApiCall, ApiError, json_param
from testkit.fakes.slack_workspace import UploadedFile

UPLOAD = "upload"
"""The call-log name (and fault key) of the raw byte POST to an `upload_url`."""


class FileMethods(ApiBase):
    """`files.getUploadURLExternal`, the `upload_url` it hands out, and `files.completeUploadExternal`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._uploads: dict[str, str] = {}

    def _files_get_upload_url(self, params: dict[str, Any]) -> dict[str, Any]:
        filename = params.get("filename")
        try:
            length = int(params.get("length", ""))
        except ValueError as exc:
            raise ApiError("invalid_arguments") from exc
        if not filename or length < 0:
            raise ApiError("invalid_arguments")
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
        items = json_param(params.get("files"), "invalid_arguments")
        if not isinstance(items, list) or not items:
            raise ApiError("invalid_arguments")
        channel = params.get("channel_id") or None
        if channel is None and params.get("channels"):
            channel = str(params["channels"]).split(",")[0]
        if channel is not None:
            channel = self._channel({"channel": channel})
        thread_ts = params.get("thread_ts") or None
        if thread_ts is not None and channel is None:
            raise ApiError("invalid_arguments")
        completed: list[UploadedFile] = []
        for item in items:
            upload = self.files.get(str(item.get("id"))) if isinstance(item, Mapping) else None
            if upload is None or upload.content is None or upload.completed:
                raise ApiError("file_not_found")
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
