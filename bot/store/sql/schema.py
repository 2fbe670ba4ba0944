"""The run store's schema as numbered migrations, written once for SQLite and PostgreSQL.

Each migration runs once, in its own transaction, recorded in `schema_migrations`; a newer database is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import assert_never

from bot.store.protocol import SchemaVersionError


class Dialect(StrEnum):
    """The SQL dialects the store speaks."""

    SQLITE = "sqlite"
    POSTGRES = "postgresql"


def _types(dialect: Dialect) -> dict[str, str]:
    """The column types that differ: timestamps (ISO-8601 UTC text in SQLite) and the audit sequence."""
    match dialect:
        case Dialect.SQLITE:
            return {"ts": "TEXT", "seq": "INTEGER PRIMARY KEY AUTOINCREMENT"}
        case Dialect.POSTGRES:
            return {"ts": "TIMESTAMPTZ", "seq": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"}
        case _:
            assert_never(dialect)


BOOTSTRAP = "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at {ts} NOT NULL)"
"""The one table that exists before any migration: which migrations are applied."""

_TABLES = (
    """CREATE TABLE runs (
        run_id TEXT PRIMARY KEY, channel TEXT NOT NULL, thread_ts TEXT NOT NULL, requested_by TEXT NOT NULL,
        team_id TEXT NOT NULL, task TEXT NOT NULL, mention_ts TEXT NOT NULL, status TEXT NOT NULL,
        trace_json TEXT NOT NULL, owner TEXT NOT NULL, lease_until {ts}, created_at {ts} NOT NULL,
        updated_at {ts} NOT NULL)""",
    "CREATE INDEX runs_by_thread ON runs (channel, thread_ts, created_at)",
    "CREATE INDEX runs_by_status ON runs (status)",
    """CREATE TABLE approvals (
        approval_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, state TEXT NOT NULL, expires_at {ts} NOT NULL,
        record_json TEXT NOT NULL)""",
    "CREATE INDEX approvals_by_run ON approvals (run_id, state)",
    "CREATE TABLE dedup_keys (key TEXT PRIMARY KEY, token TEXT NOT NULL, expires_at {ts} NOT NULL)",
    """CREATE TABLE side_effects (
        key TEXT PRIMARY KEY, run_id TEXT NOT NULL, step INTEGER NOT NULL, tool TEXT NOT NULL,
        args_hash TEXT NOT NULL, approval_id TEXT NOT NULL, state TEXT NOT NULL, outcome TEXT NOT NULL,
        started_at {ts} NOT NULL, finished_at {ts})""",
    "CREATE INDEX side_effects_by_run ON side_effects (run_id, started_at)",
    """CREATE TABLE audit_events (
        seq {seq}, at {ts} NOT NULL, kind TEXT NOT NULL, run_id TEXT NOT NULL, actor TEXT NOT NULL,
        detail_json TEXT NOT NULL)""",
    "CREATE INDEX audit_events_by_run ON audit_events (run_id, seq)",
)

_REFUSAL = "audit_events is append-only"


def _append_only(dialect: Dialect) -> tuple[str, ...]:
    """Triggers that make the database itself refuse to change or delete an audit event."""
    match dialect:
        case Dialect.SQLITE:
            return tuple(
                f"CREATE TRIGGER audit_events_no_{op.lower()} BEFORE {op} ON audit_events "
                f"BEGIN SELECT RAISE(ABORT, '{_REFUSAL}: {op} refused'); END"
                for op in ("UPDATE", "DELETE")
            )
        case Dialect.POSTGRES:
            return (
                "CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS "
                f"$$ BEGIN RAISE EXCEPTION '{_REFUSAL}: % refused', TG_OP; END $$",
                "CREATE TRIGGER audit_events_no_change BEFORE UPDATE OR DELETE ON audit_events "
                "FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()",
                "CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events "
                "FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only()",
            )
        case _:
            assert_never(dialect)


@dataclass(frozen=True)
class Migration:
    """One schema change: its version (1, 2, ...), a name, and its statements in a dialect."""

    version: int
    name: str
    shared: tuple[str, ...]
    """Statements written once, with `{ts}`/`{seq}` for the column types that differ."""
    specific: Callable[[Dialect], tuple[str, ...]] | None = None
    """A dialect's own statements, run after the shared ones (triggers differ most)."""

    def statements(self, dialect: Dialect) -> list[str]:
        """The SQL to run, in order, for this dialect."""
        types = _types(dialect)
        own = self.specific(dialect) if self.specific is not None else ()
        return [sql.format(**types) for sql in self.shared] + list(own)


_GUIDANCE = (
    """CREATE TABLE guidance (
        run_id TEXT NOT NULL, seq INTEGER NOT NULL, user_id TEXT NOT NULL, name TEXT NOT NULL, text TEXT NOT NULL,
        message_ts TEXT NOT NULL, at {ts} NOT NULL, PRIMARY KEY (run_id, seq))""",
)

_ACTION_CHECKS = (
    """CREATE TABLE action_checks (
        run_id TEXT NOT NULL, step INTEGER NOT NULL, check_no INTEGER NOT NULL, due_at {ts} NOT NULL,
        action_at {ts} NOT NULL, approval_ts TEXT NOT NULL, approver TEXT NOT NULL, owner TEXT NOT NULL,
        lease_until {ts}, result_json TEXT NOT NULL, recorded INTEGER NOT NULL, PRIMARY KEY (run_id, step, check_no))""",
    "CREATE INDEX action_checks_with_work ON action_checks (recorded, due_at)",
)
"""Each check of an approved action: when it is due, who holds it (a lease, as for runs), what it found, and whether
that is in its run's trace yet."""

_ALERT_GROUPS = (
    """CREATE TABLE alert_groups (
        group_key TEXT PRIMARY KEY, channel TEXT NOT NULL, thread_ts TEXT NOT NULL,
        fingerprints_json TEXT NOT NULL, run_id TEXT NOT NULL, updated_at {ts} NOT NULL)""",
)

_STOP_REQUESTS = ("ALTER TABLE runs ADD COLUMN stop_requested_by TEXT NOT NULL DEFAULT ''",)
_ONE_OPEN_RUN_PER_THREAD = (
    "CREATE UNIQUE INDEX one_open_run_per_thread ON runs (channel, thread_ts) WHERE status <> 'finished'",
)

_RUN_SLOTS_AND_TASK_DATA = (
    "ALTER TABLE runs ADD COLUMN slot INTEGER",
    "CREATE UNIQUE INDEX one_unfinished_run_per_slot ON runs (slot) WHERE status <> 'finished'",
    "ALTER TABLE runs ADD COLUMN task_data TEXT NOT NULL DEFAULT ''",
)
"""Each unfinished run holds one of `[access] max_concurrent_runs` slots (the index makes two runs in one slot
impossible, on any replica); runs from before it hold none. And what a task comes with, fenced for the model."""

_FEEDBACK = (
    """CREATE TABLE feedback (
        run_id TEXT NOT NULL, user_id TEXT NOT NULL, rating TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '',
        at {ts} NOT NULL, PRIMARY KEY (run_id, user_id))""",
)
"""Each person's latest rating of a run's answer (Slack sends every change of the buttons; the last one stands)."""

_SUMMARY_MESSAGES = ("ALTER TABLE runs ADD COLUMN summary_ts TEXT NOT NULL DEFAULT ''",)
"""Where each run's summary message is, so the process that resumes a run updates it rather than post another."""
_INCIDENTS = (
    "ALTER TABLE runs ADD COLUMN alert_labels TEXT NOT NULL DEFAULT '[]'",
    "ALTER TABLE runs ADD COLUMN remembered TEXT NOT NULL DEFAULT ''",
    """CREATE TABLE incidents (
        seq {seq}, run_id TEXT NOT NULL UNIQUE, task TEXT NOT NULL, services TEXT NOT NULL, labels TEXT NOT NULL,
        summary TEXT NOT NULL, root_cause TEXT NOT NULL, confidence TEXT NOT NULL, outcome TEXT NOT NULL,
        thread_url TEXT NOT NULL, finished_at {ts} NOT NULL)""",
    "CREATE INDEX incidents_by_age ON incidents (finished_at)",
)
"""The memory of past incidents: one row per remembered run (`runs.remembered` says whether a finished run was
indexed, or forgotten on purpose, so it is never indexed again), and each alert-started run's alert labels."""
_SEARCHED = ("task", "services", "labels", "summary", "root_cause")
"""The incident columns full-text search reads, in the order of the SQLite index's columns (and its bm25 weights)."""


def _incident_search(dialect: Dialect) -> tuple[str, ...]:
    """The full-text index over `incidents`: an FTS5 table kept by triggers, or a generated `tsvector` with GIN."""
    match dialect:
        case Dialect.SQLITE:
            columns = ", ".join(_SEARCHED)
            old, new = (", ".join(f"{row}.{c}" for c in _SEARCHED) for row in ("old", "new"))
            forget = (
                f"INSERT INTO incident_search (incident_search, rowid, {columns}) VALUES ('delete', old.seq, {old});"
            )
            index = f"INSERT INTO incident_search (rowid, {columns}) VALUES (new.seq, {new});"
            return (
                f"CREATE VIRTUAL TABLE incident_search USING fts5({columns}, content='incidents', content_rowid='seq', "
                "tokenize='porter unicode61')",
                f"CREATE TRIGGER incidents_indexed AFTER INSERT ON incidents BEGIN {index} END",
                f"CREATE TRIGGER incidents_unindexed AFTER DELETE ON incidents BEGIN {forget} END",
                f"CREATE TRIGGER incidents_reindexed AFTER UPDATE ON incidents BEGIN {forget} {index} END",
            )
        case Dialect.POSTGRES:
            return (
                "ALTER TABLE incidents ADD COLUMN document tsvector GENERATED ALWAYS AS ("
                "setweight(to_tsvector('english', task || ' ' || services || ' ' || labels), 'A') || "
                "setweight(to_tsvector('english', summary || ' ' || root_cause), 'B')) STORED",
                "CREATE INDEX incidents_search ON incidents USING GIN (document)",
            )
        case _:
            assert_never(dialect)


_RUNS_BY_REQUESTER = ("CREATE INDEX runs_by_requester ON runs (requested_by, created_at)",)

MIGRATIONS = (
    Migration(1, "runs, approvals, dedup keys, side effects, append-only audit", _TABLES, _append_only),
    Migration(2, "alert groups and their threads", _ALERT_GROUPS),
    Migration(3, "a Stop recorded on its run", _STOP_REQUESTS),
    Migration(4, "one unfinished run per thread, across replicas", _ONE_OPEN_RUN_PER_THREAD),
    Migration(5, "runs hold a slot of the concurrency cap; the data a task comes with", _RUN_SLOTS_AND_TASK_DATA),
    Migration(6, "each person's rating of a run's answer", _FEEDBACK),
    Migration(7, "where each run's summary message is", _SUMMARY_MESSAGES),
    Migration(
        8, "the memory of past incidents, searched in full text; alert labels on runs", _INCIDENTS, _incident_search
    ),
    Migration(9, "what people told running investigations", _GUIDANCE),
    Migration(10, "runs by who asked for them (an API client lists its own)", _RUNS_BY_REQUESTER),
    Migration(11, "the checks of approved actions, due at a time", _ACTION_CHECKS),
)
LATEST_VERSION = MIGRATIONS[-1].version


def bootstrap_sql(dialect: Dialect) -> str:
    """`CREATE TABLE IF NOT EXISTS schema_migrations` in this dialect."""
    return BOOTSTRAP.format(**_types(dialect))


def next_migration(applied: Iterable[int]) -> Migration | None:
    """The first migration not applied yet, or None when the schema is current.

    A database migrated by a newer version of OpsAgent is refused: this code would misread it.
    """
    done = set(applied)
    newest = max(done, default=0)
    if newest > LATEST_VERSION:
        raise SchemaVersionError(
            f"the run store's schema is at version {newest}, newer than this OpsAgent knows ({LATEST_VERSION}): "
            "upgrade OpsAgent, or point [store] url at another database"
        )
    return next((m for m in MIGRATIONS if m.version not in done), None)


NOT_MIGRATED = "the run store has no schema yet: call `await store.migrate()` at start-up"
