"""The run store on one database: each port's SQL adapter over the database they share."""

from __future__ import annotations

from bot.approvals.store import ApprovalStore
from bot.audit.trail import AuditLog
from bot.store.ports import (
    AlertThreads,
    CheckSchedule,
    Dedupe,
    FeedbackStore,
    GuidanceLog,
    IncidentStore,
    Leases,
    RunRecords,
    SideEffectStore,
    Topics,
)
from bot.store.sql.alert_threads import SqlAlertThreads
from bot.store.sql.approvals import SqlApprovals
from bot.store.sql.audit import SqlAudit
from bot.store.sql.checks import SqlChecks
from bot.store.sql.database import Database
from bot.store.sql.dedupe import SqlDedupe
from bot.store.sql.feedback import SqlFeedback
from bot.store.sql.guidance import SqlGuidance
from bot.store.sql.incidents import SqlIncidents
from bot.store.sql.runs import SqlLeases, SqlRunRecords
from bot.store.sql.side_effects import SqlSideEffects


class SqlRunStore:
    """`RunStore` on SQLite or PostgreSQL: one adapter per port, all on `database` (which carries the topics)."""

    def __init__(self, database: Database) -> None:
        self._database = database
        self.runs: RunRecords = SqlRunRecords(database)
        self.leases: Leases = SqlLeases(database)
        self.dedupe: Dedupe = SqlDedupe(database)
        self.topics: Topics = database
        self.approvals: ApprovalStore = SqlApprovals(database)
        self.audit: AuditLog = SqlAudit(database)
        self.alert_threads: AlertThreads = SqlAlertThreads(database)
        self.feedback: FeedbackStore = SqlFeedback(database)
        self.guidance: GuidanceLog = SqlGuidance(database)
        self.memory: IncidentStore = SqlIncidents(database, self.runs)
        self.side_effects: SideEffectStore = SqlSideEffects(database)
        self.checks: CheckSchedule = SqlChecks(database)

    async def migrate(self) -> None:
        """Apply the migrations the database lacks (see `RunStore.migrate`)."""
        await self._database.migrate()

    async def close(self) -> None:
        """Close the subscriptions, then the connections (see `RunStore.close`)."""
        await self._database.close()
