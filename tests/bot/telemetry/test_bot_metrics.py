"""`GET /metrics` of the bot over real HTTP, after real runs: signed Slack traffic in, a fake Slack out, a scripted model.

Values are read with prometheus_client's own text parser from what the server sends, never from the registry.
"""

from __future__ import annotations

import json

import pytest

from bot.runs.active import ActiveRun
from bot.slack.action_ids import DENY, STOP
from bot.telemetry.metrics import BotMetrics
from kernel import Event, Pricing, text_turn
from testkit.fakes.prometheus_scrape import parse_samples, sample
from testkit.slack_bot import CHANNEL, FINISH, ROLLBACK, IncidentBot

PRICE = Pricing(input_per_mtok=3.0, output_per_mtok=15.0)


class ExplodingObserver:
    """An observer with a bug: the run must go on without it."""

    def __init__(self) -> None:
        self.calls = 0

    def observe(self, run: ActiveRun, event: Event) -> None:
        self.calls += 1
        raise RuntimeError("observer bug")


@pytest.fixture
def incident_bot(script):
    """The harness's bot, with a price for the scripted model so that cost is counted."""
    return IncidentBot(script, price=PRICE)


@pytest.fixture
def exploding() -> ExplodingObserver:
    return ExplodingObserver()


@pytest.fixture
def app_options(exploding, incident_bot):
    """The app observed by the failing observer and by the metrics, whose `/metrics` route it serves."""
    metrics = BotMetrics(tools=incident_bot.tools)
    return {"observers": [exploding, metrics], "prepare": metrics.attach}


async def scrape(harness):
    """Every sample `/metrics` serves over HTTP, parsed as Prometheus would."""
    async with harness.http.get(f"{harness.url}/metrics") as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        return parse_samples(await response.text())


async def test_a_run_with_a_tool_error_and_a_denied_action_is_counted(harness, script, exploding):
    script.append(
        [
            text_turn("query_metrics", "Known: nothing.", service="order-service"),
            text_turn("query_metrics", "Again, without a service."),  # bad arguments: a tool error
            ROLLBACK,
            FINISH,
        ]
    )
    before = await scrape(harness)
    assert sample(before, "opsagent_runs_started_total") == 0
    ts = await harness.mention("order-service 5xx at 12%, find the root cause")
    message, approval_id = await harness.until(lambda: harness.approval_message(ts), "an approval message")
    waiting = await scrape(harness)
    assert sample(waiting, "opsagent_runs_in_flight") == 1
    assert sample(waiting, "opsagent_runs_started_total") == 1
    await harness.click(DENY, approval_id, message.ts, ts)
    await harness.until(lambda: harness.reacted(ts, "white_check_mark"), "the run ends")
    trace = json.loads(next(f for f in harness.slack.files.values() if f.thread_ts == ts).content)

    after = await scrape(harness)
    assert sample(after, "opsagent_runs_in_flight") == 0
    assert sample(after, "opsagent_runs_finished_total", outcome="ok", stop_reason="finish") == 1
    assert sample(after, "opsagent_tool_errors_total", tool="query_metrics", kind="bad_args") == 1
    assert sample(after, "opsagent_tool_errors_total", tool="rollback_deployment", kind="denied") == 1
    assert sample(after, "opsagent_approvals_total", decision="denied") == 1
    assert sample(after, "opsagent_approvals_total", decision="approved") is None
    # only the call that ran is timed: not the one refused for its arguments, nor the denied one
    assert sample(after, "opsagent_step_duration_seconds_count", tool="query_metrics") == 1
    assert sample(after, "opsagent_step_duration_seconds_count", tool="rollback_deployment") is None
    usage = trace["usage"]
    assert usage["prompt_tokens"] > 0
    assert sample(after, "opsagent_llm_tokens_total", model="scripted", type="prompt") == usage["prompt_tokens"]
    assert sample(after, "opsagent_llm_tokens_total", model="scripted", type="completion") == usage["completion_tokens"]
    expected_cost = PRICE.cost(usage["prompt_tokens"], usage["completion_tokens"])
    assert sample(after, "opsagent_llm_cost_usd_total", model="scripted") == pytest.approx(expected_cost)
    assert exploding.calls > 0  # the failing observer saw every event and broke nothing


@pytest.mark.parametrize("slack_settings", [{"approval_ttl_s": 0.3}], indirect=True)
async def test_an_expired_approval_is_counted_as_expired(harness, script):
    script.append([ROLLBACK, FINISH])
    ts = await harness.mention("roll back order-service")
    await harness.until(lambda: harness.reacted(ts, "white_check_mark"), "the run ends after the expiry")
    samples = await scrape(harness)
    assert sample(samples, "opsagent_approvals_total", decision="expired") == 1
    assert sample(samples, "opsagent_approvals_total", decision="denied") is None


async def test_an_approval_of_a_stopped_run_is_counted_as_voided(harness, script):
    script.append([ROLLBACK])
    ts = await harness.mention("roll back order-service")
    await harness.until(lambda: harness.approval_message(ts), "an approval message")
    header = harness.thread(ts)[1]
    run_id = next(e["value"] for b in header.blocks for e in b.get("elements", []) if e.get("action_id") == STOP)
    await harness.click(STOP, run_id, header.ts, ts)
    await harness.until(lambda: harness.reacted(ts, "x"), "the run ends with ❌")
    samples = await scrape(harness)
    assert sample(samples, "opsagent_approvals_total", decision="voided") == 1
    assert sample(samples, "opsagent_runs_finished_total", outcome="failed", stop_reason="cancelled") == 1
    assert harness.executed == []


async def test_slack_errors_and_retries_are_counted_by_method(harness, script):
    script.append([FINISH])
    harness.slack.fail_next("reactions.add", status=500)  # retried by the client, then it lands
    harness.slack.fail_next("assistant.threads.setStatus", status=200, error="not_allowed_token_type")
    ts = await harness.mention("why 5xx?")
    await harness.until(lambda: harness.reacted(ts, "white_check_mark"), "the run ends")
    assert harness.reacted(ts, "eyes")  # the retry succeeded
    samples = await scrape(harness)
    assert sample(samples, "opsagent_slack_api_errors_total", method="reactions.add", error="fatal_error") == 1
    assert sample(samples, "opsagent_slack_api_retries_total", method="reactions.add", reason="server_error") == 1
    errors = sample(
        samples, "opsagent_slack_api_errors_total", method="assistant.threads.setStatus", error="not_allowed_token_type"
    )
    assert errors == 1
    assert (
        sample(samples, "opsagent_slack_api_retries_total", method="assistant.threads.setStatus", reason="server_error")
        is None
    )
    assert sample(samples, "opsagent_slack_api_errors_total", method="chat.postMessage", error="fatal_error") is None


async def test_an_unknown_tool_name_from_the_model_is_not_a_label(harness, script):
    script.append([text_turn("made_up_tool_7f3a", service="x"), FINISH])
    ts = await harness.mention("why 5xx?")
    await harness.until(lambda: harness.reacted(ts, "white_check_mark"), "the run ends")
    samples = await scrape(harness)
    assert sample(samples, "opsagent_tool_errors_total", tool="unknown", kind="unknown_tool") == 1
    assert not any("made_up_tool_7f3a" in str(labels) for _, labels in samples)
    assert CHANNEL not in json.dumps([list(labels) for _, labels in samples])  # no ids of any kind in labels
