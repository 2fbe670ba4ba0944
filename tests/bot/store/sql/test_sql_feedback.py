"""Ratings (`bot.store.sql.feedback`) on SQLite and a real PostgreSQL: each person's latest, a reason kept or dropped."""

from __future__ import annotations

from datetime import timedelta

from bot.store.protocol import RunStore
from bot.store.records import FeedbackRecord, Rating
from testkit.fakes.clock import T0


async def test_feedback_is_each_persons_latest_rating_and_a_reason_survives_a_repeated_click(store: RunStore) -> None:
    feedback = store.feedback
    down = FeedbackRecord(run_id="r1", user="U0BOB", rating=Rating.DOWN, at=T0)
    await feedback.record_feedback(down)
    await feedback.record_feedback(
        down.model_copy(update={"reason": "it was DNS; password=hunter2hunter2", "at": T0 + timedelta(1)})
    )
    await feedback.record_feedback(down.model_copy(update={"at": T0 + timedelta(2)}))  # clicked again: the reason stays
    await feedback.record_feedback(FeedbackRecord(run_id="r1", user="U0ALICE", rating=Rating.UP, at=T0 + timedelta(3)))
    await feedback.record_feedback(FeedbackRecord(run_id="r2", user="U0BOB", rating=Rating.UP, at=T0 + timedelta(4)))
    bob, alice = await feedback.feedback_for("r1")
    assert (bob.user, bob.rating, bob.at) == ("U0BOB", Rating.DOWN, T0 + timedelta(2))
    assert bob.reason == "it was DNS; password=[REDACTED:password]"
    assert (alice.user, alice.rating, alice.reason) == ("U0ALICE", Rating.UP, "")
    await feedback.record_feedback(bob.model_copy(update={"rating": Rating.UP, "reason": "", "at": T0 + timedelta(5)}))
    changed = [f for f in await feedback.feedback_for("r1") if f.user == "U0BOB"]
    assert [(f.rating, f.reason) for f in changed] == [(Rating.UP, "")], "a changed mind drops the old reason"
    assert [(f.run_id, f.user) for f in await feedback.rated_runs()] == [
        ("r1", "U0BOB"),
        ("r2", "U0BOB"),
        ("r1", "U0ALICE"),
    ]
    assert await feedback.feedback_for("r3") == []
