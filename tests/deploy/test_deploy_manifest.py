"""The Slack app manifests ask for exactly what the bot uses, in both transports."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
NEEDED_SCOPES = {
    "app_mentions:read",
    "chat:write",
    "reactions:write",
    "users:read",
    "usergroups:read",
    "files:write",
    "channels:history",
    "groups:history",
}


@pytest.mark.parametrize("name", ["slack-app-manifest.yaml", "slack-app-manifest-http.yaml"])
def test_manifest_grants_what_the_bot_calls(name):
    manifest = yaml.safe_load((DEPLOY / name).read_text())
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == NEEDED_SCOPES
    assert manifest["settings"]["event_subscriptions"]["bot_events"] == ["app_mention"]
    assert manifest["settings"]["interactivity"]["is_enabled"] is True


def test_socket_mode_and_http_mode_differ_only_in_transport():
    socket = yaml.safe_load((DEPLOY / "slack-app-manifest.yaml").read_text())
    http = yaml.safe_load((DEPLOY / "slack-app-manifest-http.yaml").read_text())
    assert socket["settings"]["socket_mode_enabled"] is True
    assert http["settings"]["socket_mode_enabled"] is False
    assert http["settings"]["event_subscriptions"]["request_url"].endswith("/slack/events")
    assert http["settings"]["interactivity"]["request_url"] == http["settings"]["event_subscriptions"]["request_url"]
