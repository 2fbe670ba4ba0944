"""The Slack Web API client the bot posts with: Slack's own retry handlers for 429s, 5xx and lost connections.

One constructor, so the app, the tests' fakes and the benchmarks all talk to Slack the same way.
"""

from __future__ import annotations

from typing import Any

from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.settings import SlackSecrets


def web_client(secrets: SlackSecrets) -> AsyncWebClient:
    """The Web API client: 429s wait for `Retry-After`, 5xx and connection errors are retried."""
    handlers = [
        AsyncRateLimitErrorRetryHandler(max_retry_count=5),
        AsyncServerErrorRetryHandler(max_retry_count=2),
        AsyncConnectionErrorRetryHandler(max_retry_count=2),
    ]
    options: dict[str, Any] = {"base_url": secrets.api_url} if secrets.api_url else {}
    return AsyncWebClient(token=secrets.bot_token, retry_handlers=handlers, **options)
