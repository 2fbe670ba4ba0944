"""The action journal the webhook tools write, on the store's side-effect journal: exactly-once actions across
restarts and replicas.

The webhook asks it before sending and tells it after: the `executing` record is written before anything
is sent, so a crash at any later point leaves it for a resumed run to settle (by re-sending the same key).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from bot.audit.trail import AuditKind, AuditTrail
from bot.store.ports import SideEffectStore
from bot.store.records import SideEffectRecord, utc_now
from opsagent_tools.actions.journal import JournalEntry, SideEffectState

FINISHED_KINDS = {
    SideEffectState.DONE: AuditKind.SIDE_EFFECT_DONE,
    SideEffectState.FAILED: AuditKind.SIDE_EFFECT_FAILED,
}


class StoreActionJournal:
    """`ActionJournal` on a `SideEffectStore`; a store that cannot be reached stops the action (it is not sent)."""

    def __init__(
        self, side_effects: SideEffectStore, audit: AuditTrail, *, clock: Callable[[], datetime] = utc_now
    ) -> None:
        self._side_effects = side_effects
        self._audit = audit
        self._clock = clock

    async def begin(self, key: str, *, run_id: str, step: int, tool: str, args_hash: str) -> JournalEntry | None:
        """Record the action as executing (see `ActionJournal.begin`), and audit it."""
        record = SideEffectRecord(
            key=key,
            run_id=run_id,
            step=step,
            tool=tool,
            args_hash=args_hash,
            state=SideEffectState.EXECUTING,
            started_at=self._clock(),
        )
        earlier = await self._side_effects.begin_side_effect(record)
        before = "" if earlier is None else str(earlier.state)
        await self._audit.require(
            AuditKind.SIDE_EFFECT_STARTED,
            run_id=run_id,
            tool=tool,
            step=step,
            key=key,
            args_hash=args_hash,
            before=before,
        )
        return None if earlier is None else JournalEntry(key, earlier.state, earlier.outcome)

    async def finish(self, key: str, state: SideEffectState, outcome: str) -> None:
        """Record the outcome, and audit it."""
        await self._side_effects.finish_side_effect(key, state, outcome)
        record = await self._side_effects.get_side_effect(key)
        await self._audit.record(
            FINISHED_KINDS[state],
            run_id=record.run_id if record else "",
            tool=record.tool if record else "",
            key=key,
            outcome=outcome[:500],
        )
