"""The trace viewer's web side: signed expiring links and `GET /runs/<run_id>`.

A link is `<public_url>/runs/<run_id>?exp=<unix>&sig=<hmac>`, an HMAC-SHA256 over the run id and the
expiry with `OPSAGENT_VIEWER_SECRET`: whoever holds the link (people in the thread) sees that run only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import time
from collections.abc import Collection, Mapping
from enum import StrEnum
from typing import assert_never
from urllib.parse import quote, urlencode

from aiohttp import web

from bot.audit.trail import AuditLog
from bot.store.ports import RunLookup
from bot.viewer.page import LOCAL_TIMES_HASH, notice_page, run_page
from bot.viewer.settings import ViewerSettings
from bot.viewer.source import StoredTraces, TraceSource

SECRET_ENV = "OPSAGENT_VIEWER_SECRET"
MIN_SECRET_CHARS = 32

SECURITY_HEADERS = {
    "Content-Security-Policy": f"default-src 'none'; style-src 'unsafe-inline'; script-src {LOCAL_TIMES_HASH}; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "private, no-store",
}
"""Sent with every viewer response: nothing but inline styles and our one script (by its hash: never a script in
the trace's text) may load, and nothing is cached or leaked."""

_EXPIRY = re.compile(r"[0-9]{1,12}")
_SIGNATURE = re.compile(r"[0-9a-f]{64}")


class LinkCheck(StrEnum):
    """What a link's `exp` and `sig` say about the request."""

    VALID = "valid"
    EXPIRED = "expired"
    BAD_SIGNATURE = "bad_signature"
    INCOMPLETE = "incomplete"


class LinkSigner:
    """Signs and checks trace links: HMAC-SHA256 over the run id and the expiry, compared in constant time."""

    def __init__(self, secret: str) -> None:
        if len(secret) < MIN_SECRET_CHARS:
            raise ValueError(
                f"the trace viewer's secret must be at least {MIN_SECRET_CHARS} characters; "
                "make one with: python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"
            )
        self._key = secret.encode()

    def signature(self, run_id: str, expires: int) -> str:
        """The hex signature of a link to `run_id` that works until `expires` (unix seconds)."""
        message = json.dumps(["opsagent-trace-link/v1", run_id, expires]).encode()
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()

    def check(self, run_id: str, exp: str | None, sig: str | None, *, now: float) -> LinkCheck:
        """Judge a link's parameters: the signature first, so an expiry is only believed once it is signed."""
        if not exp or not sig:
            return LinkCheck.INCOMPLETE
        if not _EXPIRY.fullmatch(exp) or not _SIGNATURE.fullmatch(sig):
            return LinkCheck.BAD_SIGNATURE
        if not hmac.compare_digest(self.signature(run_id, int(exp)).encode(), sig.encode()):
            return LinkCheck.BAD_SIGNATURE
        return LinkCheck.EXPIRED if int(exp) < now else LinkCheck.VALID


class TraceViewer:
    """Serves one page per run behind signed links, and builds those links for the Slack thread."""

    def __init__(
        self,
        settings: ViewerSettings,
        signer: LinkSigner,
        source: TraceSource,
        priced: Collection[str] = (),
    ) -> None:
        self.settings = settings
        self.signer = signer
        self.source = source
        self.priced = frozenset(priced)
        """The models with a price (`[llm.prices]`): another model's cost reads "no price", not $0."""

    @classmethod
    def from_settings(
        cls,
        settings: ViewerSettings,
        runs: RunLookup,
        audit: AuditLog,
        *,
        priced: Collection[str] = (),
        environ: Mapping[str, str] = os.environ,
    ) -> TraceViewer:
        """The viewer over the runs in the store (their people named from the audit log; `priced`: the models with
        a price); refuses to start without the signing secret."""
        secret = environ.get(SECRET_ENV, "")
        if not secret:
            raise ValueError(
                f"the [viewer] section enables the trace viewer, which signs its links with {SECRET_ENV}: "
                "set it to a random string of 32+ characters (the same on every replica), or remove [viewer]"
            )
        return cls(settings, LinkSigner(secret), StoredTraces(runs, audit), priced)

    def link(self, run_id: str, *, expires: int | None = None) -> str:
        """The signed URL of a run's page, valid for `link_ttl_s` from now unless `expires` says otherwise."""
        exp = int(time.time()) + self.settings.link_ttl_s if expires is None else expires
        query = urlencode({"exp": exp, "sig": self.signer.signature(run_id, exp)})
        return f"{self.settings.public_url}/runs/{quote(run_id, safe='')}?{query}"

    def routes(self) -> list[web.RouteDef]:
        """`GET /runs/{run_id}`, for `SlackServices.routes`."""
        return [web.get("/runs/{run_id}", self._page)]

    async def _page(self, request: web.Request) -> web.Response:
        run_id = request.match_info["run_id"]
        check = self.signer.check(run_id, request.query.get("exp"), request.query.get("sig"), now=time.time())
        match check:
            case LinkCheck.VALID:
                shown = await self.source(run_id)
                if shown is None:
                    return _html(404, notice_page("Run not found", _unknown(run_id)))
                priced = shown.trace.model in self.priced
                page = run_page(shown.trace, names=shown.names, stopped_by=shown.stopped_by, priced=priced)
                return _html(200, page)
            case LinkCheck.EXPIRED:
                return _html(
                    410, notice_page("This trace link has expired", _expired(run_id, self.settings.link_ttl_s))
                )
            case LinkCheck.BAD_SIGNATURE:
                return _html(403, notice_page("This trace link is not valid", _REFUSED))
            case LinkCheck.INCOMPLETE:
                return _html(403, notice_page("This trace link is incomplete", _INCOMPLETE))
            case _:
                assert_never(check)


_REFUSED = (
    "The link's signature does not match: it was changed, cut short, or signed with another secret.\n\n"
    "Use the “View trace” link exactly as the bot posted it in the Slack thread."
)
_INCOMPLETE = (
    "Trace links carry an expiry (exp) and a signature (sig); this one lacks them.\n\n"
    "Copy the whole “View trace” link from the bot's final message in the Slack thread."
)


def _expired(run_id: str, ttl_s: int) -> str:
    return (
        f"Links to a run's trace work for {_span(ttl_s)} after the run ends; this one has expired.\n\n"
        f"The whole trace is in the file opsagent-trace-{run_id}.json that the bot attached to the Slack thread."
        "\n\nAsk the bot in a new thread for a fresh investigation, or whoever runs OpsAgent for a new link."
    )


def _unknown(run_id: str) -> str:
    return (
        f"The bot does not know run {run_id}, or it has no step yet.\n\n"
        f"The whole trace is in the file opsagent-trace-{run_id}.json that the bot attached to the Slack thread."
    )


def _html(status: int, page: str) -> web.Response:
    """A page with the viewer's security headers."""
    return web.Response(status=status, text=page, content_type="text/html", charset="utf-8", headers=SECURITY_HEADERS)


def _span(seconds: int) -> str:
    """A link lifetime in words: "7 days", "12 hours", "30 minutes", "45 seconds" (rounded down)."""
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"
