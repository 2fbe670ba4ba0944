"""The side-effect journal in SQL: the `SideEffectStore` port over one `Database`."""

from __future__ import annotations

from bot.store.protocol import StoreConflictError
from bot.store.records import SideEffectRecord
from bot.store.sql.database import Database, placeholders
from opsagent_tools.actions.journal import SideEffectState

_COLUMNS = "key, run_id, step, tool, args_hash, approval_id, state, outcome, started_at, finished_at"


class SqlSideEffects:
    """`SideEffectStore` on the `side_effects` table; rows are never deleted."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def begin_side_effect(self, record: SideEffectRecord) -> SideEffectRecord | None:
        """Record the call as executing; None when the key is new, else its earlier record (a `failed` one is
        executing again; see `SideEffectStore.begin_side_effect`)."""
        values = [getattr(record, name.strip()) for name in _COLUMNS.split(",")]
        values[6], values[7], values[9] = SideEffectState.EXECUTING, "", None
        sql = f"INSERT INTO side_effects ({_COLUMNS}) VALUES ({placeholders(len(values))}) ON CONFLICT DO NOTHING"
        # On disk before the action is sent, and ahead of routine statements: the approver who clicked waits on it.
        if await self._db.execute(sql, *values, durable=True, urgent=True) == 1:
            return None
        earlier = await self.get_side_effect(record.key)
        assert earlier is not None, "side effects are never deleted"
        if earlier.state is SideEffectState.FAILED:
            retry = "UPDATE side_effects SET state = $2, outcome = '', finished_at = NULL WHERE key = $1 AND state = $3"
            await self._db.execute(
                retry, record.key, SideEffectState.EXECUTING, SideEffectState.FAILED, durable=True, urgent=True
            )
        return earlier

    async def finish_side_effect(self, key: str, state: SideEffectState, outcome: str) -> None:
        """Move an executing side effect to done or failed, with its outcome; any other move is refused."""
        if state is SideEffectState.EXECUTING:
            raise StoreConflictError("finish_side_effect takes done or failed, not executing")
        sql = "UPDATE side_effects SET state = $2, outcome = $3, finished_at = $4 WHERE key = $1 AND state = $5"
        now = self._db.now()
        if await self._db.execute(sql, key, state, outcome, now, SideEffectState.EXECUTING, durable=True) == 1:
            return
        stored = await self.get_side_effect(key)
        if stored is not None and stored.state is state and stored.outcome == outcome:
            return  # this very call, re-sent after the connection dropped
        found = "no such side effect" if stored is None else f"it is {stored.state}"
        raise StoreConflictError(f"side effect {key} can only finish from executing, but {found}")

    async def get_side_effect(self, key: str) -> SideEffectRecord | None:
        """The side effect with this idempotency key, or None."""
        rows = await self._db.fetch(f"SELECT {_COLUMNS} FROM side_effects WHERE key = $1", key)
        return SideEffectRecord.model_validate(rows[0]) if rows else None

    async def side_effects_for_run(self, run_id: str) -> list[SideEffectRecord]:
        """The run's side effects in the order they began."""
        rows = await self._db.fetch(
            f"SELECT {_COLUMNS} FROM side_effects WHERE run_id = $1 ORDER BY started_at, step, key", run_id
        )
        return [SideEffectRecord.model_validate(row) for row in rows]
