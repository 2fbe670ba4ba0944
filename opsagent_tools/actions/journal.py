"""The side-effect journal: each action is recorded as executing before it is sent and done after.

It is what makes actions exactly-once across crashes: an action already done is never sent again, and
one whose outcome was lost (a crash or timeout mid-send) is re-sent with the same idempotency key.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol


class SideEffectState(StrEnum):
    """Where an action is: executing until its outcome is known, then done or failed (it did not run)."""

    EXECUTING = "executing"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """What the journal knew of an idempotency key before this attempt."""

    key: str
    state: SideEffectState
    outcome: str = ""


class ActionJournal(Protocol):
    """Where actions are recorded; the bot's run store is the durable one."""

    async def begin(self, key: str, *, run_id: str, step: int, tool: str, args_hash: str) -> JournalEntry | None:
        """Record the action as executing; None if the key is new, else its earlier entry.

        An earlier `done` entry is left as it is (the caller must not send again); `failed` or `executing`
        ones are now executing again (the caller re-sends with the same key).
        """
        ...

    async def finish(self, key: str, state: SideEffectState, outcome: str) -> None:
        """Record the outcome of an executing action."""
        ...


class InMemoryActionJournal:
    """The journal of one process (the CLI, tests): exactly-once within the process, forgotten at exit."""

    def __init__(self) -> None:
        self._entries: dict[str, JournalEntry] = {}

    async def begin(self, key: str, *, run_id: str, step: int, tool: str, args_hash: str) -> JournalEntry | None:
        """See `ActionJournal.begin`; atomic on one event loop (no awaits)."""
        earlier = self._entries.get(key)
        if earlier is None or earlier.state is not SideEffectState.DONE:
            self._entries[key] = JournalEntry(key, SideEffectState.EXECUTING)
        return earlier

    def entry(self, key: str) -> JournalEntry | None:
        """What the journal holds for `key` now."""
        return self._entries.get(key)

    async def finish(self, key: str, state: SideEffectState, outcome: str) -> None:
        """See `ActionJournal.finish`."""
        self._entries[key] = JournalEntry(key, state, outcome)
