"""Fixtures of the bot's tests: a run store of the test's own, the scripts of its runs, the [slack] and [access]
settings, and `harness`, the Slack app in HTTP mode on the fake Slack, as `opsagent serve --http` wires it.

A module changes what `harness` runs by overriding the fixtures it is built from: `incident_bot` (the agent
factory), `slack_users` (the workspace's people), `slack_settings`, `access_settings`, `clock` (what the access
limits count time by) and `app_options` (further `create_app` options, such as observers or a `prepare` hook).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.access.settings import AccessSettings
from bot.slack.settings import SlackSettings
from bot.store.factory import opened_store
from testkit.fakes.slack_api import SlackFake
from testkit.slack_bot import ALICE, USERS, IncidentBot, running_app


@pytest.fixture
def run_store_file(tmp_path) -> str:
    """The SQLite file of the test's own run store."""
    return f"{tmp_path}/runs.db"


@pytest.fixture
async def run_store(run_store_file: str):
    """The bot's run store on a SQLite file of the test's own, migrated."""
    async with opened_store(f"sqlite:///{run_store_file}") as store:
        yield store


@pytest.fixture
def script():
    """The scripts of the Slack tests' runs, one list of model turns per run, in order."""
    return []


@pytest.fixture
def slack_users() -> dict[str, dict[str, Any]]:
    """The people of the fake workspace (`users.info`): the gate looks up everyone who asks."""
    return USERS


@pytest.fixture
def slack_settings(request):
    """The bot's [slack] settings; a test may pass overrides with indirect parametrisation."""
    return SlackSettings(approvers=[ALICE], post_interval_s=0, step_batch_s=0, **getattr(request, "param", {}))


@pytest.fixture
def access_settings():
    """The bot's [access] settings: room for every test's runs (tests/bot/access/test_access.py tests the limits)."""
    return AccessSettings(max_concurrent_runs=25, runs_per_user_per_hour=None, runs_per_channel_per_hour=None)


@pytest.fixture
def clock() -> Callable[[], datetime]:
    """The wall clock the access limits count by."""
    return lambda: datetime.now(UTC)


@pytest.fixture
def incident_bot(script):
    """The agent factory of the app's runs."""
    return IncidentBot(script)


@pytest.fixture
def app_options() -> dict[str, Any]:
    """Further options of the app (`running_app`'s `prepare`, `create_app`'s `observers`, …): none."""
    return {}


@pytest.fixture
async def harness(incident_bot, slack_users, slack_settings, access_settings, clock, run_store, app_options):
    """The Slack app in HTTP mode on a free port, the fake Slack it talks to, and signed traffic to send it."""
    async with (
        SlackFake(users=slack_users) as slack,
        running_app(
            slack,
            incident_bot,
            run_store,
            settings=slack_settings,
            access=access_settings,
            clock=clock,
            **app_options,
        ) as harness,
    ):
        yield harness
