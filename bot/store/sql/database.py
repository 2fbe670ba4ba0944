"""One database, SQLite or PostgreSQL, as the port adapters share it: statements, migrations, topics and a clock.

A dialect supplies how a statement reaches its database (`fetch`, `execute`), its migrations and its pub/sub; every
adapter writes its SQL once, with `$1`-style parameters, for both.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from bot.store.ports import Subscription
from bot.store.sql.schema import Dialect

Row = dict[str, Any]


def as_utc(moment: datetime) -> datetime:
    """The same instant in UTC; a naive datetime is refused, since its zone is a guess."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"naive datetime {moment.isoformat()}: the run store needs timezone-aware UTC times")
    return moment.astimezone(UTC)


def placeholders(count: int) -> str:
    """`$1, $2, …` for `count` values."""
    return ", ".join(f"${n}" for n in range(1, count + 1))


class Database(ABC):
    """A connection to one database (a pool, or a worker thread); it also carries the `Topics` port, since how a
    message reaches another replica is the dialect's own (LISTEN/NOTIFY, or this process only).

    `idempotent` tells the dialect whether a statement may be re-sent after the connection dropped mid-call;
    `durable` that the write must survive the machine losing power before the call returns, because something
    outside OpsAgent is done on the strength of it (the side-effect journal). Every write survives a crash of the
    process; a write that is not `durable` may roll back with a power loss, and the run then resumes from an
    earlier checkpoint. `urgent`: a person is waiting on it (a click), so it goes before routine statements that
    queue for the same connection (every run's checkpoints).
    """

    dialect: Dialect

    def __init__(self, clock: Callable[[], datetime]) -> None:
        self._clock = clock

    def now(self) -> datetime:
        """The store's clock, in UTC: what every stored time is taken from."""
        return as_utc(self._clock())

    @abstractmethod
    async def fetch(self, sql: str, *args: Any, idempotent: bool = True, urgent: bool = False) -> list[Row]:
        """Run one statement in its own transaction; its rows as dicts."""

    @abstractmethod
    async def execute(
        self, sql: str, *args: Any, idempotent: bool = True, durable: bool = False, urgent: bool = False
    ) -> int:
        """Run one statement in its own transaction; how many rows it changed."""

    @abstractmethod
    async def migrate(self) -> None:
        """Apply the migrations this database lacks, each in its own transaction; a no-op when current."""

    @abstractmethod
    async def close(self) -> None:
        """Close the subscriptions, then the connections."""

    @abstractmethod
    async def notify(self, topic: str, payload: str) -> None:
        """Publish a message to the topic's subscriptions (see `Topics.notify`)."""

    @abstractmethod
    def listen(self, topic: str) -> Subscription:
        """Subscribe to a topic (see `Topics.listen`)."""
