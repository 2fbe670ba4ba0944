"""Ratings in SQL: the `FeedbackStore` port over one `Database`."""

from __future__ import annotations

from bot.store.records import FeedbackRecord
from bot.store.sql.database import Database, Row
from kernel import DEFAULT_REDACTOR

_SELECT = "SELECT run_id, user_id, rating, reason, at FROM feedback"


class SqlFeedback:
    """`FeedbackStore` on the `feedback` table, one row per person and run."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def record_feedback(self, feedback: FeedbackRecord) -> None:
        """Keep a person's rating of a run, replacing their earlier one; a new rating without a reason keeps the
        reason given with the same rating before (the buttons are clicked again; the reason came from a modal)."""
        await self._db.execute(
            "INSERT INTO feedback (run_id, user_id, rating, reason, at) VALUES ($1, $2, $3, $4, $5) "
            "ON CONFLICT (run_id, user_id) DO UPDATE SET rating = excluded.rating, at = excluded.at, reason = CASE "
            "WHEN excluded.reason <> '' THEN excluded.reason WHEN feedback.rating = excluded.rating "
            "THEN feedback.reason ELSE '' END",
            feedback.run_id,
            feedback.user,
            str(feedback.rating),
            DEFAULT_REDACTOR.redact(feedback.reason),
            feedback.at,
        )

    async def feedback_for(self, run_id: str) -> list[FeedbackRecord]:
        """Everyone's latest rating of the run, oldest first."""
        rows = await self._db.fetch(f"{_SELECT} WHERE run_id = $1 ORDER BY at, user_id", run_id)
        return [_feedback(row) for row in rows]

    async def rated_runs(self, *, limit: int = 1000) -> list[FeedbackRecord]:
        """The latest ratings of any run, newest first: what `opsagent eval export --feedback` turns into scenarios."""
        rows = await self._db.fetch(f"{_SELECT} ORDER BY at DESC, run_id, user_id LIMIT $1", limit)
        return [_feedback(row) for row in rows]


def _feedback(row: Row) -> FeedbackRecord:
    return FeedbackRecord(
        run_id=row["run_id"], user=row["user_id"], rating=row["rating"], reason=row["reason"], at=row["at"]
    )
