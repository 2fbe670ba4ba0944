"""Secrets never reach the logs: lines go through the logging `opsagent` configures and come out masked,
with near-miss text (token counts, trace ids) left exactly as it was."""

from __future__ import annotations

import json
import logging

import pytest
import structlog

from samples.credentials import GHP, NEAR_MISSES, SLACK_HOOK_PATH, XOXB

NEAR_MISS = next(text for text in NEAR_MISSES if "token_count" in text)
SECRETS = (XOXB, GHP, SLACK_HOOK_PATH)


def failing_slack_call() -> None:
    """What a Slack client error looks like when a proxy echoes the request back in its message."""
    raise ConnectionError(
        f"POST https://hooks.slack.com/services/{SLACK_HOOK_PATH} failed: 407 from proxy; "
        f"request headers were {{'Authorization': 'Bearer {XOXB}'}}"
    )


@pytest.mark.parametrize("json_lines", [True, False], ids=["json", "console"])
def test_a_token_in_an_exception_and_in_fields_is_masked_and_near_misses_stay(
    logging_as_configured, capsys, json_lines
):
    logging_as_configured(json=json_lines)
    log = structlog.get_logger("opsagent.slack")
    try:
        failing_slack_call()
    except ConnectionError as exc:
        log.exception("slack_call_failed", method="chat_postMessage", error=exc, usage=NEAR_MISS)
    log.warning("backend_config", clone=f"https://x-access-token:{GHP}@github.com/acme/repo.git", attempts=[3, GHP])
    err = capsys.readouterr().err
    for secret in SECRETS:
        assert secret not in err
    assert err.count("[REDACTED:") >= 5
    assert "failing_slack_call" in err, "the traceback is still there"
    assert "hooks.slack.com/services/" in err
    assert "github.com/acme/repo.git" in err
    if json_lines:
        first, second = (json.loads(line) for line in err.splitlines() if line.startswith("{"))
        assert first["usage"] == NEAR_MISS
        assert first["method"] == "chat_postMessage"
        assert second["attempts"][0] == 3
    else:
        assert NEAR_MISS in err


@pytest.mark.parametrize("name", ["aiohttp.server", "slack_bolt.AsyncApp", "asyncio"])
def test_a_librarys_standard_logging_goes_through_the_same_redacting_lines(logging_as_configured, capsys, name):
    logging_as_configured(json=True)
    try:
        failing_slack_call()
    except ConnectionError:
        logging.getLogger(name).exception("Error handling request from %s", "10.0.0.7")
    logging.getLogger(name).info("below the library level: not written")
    [line] = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert (line["logger"], line["level"], line["event"]) == (name, "error", "Error handling request from 10.0.0.7")
    assert "failing_slack_call" in line["exception"], "the traceback is kept, inside the JSON line"
    for secret in SECRETS:
        assert secret not in json.dumps(line)
