"""The memory of past incidents on both stores: full-text ranking, the service filter, retention, feedback,
forgetting for good, and queries that would be search syntax, on SQLite's FTS5 and PostgreSQL's tsvector alike."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.store.protocol import RunStore
from bot.store.records import FeedbackRecord, Rating, RunStatus
from kernel import Confidence, StopReason
from opsagent_tools.memory import PastIncident
from samples.store_records import a_run
from testkit.fakes.clock import T0, ManualClock


async def finished_run(store: RunStore, run_id: str, number: int) -> None:
    await store.runs.create_run(a_run(run_id, thread_ts=f"1700000000.{number:06d}"))
    await store.runs.checkpoint(run_id, status=RunStatus.FINISHED, trace_json="{}")


def an_incident(run_id: str, task: str, *, days_ago: float = 1, **fields: object) -> PastIncident:
    return PastIncident(
        run_id=run_id, task=task, outcome=StopReason.FINISH, finished_at=T0 - timedelta(days=days_ago), **fields
    )


@pytest.fixture
async def remembered(store: RunStore) -> RunStore:
    incidents = [
        an_incident(
            "r-deploy",
            "checkout 5xx jumped to 12% after lunch",
            services=("checkout", "Gateway"),
            labels=("alertname=CheckoutHigh5xx", "severity=page"),
            summary="Checkout returned 5xx after the v2.14.0 deploy.",
            root_cause="The v2.14.0 deploy dropped the payments timeout setting.",
            confidence=Confidence.CONFIRMED,
        ),
        an_incident(
            "r-db",
            "orders are slow",
            services=("orders",),
            summary="Orders timed out waiting for database connections.",
            root_cause="The connection pool was lowered to 5 in a config change.",
            confidence=Confidence.LIKELY,
        ),
        an_incident("r-disk", "payments logs stopped", services=("payments",), summary="The log disk filled up."),
    ]
    for number, incident in enumerate(incidents, 1):
        await finished_run(store, incident.run_id, number)
        assert await store.memory.remember_incident(incident)
    return store


async def test_search_ranks_the_incident_whose_words_match_best_first(remembered: RunStore) -> None:
    since = T0 - timedelta(days=30)
    found = await remembered.memory.search_incidents("checkout errors 5xx after a deploy", since=since)
    assert [incident.run_id for incident in found] == ["r-deploy"]
    best = found[0]
    assert best.services == ("checkout", "gateway")
    assert best.labels == ("alertname=CheckoutHigh5xx", "severity=page")
    assert (best.confidence, best.outcome, best.finished_at) == (
        Confidence.CONFIRMED,
        StopReason.FINISH,
        T0 - timedelta(1),
    )
    slow = await remembered.memory.search_incidents("database connection timed out for orders", since=since)
    assert slow[0].run_id == "r-db"
    # Stemmed on both: "deploys" finds "deploy", "connections" finds "connection".
    assert [i.run_id for i in await remembered.memory.search_incidents("deploys", since=since)] == ["r-deploy"]
    assert [i.run_id for i in await remembered.memory.search_incidents("connections", since=since)] == ["r-db"]
    many = await remembered.memory.search_incidents("checkout orders payments", since=since, limit=2)
    assert len(many) == 2


async def test_the_service_filter_matches_whole_names_only(remembered: RunStore) -> None:
    since = T0 - timedelta(days=30)
    assert [
        i.run_id for i in await remembered.memory.search_incidents("5xx slow disk", since=since, service="orders")
    ] == ["r-db"]
    assert await remembered.memory.search_incidents("5xx slow disk", since=since, service="order") == []
    assert await remembered.memory.search_incidents("5xx", since=since, service="check%") == []
    found = await remembered.memory.search_incidents("5xx", since=since, service="GATEWAY")
    assert [i.run_id for i in found] == ["r-deploy"]


async def test_retention_hides_then_deletes_old_incidents(remembered: RunStore) -> None:
    await remembered.memory.remember_incident(an_incident("r-old", "checkout 5xx", days_ago=400))
    # Its run is not in the store: nothing is kept.
    assert [i.run_id for i in await remembered.memory.incidents()] == ["r-disk", "r-db", "r-deploy"]
    await finished_run(remembered, "r-old", 9)
    assert await remembered.memory.remember_incident(an_incident("r-old", "checkout 5xx", days_ago=400))
    recent = await remembered.memory.search_incidents("checkout", since=T0 - timedelta(days=180))
    assert [i.run_id for i in recent] == ["r-deploy"]
    assert await remembered.memory.forget_incidents_before(T0 - timedelta(days=180)) == 1
    assert "r-old" not in [i.run_id for i in await remembered.memory.incidents()]
    assert await remembered.memory.runs_to_remember() == [], "a run whose incident aged out is not indexed again"


async def test_feedback_shows_with_each_incident_and_a_wrong_answer_carries_its_correction(
    remembered: RunStore,
) -> None:
    for user, rating, reason in (
        ("U1", Rating.DOWN, "it was DNS, not the deploy"),
        ("U2", Rating.DOWN, ""),
        ("U3", Rating.UP, "nice"),
    ):
        await remembered.feedback.record_feedback(
            FeedbackRecord(run_id="r-deploy", user=user, rating=rating, reason=reason, at=T0)
        )
    (incident,) = await remembered.memory.search_incidents("checkout", since=T0 - timedelta(days=30))
    assert (incident.helpful, incident.wrong, incident.corrections) == (1, 2, ("it was DNS, not the deploy",))
    assert incident.disputed
    listed = {i.run_id: i for i in await remembered.memory.incidents()}
    assert (listed["r-db"].helpful, listed["r-db"].wrong, listed["r-db"].corrections) == (0, 0, ())


async def test_forgetting_is_for_good_and_backfill_finds_only_runs_never_remembered(
    store: RunStore, clock: ManualClock
) -> None:
    for number, run_id in enumerate(("r1", "r2", "r3"), 1):
        await finished_run(store, run_id, number)
    await store.runs.create_run(a_run("r4", thread_ts="1700000000.000044"))  # still running: not yet
    assert [run.run_id for run in await store.memory.runs_to_remember()] == ["r1", "r2", "r3"]
    assert await store.memory.remember_incident(an_incident("r1", "checkout 5xx"))
    assert await store.memory.forget_incident("r2")
    assert [run.run_id for run in await store.memory.runs_to_remember()] == ["r3"]
    assert not await store.memory.remember_incident(an_incident("r2", "checkout 5xx")), "forgotten on purpose"
    assert await store.memory.forget_incident("r1")
    assert await store.memory.incidents() == []
    assert await store.memory.search_incidents("checkout", since=T0 - timedelta(days=9)) == []
    assert not await store.memory.forget_incident("nope")


async def test_texts_are_redacted_when_remembered(store: RunStore) -> None:
    await finished_run(store, "r1", 1)
    await store.memory.remember_incident(
        an_incident(
            "r1",
            "checkout down, token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            summary="password=hunter2hunter2 was in the log",
        )
    )
    (incident,) = await store.memory.incidents()
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in incident.task
    assert "hunter2hunter2" not in incident.summary


@pytest.mark.parametrize(
    "query",
    ['"', "checkout OR", "NEAR(checkout)", "check*", "a:b", "it's & | ! ( ) <-> :*", "checkout -5xx", "'; DROP TABLE"],
)
async def test_a_query_is_words_never_search_syntax(remembered: RunStore, query: str) -> None:
    found = await remembered.memory.search_incidents(query, since=T0 - timedelta(days=30))
    assert all(incident.run_id in {"r-deploy", "r-db", "r-disk"} for incident in found)
    assert await remembered.memory.search_incidents("?!", since=T0 - timedelta(days=30)) == []
