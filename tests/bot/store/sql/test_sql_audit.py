"""The audit log (`bot.store.sql.audit`) on SQLite and a real PostgreSQL: appended, filtered, redacted, and
refused any change by the database itself.
"""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import asyncpg
import pytest

from bot.audit.trail import AuditEvent
from bot.store.protocol import RunStore
from testkit.fakes.clock import T0


async def test_audit_log_appends_filters_and_redacts(store: RunStore) -> None:
    for n in range(5):
        await store.audit.audit(
            AuditEvent(at=T0 + timedelta(seconds=n), kind="tool_call", run_id=f"r{n % 2}", actor="U1", detail={"n": n})
        )
    secret = {"url": "postgresql://app:S3cretPw@db:5432/app", "args": ["password=hunter2hunter2"]}
    await store.audit.audit(AuditEvent(at=T0, kind="side_effect_started", run_id="r0", actor="U2", detail=secret))
    log = await store.audit.audit_log()
    assert [event.detail.get("n") for event in log] == [0, 1, 2, 3, 4, None]
    assert [event.seq for event in log] == sorted({event.seq for event in log})
    assert log[0] == AuditEvent(seq=log[0].seq, at=T0, kind="tool_call", run_id="r0", actor="U1", detail={"n": 0})
    assert [event.detail.get("n") for event in await store.audit.audit_log(run_id="r1")] == [1, 3]
    assert [event.detail.get("n") for event in await store.audit.audit_log(run_id="r0", limit=2)] == [4, None]
    stored = log[-1].detail
    assert "S3cretPw" not in str(stored)
    assert "hunter2hunter2" not in str(stored)
    assert stored["url"].startswith("postgresql://app:")


async def test_the_database_refuses_to_change_the_audit_log(store: RunStore, store_url: str, raw_sql) -> None:
    await store.audit.audit(AuditEvent(at=T0, kind="run_started", run_id="r1", actor="U1"))
    for sql in ("UPDATE audit_events SET actor = 'someone else'", "DELETE FROM audit_events"):
        with pytest.raises((sqlite3.IntegrityError, asyncpg.RaiseError), match="append-only"):
            await raw_sql(sql)
    if not store_url.startswith("sqlite"):
        with pytest.raises(asyncpg.RaiseError, match="append-only"):
            await raw_sql("TRUNCATE audit_events")
    assert [event.actor for event in await store.audit.audit_log()] == ["U1"]
