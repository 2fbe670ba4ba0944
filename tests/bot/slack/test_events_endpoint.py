"""`POST /slack/events` reads nothing before the signature: an unsigned body gets 401 however malformed, a signed
but unreadable one 400, and neither leaves a traceback in the logs. Over real HTTP, against the bot as served."""

from __future__ import annotations

import logging
from urllib.parse import urlencode

import pytest

from testkit.fakes.slack_requests import app_mention_event, sign, signed_event
from testkit.fakes.slack_workspace import SIGNING_SECRET
from testkit.slack_bot import BOB, CHANNEL, FINISH

UNREADABLE = {
    "broken-json": b"{not json",
    "cut-json": b'{"type": "event_callback", "event": ',
    "json-list": b"[1, 2, 3]",
    "json-string": b'"a string"',
    "form-payload-not-json": urlencode({"payload": "{not json"}).encode(),
}
"""Bodies Slack's signature scheme can sign (it signs text) that are no Slack payload."""
MALFORMED = {**UNREADABLE, "not-utf8": b"\xff\xfe{}"}


async def post(harness, body: bytes, headers: dict[str, str]) -> int:
    return await harness.post(body, {"Content-Type": "application/json", **headers})


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.exc_info or record.levelno >= logging.ERROR]


@pytest.mark.parametrize("body", MALFORMED.values(), ids=MALFORMED.keys())
async def test_an_unsigned_body_is_refused_before_it_is_read(harness, caplog, body: bytes) -> None:
    assert await post(harness, body, {}) == 401
    assert await post(harness, body, {"X-Slack-Request-Timestamp": "soon", "X-Slack-Signature": "v0=00"}) == 401
    assert tracebacks(caplog) == []


@pytest.mark.parametrize("body", UNREADABLE.values(), ids=UNREADABLE.keys())
async def test_a_signed_but_unreadable_body_is_a_bad_request(harness, caplog, body: bytes) -> None:
    assert await post(harness, body, sign(SIGNING_SECRET, body)) == 400
    assert tracebacks(caplog) == []


async def test_a_signed_event_still_reaches_the_bot(harness, script) -> None:
    script.append([FINISH])
    ts = harness.slack.add_message(CHANNEL, "why 5xx?", user=BOB).ts
    body, headers = signed_event(SIGNING_SECRET, app_mention_event(CHANNEL, BOB, "why 5xx?", ts))
    assert await harness.post(body, headers) == 200
    await harness.until(lambda: harness.reacted(ts, "white_check_mark"), "the run ends")
