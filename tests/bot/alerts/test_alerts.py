"""`POST /alertmanager` over real HTTP: firing groups open threads and runs, re-sends are ignored, new alerts
get a note, resolved groups are closed and their runs stopped; bad tokens and bodies are refused.

The bot is wired as `opsagent serve` wires it (tests/worlds/alert_bot.py), Slack is the fake Web API server and
the model a strict scripted one. Notifications are handled one at a time in arrival order, so a later
"marker" group whose thread has appeared proves an earlier notification was handled (no sleeping).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bot.alerts.payload import AlertGroup, thread_facts
from bot.alerts.settings import TOKEN_ENV, AlertmanagerSettings, alertmanager_token
from bot.settings import Settings
from bot.slack.alert_blocks import alert_opened, alert_resolved, alerts_joined
from bot.slack.blocks import FALLBACK_CHARS
from kernel import text_turn
from testkit.fakes.block_kit import check_blocks
from testkit.slack_bot import CHANNEL, FINISH
from worlds.alert_bot import ALERTNAME, GROUP_KEY, STARTED, TOKEN, AlertBot, alert, notification, running_alert_bot

QUICK_RUN = [text_turn("query_metrics", "Known: nothing.", service="order-service"), FINISH]
SLOW_RUN = [text_turn("slow", "Waiting for more data.", seconds=120), FINISH]


def marker() -> dict:
    """Another group: once its thread is there, everything sent before it has been handled."""
    return notification(alert("marker-1"), group_key='{}:{alertname="Marker"}', alertname="Marker")


@pytest.fixture
async def bot(script: list[list[Any]]):
    async with running_alert_bot(script) as running:
        yield running


async def opened(bot: AlertBot, count: int) -> list[Any]:
    """Wait until `count` alert threads are open; all of them."""
    return await bot.until(lambda: len(bot.alert_threads()) >= count and bot.alert_threads(), f"{count} threads")


async def test_a_firing_group_opens_a_thread_and_starts_an_investigation(bot: AlertBot, script) -> None:
    script.append(QUICK_RUN)
    status, answer = await bot.notify(notification(alert("fp-1")))
    assert (status, answer) == (200, {"ok": True, "group_key": GROUP_KEY, "status": "firing"})
    [top] = await opened(bot, 1)
    assert top.text.startswith(f"🚨 {ALERTNAME} is firing")
    shown = str(top.blocks)
    assert "order-service answers 12% of requests with 5xx" in shown
    assert "*Severity:* critical" in shown
    assert "<http://prometheus:9090/graph?g0.expr=rate%28http_requests_total%5B5m%5D%29&amp;g0.tab=1|source>" in shown
    trace = await bot.until(lambda: bot.trace(top.ts), "the run's trace in the thread", within=20)
    assert trace["stop_reason"] == "finish"
    assert f"{ALERTNAME}" in trace["task_data"]
    assert "pod=order-service-abcde" in trace["task_data"]
    summary = await bot.until(lambda: bot.verdict(top.ts), "the summary shows the verdict (its last update)")
    assert summary.edits[0]["text"] == f"🔎 Investigating: {ALERTNAME} firing (Alertmanager)", "the summary, first"
    first_request = bot.incident.models[0].requests[0]
    assert f"firing since {STARTED.replace('Z', '+00:00')}" in first_request.messages[0].content


async def test_a_resent_group_opens_no_second_thread_and_posts_nothing(bot: AlertBot, script) -> None:
    script += [QUICK_RUN, QUICK_RUN]
    await bot.notify(notification(alert("fp-1")))
    [first] = await opened(bot, 1)
    await bot.until(lambda: bot.trace(first.ts), "the first run ends")
    await bot.until(lambda: bot.verdict(first.ts), "its summary shows the verdict")  # the last update of the thread
    before = [m.text for m in bot.thread(first.ts)]
    status, _ = await bot.notify(notification(alert("fp-1")))
    assert status == 200
    await bot.notify(marker())
    threads = await opened(bot, 2)
    assert [m.text.split(" is firing")[0] for m in threads] == [f"🚨 {ALERTNAME}", "🚨 Marker"]
    assert [m.text for m in bot.thread(first.ts)] == before
    # The marker's run builds its model when it starts: once it has ended, a run the re-send started would have too.
    await bot.until(lambda: bot.trace(threads[1].ts), "the marker's run ends")
    assert len(bot.incident.models) == 2


async def test_a_resend_and_the_resolve_that_reach_another_replica_find_the_groups_thread(
    bot: AlertBot, script
) -> None:
    script += [SLOW_RUN, QUICK_RUN]
    await bot.notify(notification(alert("fp-1")))
    [first] = await opened(bot, 1)
    await bot.until(lambda: bot.services.investigations.active, "the run is going on the first replica")
    async with running_alert_bot(script, shared=bot) as other:
        assert (await other.notify(notification(alert("fp-1"))))[0] == 200
        await other.notify(marker())
        await opened(bot, 2)  # the marker's thread: the re-send before it opened none
        assert (await other.notify(notification(alert("fp-1", status="resolved"))))[0] == 200
        await bot.until(lambda: any(m.text.startswith("✅") for m in bot.thread(first.ts)), "the resolve")
        trace = await bot.until(lambda: bot.trace(first.ts), "the stopped run's trace", within=20)
    assert trace["stop_reason"] == "cancelled"
    assert not any(m.text.startswith("♻️") for m in bot.thread(first.ts))  # the run stayed with its replica
    assert len(bot.alert_threads()) == 2


async def test_new_alerts_joining_a_group_get_a_note_in_its_thread(bot: AlertBot, script) -> None:
    script += [SLOW_RUN, QUICK_RUN]
    await bot.notify(notification(alert("fp-1")))
    [first] = await opened(bot, 1)
    await bot.notify(notification(alert("fp-1"), alert("fp-2", pod="order-service-fghij")))
    note = await bot.until(
        lambda: [m for m in bot.thread(first.ts) if m.text.startswith("➕ 1 more alert")], "the note on the new alert"
    )
    assert "pod=order-service-fghij" in str(note[0].blocks)
    await bot.notify(notification(alert("fp-1"), alert("fp-2", pod="order-service-fghij")))
    await bot.notify(marker())
    await opened(bot, 2)
    assert len([m for m in bot.thread(first.ts) if m.text.startswith("➕")]) == 1
    assert len(bot.alert_threads()) == 2


async def test_a_resolved_group_is_announced_and_its_run_stopped(bot: AlertBot, script) -> None:
    script += [SLOW_RUN, QUICK_RUN]
    await bot.notify(notification(alert("fp-1")))
    [first] = await opened(bot, 1)
    await bot.until(lambda: bot.services.investigations.active, "the run is going")
    status, answer = await bot.notify(notification(alert("fp-1", status="resolved")))
    assert (status, answer["status"]) == (200, "resolved")
    trace = await bot.until(lambda: bot.trace(first.ts), "the stopped run's trace", within=20)
    assert trace["stop_reason"] == "cancelled"
    texts = [m.text for m in bot.thread(first.ts)]
    [resolved] = [
        m for m in bot.thread(first.ts) if m.text == f"✅ Resolved: Alertmanager reports {ALERTNAME} resolved"
    ]
    assert f"resolved at <!date^{int(datetime(2026, 11, 30, 6, 10, tzinfo=UTC).timestamp())}^" in str(resolved.blocks)
    assert any(text.startswith("⏹ *Stopped by alertmanager* after 1 step") for text in texts), "one reply at the end"
    assert not any(m.reply_broadcast for m in bot.thread(first.ts)), "an alert's thread is at the channel's top already"
    assert not bot.services.investigations.active
    await bot.notify(notification(alert("fp-1")))
    second = (await opened(bot, 2))[1]
    assert second.text.startswith(f"🚨 {ALERTNAME} is firing")


async def test_a_resolved_group_the_bot_never_saw_posts_nothing(bot: AlertBot, script) -> None:
    script.append(QUICK_RUN)
    status, _ = await bot.notify(notification(alert("fp-9", status="resolved")))
    assert status == 200
    await bot.notify(marker())
    [only] = await opened(bot, 1)
    assert only.text.startswith("🚨 Marker is firing")


@pytest.mark.parametrize("token", [None, "wrong-token-0123456789abcdef", ""])
async def test_a_missing_or_wrong_token_is_refused_and_nothing_is_posted(bot: AlertBot, token) -> None:
    status, answer = await bot.notify(notification(alert("fp-1")), token=token)
    assert status == 401
    assert answer["ok"] is False
    assert f"Authorization: Bearer <{TOKEN_ENV}>" in answer["error"]
    async with bot.http.post(bot.receiver_url, data=b"{}", headers={"Authorization": f"Basic {TOKEN}"}) as response:
        assert response.status == 401
    assert bot.slack.calls_to("chat.postMessage") == []


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (b"{not json", "(body): Invalid JSON"),
        ({**notification(alert("fp-1")), "version": "3"}, "version: Input should be '4'"),
        ({**notification(alert("fp-1")), "alerts": []}, "alerts: List should have at least 1 item"),
        (notification({k: v for k, v in alert("fp-1").items() if k != "fingerprint"}), "alerts.0.fingerprint: Field"),
        ({**notification(alert("fp-1")), "status": "pending"}, "status: Input should be 'firing' or 'resolved'"),
    ],
)
async def test_a_malformed_payload_is_refused_naming_the_problem(bot: AlertBot, body, named) -> None:
    status, answer = await bot.notify(body)
    assert status == 400
    assert answer["error"].startswith("not an Alertmanager webhook payload (version 4): ")
    assert named in answer["error"]
    assert bot.slack.calls_to("chat.postMessage") == []


async def test_alert_text_is_escaped_and_redacted_before_slack_and_the_model(bot: AlertBot, script) -> None:
    script.append(QUICK_RUN)
    hostile = alert(
        "fp-1", summary="<!channel> pay now <http://evil.example|here>", description="password=hunter2hunter2"
    )
    await bot.notify(notification(hostile))
    [top] = await opened(bot, 1)
    shown = str(top.blocks)
    assert "&lt;!channel&gt;" in shown
    assert "<!channel>" not in shown
    assert "<http://evil.example" not in shown
    trace = await bot.until(lambda: bot.trace(top.ts), "the run ends")
    assert "hunter2hunter2" not in shown
    assert "hunter2hunter2" not in trace["task_data"]
    assert "password=" in trace["task_data"]


async def test_credentials_in_the_alert_urls_reach_neither_slack_the_model_the_trace_nor_the_store(
    bot: AlertBot, script
) -> None:
    script.append(QUICK_RUN)
    body = notification(alert("fp-1"))
    body["externalURL"] = "https://admin:Am-p4ss#1@alertmanager.example:9093"
    body["alerts"][0]["generatorURL"] = "https://prometheus.example/graph?g0.expr=up&access_token=tok3nV4lue99"
    await bot.notify(body)
    [top] = await opened(bot, 1)
    trace = await bot.until(lambda: bot.trace(top.ts), "the run ends")
    record = await bot.services.store.runs.get_run(trace["run_id"])
    asked = "".join(m.content for m in bot.incident.models[0].requests[0].messages)
    seen = {"slack": top.text + str(top.blocks), "model": asked, "trace": trace["task"], "store": record.task}
    for where, text in seen.items():
        assert "Am-p4ss" not in text, where
        assert "tok3nV4lue99" not in text, where
    assert "https://admin:[REDACTED:url_password]@alertmanager.example:9093" in seen["slack"]
    assert "access_token=[REDACTED:token]" in seen["model"]


def test_the_receiver_refuses_to_start_without_a_strong_token() -> None:
    with pytest.raises(ValueError, match=f"{TOKEN_ENV} is not set"):
        alertmanager_token({})
    with pytest.raises(ValueError, match="shorter than 16 characters"):
        alertmanager_token({TOKEN_ENV: "short"})
    assert alertmanager_token({TOKEN_ENV: f"  {TOKEN} "}) == TOKEN


def test_the_token_is_never_read_from_the_file_and_a_channel_is_required() -> None:
    with pytest.raises(ValueError, match=f"read from {TOKEN_ENV} only"):
        Settings(alertmanager={"channel": CHANNEL, "token": TOKEN})
    with pytest.raises(ValueError, match="channel"):
        Settings(alertmanager={})
    assert Settings(alertmanager={"channel": CHANNEL}).alertmanager == AlertmanagerSettings(channel=CHANNEL)


def test_a_huge_hostile_alert_group_still_fits_one_valid_message_each() -> None:
    alerts = [alert(f"fp-{i}", pod=f"{'p' * 400}-{i}", summary="s" * 5000, description="d" * 9000) for i in range(300)]
    body = notification(*alerts)
    body["commonAnnotations"] = {"summary": "<!here> " * 1000, "description": "`" * 9000}
    group = AlertGroup.model_validate(body)
    facts = thread_facts(group, group.firing)
    for message in (alert_opened(facts), alerts_joined(facts), alert_resolved(group.name, group.ended_at)):
        assert check_blocks(message.blocks) is None
        assert "<!here>" not in str(message.blocks)
        assert len(message.text) <= FALLBACK_CHARS
    assert "… and 290 more" in str(alert_opened(facts).blocks)
