"""Who a Slack user is and which user groups hold whom, as far as the gate cares, with a cache.

`usergroups.users.list` is a tier-2 API, so answers are kept for a few minutes; failures are not.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class SlackUser:
    """What `users.info` says about a person, as far as the gate cares."""

    id: str
    team_id: str
    is_bot: bool = False
    deleted: bool = False
    is_restricted: bool = False
    is_ultra_restricted: bool = False
    name: str = ""
    """How Slack shows the person (their display name, else their full name, else their handle); "" if unknown."""


class Directory(Protocol):
    """Who a Slack user is and which user groups hold whom (`users.info`, `usergroups.users.list`)."""

    async def user(self, user_id: str) -> SlackUser: ...

    async def group_members(self, group_id: str) -> set[str]: ...


class CachedDirectory:
    """A `Directory` whose answers are kept for `ttl_s` (user groups are a tier-2 API); failures are not kept.

    Look-ups of one key at the same time share one call: a burst of clicks by one approver (or mentions by one
    person) asks Slack once, not once each.
    """

    def __init__(
        self, directory: Directory, *, ttl_s: float = 300.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._directory = directory
        self._ttl_s = ttl_s
        self._clock = clock
        self._users: dict[str, tuple[float, SlackUser]] = {}
        self._groups: dict[str, tuple[float, set[str]]] = {}
        self._asking: dict[tuple[int, str], asyncio.Future[Any]] = {}
        """Look-ups in flight, by (cache, key)."""

    async def user(self, user_id: str) -> SlackUser:
        """The user, from the cache while fresh."""
        return await self._cached(self._users, user_id, self._directory.user)

    async def group_members(self, group_id: str) -> set[str]:
        """The group's member ids, from the cache while fresh."""
        return set(await self._cached(self._groups, group_id, self._directory.group_members))

    async def _cached(
        self, cache: dict[str, tuple[float, Any]], key: str, fetch: Callable[[str], Awaitable[Any]]
    ) -> Any:
        hit = cache.get(key)
        if hit is not None and self._clock() - hit[0] < self._ttl_s:
            return hit[1]
        asking = self._asking.get((id(cache), key))
        if asking is None:
            asking = self._asking[id(cache), key] = asyncio.ensure_future(self._fetch(cache, key, fetch))
        return await asyncio.shield(asking)

    async def _fetch(
        self, cache: dict[str, tuple[float, Any]], key: str, fetch: Callable[[str], Awaitable[Any]]
    ) -> Any:
        try:
            value = await fetch(key)
            cache[key] = (self._clock(), value)
            return value
        finally:
            del self._asking[id(cache), key]
