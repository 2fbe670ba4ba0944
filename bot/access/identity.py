"""Who a person is, as far as any request cares: their workspace and account (guest, bot, deactivated), and
whether they are an approver. One check for every way in; the gate asks it for the standing a request needs.

Fails closed: when Slack's directory cannot say, the person is refused (and may try again).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from enum import StrEnum

import structlog

from bot.access.askers import Person, api_client_of
from bot.access.directory import CachedDirectory, Directory, SlackUser
from bot.access.refusals import RefusalReason

log = structlog.get_logger("opsagent.access")


class Standing(StrEnum):
    """What a request needs its person to be."""

    ASKER = "asker"
    """May start runs: a person of the installing workspace or of `[access] allowed_workspaces`, not deactivated,
    not a bot, and not a guest unless `[access] allow_guests`."""
    MEMBER = "member"
    """A member of the installing workspace who is not a guest, a bot or deactivated."""
    APPROVER = "approver"
    """A member who is also an approver (`[slack] approvers`, or in one of `approver_groups`)."""


@dataclass(frozen=True, slots=True)
class Approvers:
    """Who may approve: listed users, or members of listed user groups (both of the installing workspace)."""

    users: frozenset[str] = frozenset()
    """Slack user ids."""
    groups: frozenset[str] = frozenset()
    """Slack user group ids (`S…`). `bot.slack.approval_words` names both as mentions."""


class Identities:
    """Decides whether a person has a standing, by the workspaces their payload names and Slack's directory."""

    def __init__(
        self,
        directory: Directory,
        *,
        installing_team: str,
        allowed_workspaces: Collection[str] = (),
        approvers: Approvers = Approvers(),
        allow_guests: bool = False,
        directory_cache_s: float = 300.0,
    ) -> None:
        self._directory = CachedDirectory(directory, ttl_s=directory_cache_s)
        self._home = installing_team
        self._askers = frozenset({installing_team, *allowed_workspaces})
        self.approvers = approvers
        self._allow_guests = allow_guests

    async def refusal(self, person: Person, needs: Standing) -> RefusalReason | None:
        """Why `person` lacks the standing `needs`; None when they have it. The workspaces the payload names are
        checked before Slack is asked, so a stranger costs no API call."""
        workspaces = self._askers if needs is Standing.ASKER else frozenset({self._home})
        if not person.teams or not set(person.teams) <= workspaces:
            return RefusalReason.WORKSPACE
        try:
            user = await self._directory.user(person.user)
            refusal = self._account_refusal(user, workspaces, needs)
            if refusal is None and needs is Standing.APPROVER and not await self._is_approver(person.user):
                refusal = RefusalReason.NOT_AN_APPROVER
        except Exception as exc:
            log.warning("user_lookup_failed", user=person.user, error=repr(exc)[:300])
            return RefusalReason.DIRECTORY_UNAVAILABLE
        return refusal

    async def name_of(self, user_id: str) -> str:
        """The name Slack shows for a person, from the directory the gate has just asked (cached); "" when Slack
        cannot say, or for a name that is no user id (`alertmanager`), without asking; "API client claude" for an API
        client (`api:claude`). For the audit log: who acted is kept with the name they had then."""
        if (client := api_client_of(user_id)) is not None:
            return f"API client {client}"
        if not (user_id[:1] in ("U", "W") and user_id.isascii() and user_id.isalnum() and user_id.isupper()):
            return ""
        try:
            return (await self._directory.user(user_id)).name
        except Exception as exc:
            log.info("user_name_unknown", user=user_id, error=repr(exc)[:200])
            return ""

    def _account_refusal(self, user: SlackUser, workspaces: frozenset[str], needs: Standing) -> RefusalReason | None:
        if user.team_id not in workspaces:
            return RefusalReason.WORKSPACE
        if user.deleted:
            return RefusalReason.DEACTIVATED
        if user.is_bot:
            return RefusalReason.BOT
        guest = user.is_restricted or user.is_ultra_restricted
        if guest and not (needs is Standing.ASKER and self._allow_guests):
            return RefusalReason.GUEST
        return None

    async def _is_approver(self, user_id: str) -> bool:
        if user_id in self.approvers.users:
            return True
        for group in sorted(self.approvers.groups):
            if user_id in await self._directory.group_members(group):
                return True
        return False
