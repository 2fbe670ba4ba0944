"""`similar_incidents` words every past incident as a hypothesis to re-check, shows its feedback and age, marks a
verdict rated wrong with its correction, links the threads, and says when nothing matches."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kernel import (
    DEFAULT_REDACTOR,
    CallContext,
    Confidence,
    Dispatcher,
    RunControl,
    SideEffectPolicy,
    StopReason,
    ToolCall,
    ToolRegistry,
)
from opsagent_tools.memory import PastIncident, similar_incidents_tool

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


class Remembered:
    """A memory holding a fixed list of incidents (the bot's run store is the real one, tested with its stores)."""

    def __init__(self, incidents: list[PastIncident]) -> None:
        self.incidents = incidents
        self.asked: list[tuple[str, str | None, int]] = []

    async def similar_incidents(self, query: str, *, service: str | None = None, limit: int = 5) -> list[PastIncident]:
        self.asked.append((query, service, limit))
        return [i for i in self.incidents if service is None or service in i.services][:limit]


DEPLOY = PastIncident(
    run_id="r-deploy",
    task="checkout 5xx at 12%",
    services=("checkout",),
    labels=("alertname=CheckoutHigh5xx",),
    summary="Checkout failed after the v2.14.0 deploy.",
    root_cause="v2.14.0 dropped the payments timeout.",
    confidence=Confidence.CONFIRMED,
    outcome=StopReason.FINISH,
    finished_at=NOW - timedelta(days=12),
    thread_url="https://acme.slack.com/archives/C1/p1700000000000100",
    helpful=1,
    wrong=2,
    corrections=("it was DNS, not the deploy",),
)
STOPPED = PastIncident(
    run_id="r-stopped",
    task="checkout slow",
    services=("checkout",),
    summary="Maybe the database.",
    outcome=StopReason.CANCELLED,
    finished_at=NOW - timedelta(hours=3),
    helpful=2,
)


async def call(memory: Remembered, **args: object):
    registry = ToolRegistry([similar_incidents_tool(memory, now=lambda: NOW)])
    dispatcher = Dispatcher(
        registry, policy=SideEffectPolicy(), confirm=None, redactor=DEFAULT_REDACTOR, control=RunControl()
    )
    request = ToolCall(name="similar_incidents", args=args)
    return await dispatcher.dispatch(request, CallContext(run_id="r-now", step=1, call=request))


async def test_past_causes_are_hypotheses_with_feedback_age_and_a_link():
    memory = Remembered([DEPLOY, STOPPED])
    outcome = await call(memory, query="checkout 5xx", service="checkout", limit=3)
    assert memory.asked == [("checkout 5xx", "checkout", 3)]
    text = outcome.text
    assert "hypothesis to re-check against this incident's own evidence, never a conclusion" in text
    assert "1. 12 days ago (2026-11-18 12:00 UTC), run r-deploy: asked 'checkout 5xx at 12%'" in text
    assert (
        "its root cause, a hypothesis to re-check now: v2.14.0 dropped the payments timeout. (confidence then: confirmed)"
        in text
    )
    assert (
        "feedback: rated helpful by 1, wrong by 2: its answer was judged WRONG, do not reuse its root cause; "
        "the correction: 'it was DNS, not the deploy'"
    ) in text
    assert "thread: https://acme.slack.com/archives/C1/p1700000000000100" in text
    assert "2. 3 h ago" in text
    assert "it ended without an answer (cancelled)" in text
    assert "its last word, unchecked: Maybe the database." in text
    assert outcome.headline == "2 past incidents like this; closest 12 days ago (its answer was rated wrong)"
    assert [(link.label, link.url) for link in outcome.links] == [("past incident 12 days ago", DEPLOY.thread_url)]


async def test_nothing_remembered_says_so_and_a_query_without_words_is_refused():
    outcome = await call(Remembered([]), query="checkout 5xx", service="checkout")
    assert outcome.text.startswith("No remembered incident of service checkout matches 'checkout 5xx'.")
    refused = await call(Remembered([DEPLOY]), query="?!")
    assert refused.error is not None
    assert "has no words" in refused.text
