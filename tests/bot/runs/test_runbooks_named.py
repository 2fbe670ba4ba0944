"""Every entry point names the runbooks that may apply in the run's first turn: a Slack mention and an alert.

The header and the final message show what was asked, never the note; the model reads ids and titles, not bodies.
"""

from __future__ import annotations

import json

from kernel import text_turn
from opsagent_tools.runbooks.library import RunbookLibrary, TextSource
from opsagent_tools.runbooks.tools import runbook_tools
from samples.runbooks import TEXTS
from testkit.fakes.slack_api import SlackFake
from testkit.slack_bot import USERS, IncidentBot, running_app
from worlds.alert_bot import ALERTNAME, alert, notification, running_alert_bot


async def test_a_slack_mention_names_the_runbook_and_the_run_reads_it(run_store):
    library = RunbookLibrary(TextSource(TEXTS))
    script = [
        [
            text_turn("read_runbook", "Known: a runbook applies.", id="orders/5xx"),
            text_turn("finish", answer="Runbook orders/5xx (step 1): https://grafana.example/d/orders"),
        ]
    ]
    incident = IncidentBot(script)
    for tool in runbook_tools(library):
        incident.tools.add(tool)
    async with SlackFake(users=USERS) as slack, running_app(slack, incident, run_store, runbooks=library) as harness:
        ts = await harness.mention("order-service 5xx at 12%, find the root cause")
        verdict = await harness.ended(ts)
        thread = harness.thread(ts)
    first = harness.models[0].requests[0].messages[0].content
    assert "[orders/5xx]" in first
    assert "BODY-SECRET-STEPS" not in first
    step = json.dumps(thread[2].blocks)
    assert "read_runbook orders/5xx" in step
    assert "BODY-SECRET-STEPS" not in step, "the runbook's text stays in the viewer and the trace"
    assert "BODY-SECRET-STEPS" in harness.models[0].requests[1].messages[-1].content, "the model read it"
    first_summary = verdict.edits[0]["text"]
    assert first_summary == "🔎 Investigating: order-service 5xx at 12%, find the root cause", (
        "the summary shows what was asked, not the note"
    )
    assert "Runbooks that may apply" not in json.dumps([verdict.blocks, verdict.edits])
    assert "https://grafana.example/d/orders" in json.dumps(verdict.blocks), "the answer, in the verdict"


async def test_an_alert_names_the_runbook_for_its_alert_name():
    library = RunbookLibrary(TextSource(TEXTS))
    script = [[text_turn("finish", answer="done")]]
    async with running_alert_bot(script, runbooks=library) as bot:
        status, _ = await bot.notify(notification(alert("fp-1")))
        assert status == 200
        await bot.until(lambda: bot.incident.models and bot.incident.models[0].requests, "the run asks the model")
    first = bot.incident.models[0].requests[0].messages[0].content
    assert f"matches the alert {ALERTNAME}, the service order-service" in first
