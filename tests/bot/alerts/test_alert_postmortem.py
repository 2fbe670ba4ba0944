"""An alert-started investigation carries what a postmortem needs: its alerts' labels on the run, when they fired
and resolved in the audit log (the impact window), and, once the group resolves, a one-line offer to draft it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bot.drafts.facts import gather_facts
from bot.drafts.narrative import Narrative
from bot.drafts.postmortem import render_postmortem
from bot.slack.alert_blocks import POSTMORTEM_OFFER
from bot.slack.thread_history import ThreadHistory
from testkit.slack_bot import CHANNEL, FINISH
from worlds.alert_bot import ALERTNAME, alert, notification, running_alert_bot

RUN = [FINISH]


async def test_a_resolved_alert_offers_the_postmortem_and_its_window_is_recorded(script: list[list[Any]]) -> None:
    script.append(RUN)
    async with running_alert_bot(script) as bot:
        await bot.notify(notification(alert("fp-1")))
        [top] = await bot.until(lambda: bot.alert_threads(), "the alert's thread")
        await bot.until(lambda: bot.trace(top.ts), "the run's trace")
        await bot.notify(notification(alert("fp-1", status="resolved")))
        resolved = await bot.until(
            lambda: next((m for m in bot.thread(top.ts) if m.text.startswith("✅ Resolved")), None), "resolved"
        )
        store = bot.services.store
        record = await store.runs.run_in_thread(CHANNEL, top.ts)
        facts = await gather_facts(
            record, ThreadHistory(()), audit=store.audit, side_effects=store.side_effects, feedback=store.feedback
        )
    assert POSTMORTEM_OFFER in str(resolved.blocks)
    assert record.alert_labels[0]["alertname"] == ALERTNAME
    kinds = [event.kind for event in facts.audit]
    assert (kinds.count("alert_fired"), kinds.count("alert_resolved")) == (1, 1)
    assert facts.started_at == datetime(2026, 11, 30, 5, 40, tzinfo=UTC)
    assert facts.resolved_at == datetime(2026, 11, 30, 6, 10, tzinfo=UTC)
    markdown = render_postmortem(facts, Narrative(problem="no model is configured"), now=datetime.now(UTC))
    assert "- **Start:** 2026-11-30 05:40:00 UTC, when the first alert started firing." in markdown
    assert "- **End:** 2026-11-30 06:10:00 UTC, when the alert resolved." in markdown
    assert "- **Duration:** 30 minutes." in markdown
    assert f"Alertmanager opened the investigation: alertname={ALERTNAME}" in markdown
    assert f"# Postmortem draft: {ALERTNAME}" in markdown
