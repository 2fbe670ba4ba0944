"""`SlackFake`: the fake Web API's server, its routes, and the routing of each `/api/{method}` request through the
token and the injected faults to its method; and what tests read of the calls it received."""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from aiohttp import web
from slack_sdk.web.async_client import AsyncWebClient

from testkit.fakes.slack_api.base import ApiCall, ApiError
from testkit.fakes.slack_api.files import FileMethods
from testkit.fakes.slack_api.interactions import InteractionMethods
from testkit.fakes.slack_api.workspace_methods import WorkspaceMethods
from testkit.fakes.slack_faults import Fault
from testkit.fakes.slack_workspace import BOT_TOKEN


class SlackFake(WorkspaceMethods, FileMethods, InteractionMethods):
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
        super().__init__(token=token, **workspace)
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

    async def _handle_api(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        call = ApiCall(method=method, params={}, http_method=request.method, at=self.clock())
        self.calls.append(call)
        try:
            params = await self._read_params(request)
        except ApiError as exc:
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
                raise ApiError("unknown_method", req_method=method)
            if not token:
                raise ApiError("not_authed")
            if token != self.token:
                raise ApiError("invalid_auth")
            if (fault := self._standing_fault(method)) is not None:
                if fault.status != 200:
                    return self._fault_response(call, fault)
                raise ApiError(fault.error or "fatal_error")
            wait = self._rate_limited(method, params, self.clock())
            if wait is not None:
                return self._fault_response(call, Fault(429, "ratelimited", wait))
            body = handler(params)
        except ApiError as exc:
            call.error = exc.error
            return web.json_response({"ok": False, "error": exc.error} | exc.extra)
        return web.json_response({"ok": True} | body)
