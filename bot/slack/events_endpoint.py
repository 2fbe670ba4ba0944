"""`POST /slack/events` in HTTP mode: the signature checked on the raw bytes first, then the body read, then Bolt.

Bolt's own adapter parses a body before it checks the signature, so a malformed body, signed or not, raised out of
aiohttp as a 500 with a traceback; here an unsigned request gets 401 and an unreadable one 400, each one log line.
"""

from __future__ import annotations

from collections.abc import Mapping

import structlog
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier

log = structlog.get_logger("opsagent.slack")

PATH = "/slack/events"


class SlackEventsEndpoint:
    """Slack's events and interactivity requests, verified before anything reads them, then handed to Bolt."""

    def __init__(self, app: AsyncApp, signing_secret: str | None) -> None:
        self._app = app
        self._verifier = SignatureVerifier(signing_secret) if signing_secret else None
        """None only without a signing secret, which `opsagent serve --http` refuses to start with."""

    async def handle(self, request: web.Request) -> web.Response:
        """Answer one request: 401 unsigned, 400 unreadable, else whatever Bolt answers."""
        body = await request.read()
        if self._verifier is not None and not self._signed(body, request.headers):
            log.warning("slack_request_unsigned", remote=request.remote, bytes=len(body))
            return _refusal(401, "the request is not signed with this app's signing secret, or the signature is old")
        try:
            bolt_request = AsyncBoltRequest(
                body=body.decode("utf-8"), query=request.query_string, headers=request.headers
            )
        except Exception as exc:  # not UTF-8, not JSON, not a form Bolt can read: the sender's to fix
            return _unreadable(request, exc)
        if not isinstance(bolt_request.body, dict):
            return _unreadable(request, TypeError(f"the body is a JSON {type(bolt_request.body).__name__}"))
        try:
            return await to_aiohttp_response(await self._app.async_dispatch(bolt_request))
        except Exception:  # a bug of ours (or Bolt's) on a signed request: logged redacted, answered in one line
            log.exception("slack_request_failed")
            return _refusal(500, "OpsAgent failed to handle this request; its logs have details")

    def _signed(self, body: bytes, headers: Mapping[str, str]) -> bool:
        verifier = self._verifier
        assert verifier is not None
        try:
            return verifier.is_valid_request(body, dict(headers))
        except ValueError:  # a timestamp that is not a number
            return False


def _unreadable(request: web.Request, exc: Exception) -> web.Response:
    log.warning("slack_request_unreadable", remote=request.remote, error=f"{type(exc).__name__}: {exc}"[:300])
    return _refusal(400, "the body is not a Slack event or interaction payload (JSON, or a form with a payload)")


def _refusal(status: int, message: str) -> web.Response:
    return web.json_response({"ok": False, "error": message}, status=status)
