"""Who a person is, for every request: the workspace their payload names, then Slack's directory (deactivated, bot,
guest), then whether they are an approver; a directory that cannot say refuses (fail closed) and is not cached."""

from __future__ import annotations

import asyncio

import pytest

from bot.access.askers import Person
from bot.access.directory import CachedDirectory, SlackUser
from bot.access.identity import Approvers, Identities, Standing
from bot.access.refusals import RefusalReason

TEAM, PARTNER = "T_HOME", "T_PARTNER"
ONCALL = {"U_CAROL", "U_BOT", "U_GONE", "U_GUEST", "U_SINGLE", "U_EXT"}
"""Members of the approver group, so the account checks (not the approver check) are what refuse them."""
APPROVERS = Approvers(frozenset({"U_ALICE", "U_BOB"}), frozenset({"S_ONCALL"}))


class FakeDirectory:
    """users.info and usergroups.users.list as Slack answers them; counts lookups, and can fail."""

    def __init__(self) -> None:
        self.users = {
            user: SlackUser(id=user, team_id=TEAM) for user in ("U_ALICE", "U_BOB", "U_CAROL", "U_DAVE", "U_REQ")
        }
        self.users |= {
            "U_BOT": SlackUser(id="U_BOT", team_id=TEAM, is_bot=True),
            "U_GONE": SlackUser(id="U_GONE", team_id=TEAM, deleted=True),
            "U_GUEST": SlackUser(id="U_GUEST", team_id=TEAM, is_restricted=True),
            "U_SINGLE": SlackUser(id="U_SINGLE", team_id=TEAM, is_ultra_restricted=True),
            "U_EXT": SlackUser(id="U_EXT", team_id=PARTNER),
        }
        self.groups = {"S_ONCALL": set(ONCALL)}
        self.user_lookups = 0
        self.group_lookups = 0
        self.error: Exception | None = None
        self.group_error: Exception | None = None

    async def user(self, user_id: str) -> SlackUser:
        self.user_lookups += 1
        if self.error:
            raise self.error
        return self.users[user_id]

    async def group_members(self, group_id: str) -> set[str]:
        self.group_lookups += 1
        if self.group_error:
            raise self.group_error
        return self.groups[group_id]


@pytest.fixture
def directory() -> FakeDirectory:
    return FakeDirectory()


def identities(directory: FakeDirectory, **options) -> Identities:
    return Identities(directory, installing_team=TEAM, approvers=APPROVERS, **options)


ACCOUNTS = [
    ("U_BOB", (PARTNER,), RefusalReason.WORKSPACE),
    ("U_BOB", (TEAM, PARTNER), RefusalReason.WORKSPACE),
    ("U_BOB", (), RefusalReason.WORKSPACE),
    ("U_EXT", (TEAM,), RefusalReason.WORKSPACE),
    ("U_BOT", (TEAM,), RefusalReason.BOT),
    ("U_GONE", (TEAM,), RefusalReason.DEACTIVATED),
    ("U_GUEST", (TEAM,), RefusalReason.GUEST),
    ("U_SINGLE", (TEAM,), RefusalReason.GUEST),
]
ACCOUNT_IDS = [
    "payload names another workspace",
    "one field names another workspace",
    "no workspace named",
    "the directory's workspace is another",
    "bot",
    "deactivated",
    "guest",
    "single-channel guest",
]


@pytest.mark.parametrize("needs", list(Standing))
@pytest.mark.parametrize(("user", "teams", "reason"), ACCOUNTS, ids=ACCOUNT_IDS)
async def test_accounts_are_refused_whatever_the_request_needs(directory, needs, user, teams, reason):
    assert await identities(directory).refusal(Person(user, teams), needs) is reason


@pytest.mark.parametrize(
    ("needs", "refused"),
    [(Standing.ASKER, None), (Standing.MEMBER, None), (Standing.APPROVER, RefusalReason.NOT_AN_APPROVER)],
)
async def test_a_member_who_is_no_approver_may_ask_but_not_approve(directory, needs, refused):
    assert await identities(directory).refusal(Person("U_DAVE", (TEAM,)), needs) is refused


async def test_guests_may_ask_when_allowed_but_never_stop_or_approve(directory):
    open_doors = identities(directory, allow_guests=True)
    guest = Person("U_GUEST", (TEAM,))
    assert await open_doors.refusal(guest, Standing.ASKER) is None
    assert await open_doors.refusal(guest, Standing.MEMBER) is RefusalReason.GUEST
    assert await open_doors.refusal(guest, Standing.APPROVER) is RefusalReason.GUEST


async def test_an_allowed_workspace_may_ask_but_its_members_are_not_members(directory):
    shared = identities(directory, allowed_workspaces=[PARTNER])
    partner = Person("U_EXT", (PARTNER,))
    assert await shared.refusal(partner, Standing.ASKER) is None
    assert await shared.refusal(partner, Standing.MEMBER) is RefusalReason.WORKSPACE


async def test_strangers_cost_no_directory_lookup(directory):
    await identities(directory).refusal(Person("U_EXT", (PARTNER,)), Standing.ASKER)
    assert directory.user_lookups == 0


async def test_a_member_of_an_approver_group_approves_and_the_group_is_cached(directory):
    checks = identities(directory)
    carol = Person("U_CAROL", (TEAM,))
    assert await checks.refusal(carol, Standing.APPROVER) is None
    assert await checks.refusal(carol, Standing.APPROVER) is None
    assert (directory.user_lookups, directory.group_lookups) == (1, 1)


@pytest.mark.parametrize("failing", ["user", "group"])
async def test_a_directory_failure_fails_closed_and_is_not_cached(directory, failing):
    checks = identities(directory)
    carol = Person("U_CAROL", (TEAM,))
    if failing == "user":
        directory.error = TimeoutError("users.info timed out")
    else:
        directory.group_error = ConnectionError("usergroups.users.list: ratelimited")
    assert await checks.refusal(carol, Standing.APPROVER) is RefusalReason.DIRECTORY_UNAVAILABLE
    directory.error = directory.group_error = None
    assert await checks.refusal(carol, Standing.APPROVER) is None


async def test_lookups_of_one_person_at_once_ask_slack_once(directory):
    checks = identities(directory)
    clicks = [checks.refusal(Person("U_CAROL", (TEAM,)), Standing.APPROVER) for _ in range(50)]
    assert await asyncio.gather(*clicks) == [None] * 50
    assert (directory.user_lookups, directory.group_lookups) == (1, 1)


async def test_a_failed_lookup_fails_everyone_waiting_on_it_and_is_not_kept(directory):
    directory.error = TimeoutError("users.info timed out")
    checks = identities(directory)
    waiting = [checks.refusal(Person("U_BOB", (TEAM,)), Standing.MEMBER) for _ in range(5)]
    assert await asyncio.gather(*waiting) == [RefusalReason.DIRECTORY_UNAVAILABLE] * 5
    directory.error = None
    assert await checks.refusal(Person("U_BOB", (TEAM,)), Standing.MEMBER) is None
    assert directory.user_lookups == 2


async def test_cached_directory_refetches_after_its_ttl(directory):
    now = [0.0]
    cached = CachedDirectory(directory, ttl_s=300, clock=lambda: now[0])
    assert await cached.group_members("S_ONCALL") == ONCALL
    now[0] = 299.0
    await cached.group_members("S_ONCALL")
    assert directory.group_lookups == 1
    now[0] = 300.0
    await cached.group_members("S_ONCALL")
    assert directory.group_lookups == 2
