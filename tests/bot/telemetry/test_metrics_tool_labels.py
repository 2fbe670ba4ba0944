"""`/metrics` labels tools by the registry, not by what the model wrote: any number of invented names count as
`unknown`, and a real tool keeps its own label however many came before it. Over real HTTP, after real runs."""

from __future__ import annotations

import pytest

from bot.telemetry.metrics import BotMetrics
from kernel import native_turn, text_turn
from testkit.fakes.prometheus_scrape import parse_samples, sample
from testkit.slack_bot import FINISH

INVENTED = 120
"""More made-up names than any label budget would keep."""
KINDS = ("bad_args", "not_run")


@pytest.fixture
def app_options(incident_bot):
    metrics = BotMetrics(tools=incident_bot.tools)
    return {"observers": [metrics], "prepare": metrics.attach}


async def test_only_registered_tools_are_labels_however_many_names_the_model_invents(harness, script) -> None:
    invented = native_turn(*((f"made_up_tool_{n}", "{not json") for n in range(INVENTED)))
    script.extend([[invented, "What I know: nothing."], [text_turn("query_metrics", service="order-service"), FINISH]])
    first = await harness.mention("why 5xx?")
    await harness.until(lambda: harness.reacted(first, "x"), "the first run ends, stuck on bad calls", within=30)
    second = await harness.mention("why 5xx, again?")
    await harness.until(lambda: harness.reacted(second, "white_check_mark"), "the second run ends")
    async with harness.http.get(f"{harness.url}/metrics") as response:
        samples = parse_samples(await response.text())
    unknown = {kind: sample(samples, "opsagent_tool_errors_total", tool="unknown", kind=kind) for kind in KINDS}
    assert unknown == {"bad_args": 20, "not_run": INVENTED - 20}, "20 steps in the budget, the rest not run"
    assert sample(samples, "opsagent_step_duration_seconds_count", tool="query_metrics") == 1
    labelled = {dict(labels).get("tool") for (_, labels) in samples}
    assert labelled <= {None, "unknown", "query_metrics", "finish"}
