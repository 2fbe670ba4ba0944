"""`[access] max_concurrent_runs` under a burst: many mentions at the same moment, on one replica or spread over
two on one run store, start exactly the cap; the others are refused privately and their starts are not counted."""

from __future__ import annotations

import asyncio

import pytest

from bot.access.settings import AccessSettings
from kernel import text_turn
from testkit.fakes.slack_api import SlackFake
from testkit.slack_bot import USERS, HttpHarness, IncidentBot, running_app

CAP = 3
BURST = 30
SLOW = [text_turn("slow", "Waiting on a slow check.", seconds=60)]
CAPPED = AccessSettings(max_concurrent_runs=CAP, runs_per_user_per_hour=2, runs_per_channel_per_hour=None)


@pytest.fixture
def access_settings():
    return CAPPED


PEOPLE = USERS | {f"U0PERSON{n:03d}": {} for n in range(BURST)}
"""The workspace's people, the burst's among them."""


@pytest.fixture
def slack_users():
    return PEOPLE


@pytest.fixture
def script():
    return [list(SLOW) for _ in range(BURST)]


async def burst(harnesses: list[HttpHarness]) -> None:
    """BURST mentions by different people, each in a thread of its own, all sent at once, round-robin."""
    await asyncio.gather(
        *(harnesses[n % len(harnesses)].mention(f"check service {n}", user=f"U0PERSON{n:03d}") for n in range(BURST))
    )


async def started(harness: HttpHarness) -> int:
    """Runs started, by the audit trail of the run store (every replica writes to it)."""
    return sum(event.kind == "run_started" for event in await harness.services.store.audit.audit_log())


def cap_refusals(slack: SlackFake) -> list:
    return [e for e in slack.ephemerals if "the most investigations I run at once" in e.text]


async def settled(harness: HttpHarness, incident: IncidentBot) -> tuple[int, int]:
    """Once every mention of the burst is answered (its run asked the model, or it was refused): how many ran,
    and how many were refused for the cap."""
    await harness.until(
        lambda: len(incident.models) + len(cap_refusals(harness.slack)) >= BURST, "every mention answered"
    )
    return len(incident.models), len(cap_refusals(harness.slack))


async def test_a_burst_of_mentions_starts_exactly_the_cap(harness, incident_bot) -> None:
    await burst([harness])
    assert await settled(harness, incident_bot) == (CAP, BURST - CAP)
    assert len(harness.services.investigations.active) == CAP
    assert await started(harness) == CAP
    refused_person = cap_refusals(harness.slack)[0].user
    second = await harness.mention("again", user=refused_person)
    third = await harness.mention("and again", user=refused_person)
    for ts in (second, third):  # still at the cap; a refused start did not use up the hourly limit of 2
        await harness.until(
            lambda ts=ts: any(e.thread_ts == ts for e in cap_refusals(harness.slack)),
            "refused for the cap, not for the person's rate",
        )


async def test_a_burst_spread_over_two_replicas_starts_exactly_the_cap(run_store) -> None:
    incident = IncidentBot([list(SLOW) for _ in range(BURST)])
    async with (
        SlackFake(users=PEOPLE) as slack,
        running_app(slack, incident, run_store, access=CAPPED) as one,
        running_app(slack, incident, run_store, access=CAPPED) as two,
    ):
        await burst([one, two])
        assert await settled(one, incident) == (CAP, BURST - CAP)
        carried = len(one.services.investigations.active) + len(two.services.investigations.active)
        assert (carried, await started(one)) == (CAP, CAP)
