"""The side-effect journal (`bot.store.sql.side_effects`) on SQLite and a real PostgreSQL: begun once, finished
only from executing, a failed one tried again.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.store.protocol import RunStore, StoreConflictError
from opsagent_tools.actions.journal import SideEffectState
from samples.store_records import a_side_effect
from testkit.fakes.clock import T0, ManualClock


async def test_side_effects_begin_once_and_finish_only_from_executing(store: RunStore, clock: ManualClock) -> None:
    side_effects = store.side_effects
    first = a_side_effect("k1")
    assert await side_effects.begin_side_effect(first) is None  # new
    resend = a_side_effect("k1", step=9, at=T0 + timedelta(minutes=3))
    assert await side_effects.begin_side_effect(resend) == first  # the existing record, unchanged
    assert await side_effects.get_side_effect("k1") == first
    assert await side_effects.get_side_effect("nope") is None

    clock.advance(5)
    await side_effects.finish_side_effect("k1", SideEffectState.DONE, "rolled back order-service to v41")
    done = first.model_copy(
        update={"state": SideEffectState.DONE, "outcome": "rolled back order-service to v41", "finished_at": clock.now}
    )
    assert await side_effects.get_side_effect("k1") == done
    await side_effects.finish_side_effect("k1", SideEffectState.DONE, "rolled back order-service to v41")  # re-sent
    with pytest.raises(StoreConflictError, match="only finish from executing, but it is done"):
        await side_effects.finish_side_effect("k1", SideEffectState.FAILED, "HTTP 500")
    with pytest.raises(StoreConflictError, match="no such side effect"):
        await side_effects.finish_side_effect("nope", SideEffectState.DONE, "")
    with pytest.raises(StoreConflictError, match="not executing"):
        await side_effects.finish_side_effect("k1", SideEffectState.EXECUTING, "")
    assert await side_effects.get_side_effect("k1") == done

    second = a_side_effect("k2", step=5, at=T0 + timedelta(minutes=1))
    assert await side_effects.begin_side_effect(second) is None
    await side_effects.finish_side_effect("k2", SideEffectState.FAILED, "HTTP 500")
    failed = await side_effects.get_side_effect("k2")
    assert await side_effects.begin_side_effect(second) == failed  # it did not run: it may be tried again
    assert (await side_effects.get_side_effect("k2")).state is SideEffectState.EXECUTING
    await side_effects.finish_side_effect("k2", SideEffectState.DONE, "HTTP 200")
    assert [e.key for e in await side_effects.side_effects_for_run("r1")] == ["k1", "k2"]
    assert await side_effects.side_effects_for_run("r2") == []
