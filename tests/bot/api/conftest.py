"""The API's in-process tests: the Slack app in HTTP mode on the fake Slack, with `[api]` on, as `serve` wires it,
and two API clients with tokens of their own."""

from __future__ import annotations

import pytest

from bot.api.serve import serve_api
from bot.api.settings import ApiSettings
from bot.api.tokens import ApiTokens
from testkit.api_client import ApiCaller
from worlds.api_world import CI_TOKEN, CLAUDE_TOKEN, TOKENS


@pytest.fixture
def api_settings() -> ApiSettings:
    """`[api]` on; a test overrides it for an approval channel or a default channel."""
    return ApiSettings(enabled=True)


@pytest.fixture
def app_options(api_settings):
    """The API served beside Slack's door, its tasks started with the services."""

    def prepare(services):
        serve_api(api_settings, services, ApiTokens.parse(TOKENS, "OPSAGENT_API_TOKENS"))

    return {"prepare": prepare, "start": True, "quiet_approvals": api_settings.approval_channel}


@pytest.fixture
async def claude(harness):
    """The API client `claude`, calling the harness's server."""
    async with ApiCaller(harness.url, CLAUDE_TOKEN) as client:
        yield client


@pytest.fixture
async def ci(harness):
    """Another API client, `ci`."""
    async with ApiCaller(harness.url, CI_TOKEN) as client:
        yield client
