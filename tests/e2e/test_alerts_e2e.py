"""Issue 6's done criterion: a rule fires in the REAL Prometheus on backfilled data, the REAL Alertmanager calls
the bot's `POST /alertmanager` with its bearer token, and the investigation thread appears in the fake Slack;
Alertmanager's re-sends open no second thread, and when the alert resolves the thread says so and the run stops.

How the rule sees the data: the incident series are backfilled up to "now" (testkit/servers/prometheus.py), and
the rule takes the 5xx ratio over the last 10 minutes, all of it after order-service's jump to 12% (which
began 10.5 minutes before the data ends). Rules are evaluated at the wall clock, so the rule holds for about
9 minutes after the backfill, far longer than the test needs; `for: 2s` with 1 s evaluations makes it pass
through pending to firing; Prometheus re-sends every 2 s (see RESEND). Alertmanager waits 1 s (group_wait)
and calls the bot, then re-sends the group every 2 s (repeat_interval). To resolve, the rule is removed and
Prometheus reloaded: it stops sending, and Alertmanager resolves the alert once its end time (4 resend delays)
passes. Nothing asserts on time: the waits are generous and end as soon as the state is there.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from pathlib import Path

import httpx
import pytest

from bot.alerts.payload import ALERT_TASK
from kernel import text_turn
from testkit.fakes.slack_workspace import Message
from testkit.servers.alertmanager import running_alertmanager
from testkit.servers.prometheus import incident_prometheus
from testkit.slack_bot import FINISH
from worlds.alert_bot import ALERTNAME, TOKEN, AlertBot, running_alert_bot

SLOW_RUN = [text_turn("slow", "Waiting for more data.", seconds=300), FINISH]
"""The run is still going when the alert resolves, so the resolve must stop it."""
WEBHOOK_NOTIFICATIONS = re.compile(r'^alertmanager_notifications_total\{[^}]*integration="webhook"[^}]*\} (\S+)$', re.M)
RESEND = "2s"
"""Prometheus re-sends firing alerts this often (default 1m). Its first send can precede its discovery of the
Alertmanager (the alert is then dropped), so without this the thread would wait for the next send."""
RULES = """\
groups:
  - name: opsagent-e2e
    interval: 1s
    rules:
      - alert: OrderService5xxHigh
        expr: |
          sum by (service) (rate(http_requests_total{code="500"}[10m]))
            / sum by (service) (rate(http_requests_total[10m])) > 0.05
        for: 2s
        labels:
          severity: critical
        annotations:
          summary: "{{ $labels.service }} answers {{ $value | humanizePercentage }} of requests with 5xx"
          description: "The 5xx ratio over 10 minutes is above 5%."
"""


def prometheus_config(rules: Path | None, alertmanager_url: str) -> str:
    target = alertmanager_url.removeprefix("http://")
    return f"""\
global:
  scrape_interval: 15s
  evaluation_interval: 1s
rule_files: [{f'"{rules}"' if rules else ""}]
alerting:
  alertmanagers:
    - static_configs:
        - targets: ["{target}"]
scrape_configs: []
"""


def alertmanager_config(receiver_url: str, token_file: Path) -> str:
    return f"""\
route:
  receiver: opsagent
  group_by: [alertname]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 2s
receivers:
  - name: opsagent
    webhook_configs:
      - url: {receiver_url}
        send_resolved: true
        http_config:
          authorization:
            type: Bearer
            credentials_file: {token_file}
"""


async def diagnosis(prometheus_url: str, alertmanager_url: str, root: Path) -> str:
    """What Prometheus and Alertmanager hold, and their logs: for a failure message that says where it stopped."""
    parts = []
    async with httpx.AsyncClient(timeout=5) as http:
        for name, url in (
            ("prometheus", f"{prometheus_url}/api/v1/alerts"),
            ("alertmanager", f"{alertmanager_url}/api/v2/alerts"),
        ):
            with contextlib.suppress(httpx.HTTPError):
                parts.append(f"{name} alerts: {(await http.get(url)).text[:2000]}")
    return "\n\n".join([*parts, *await asyncio.to_thread(log_tails, root)])


def log_tails(root: Path) -> list[str]:
    return [f"{log.name}:\n{log.read_text()[-3000:]}" for log in sorted(root.rglob("*.log"))]


async def notifications_sent(alertmanager_url: str) -> float:
    """How many webhook notifications Alertmanager has sent (its own counter)."""
    async with httpx.AsyncClient(timeout=5) as http:
        text = (await http.get(f"{alertmanager_url}/metrics")).text
    return sum(float(value) for value in WEBHOOK_NOTIFICATIONS.findall(text))


async def test_a_rule_firing_in_prometheus_opens_a_thread_that_alertmanager_resolves(tmp_path: Path) -> None:
    token_file = tmp_path / "alertmanager-token"
    token_file.write_text(f"{TOKEN}\n")  # as `openssl rand -hex 32 > file` writes it
    rules = tmp_path / "rules.yml"
    rules.write_text(RULES)
    (tmp_path / "am").mkdir()
    (tmp_path / "prom").mkdir()
    async with running_alert_bot([SLOW_RUN]) as bot:
        with contextlib.ExitStack() as servers:
            am_config = alertmanager_config(bot.receiver_url, token_file)
            alertmanager = running_alertmanager(tmp_path / "am", am_config)
            alertmanager_url = await asyncio.to_thread(servers.enter_context, alertmanager)
            prom_config = prometheus_config(rules, alertmanager_url)
            flags = [f"--rules.alert.resend-delay={RESEND}", "--web.enable-lifecycle"]
            prometheus = await asyncio.to_thread(
                servers.enter_context, incident_prometheus(tmp_path / "prom", prom_config, flags)
            )
            try:
                [top] = await bot.until(bot.alert_threads, "the alert's thread in the channel", within=120)
                await bot.until(lambda: bot.services.investigations.active, "the alert's run is going", within=30)
                async with asyncio.timeout(60):
                    while await notifications_sent(alertmanager_url) < 3:  # noqa: ASYNC110 - another process
                        await asyncio.sleep(0.5)
                assert len(bot.alert_threads()) == 1, "Alertmanager's re-sends opened another thread"
                # The rule goes away: Prometheus stops sending, Alertmanager resolves the alert when it expires.
                (tmp_path / "prom" / "prometheus.yml").write_text(prometheus_config(None, alertmanager_url))
                async with httpx.AsyncClient(timeout=10) as http:
                    (await http.post(f"{prometheus.url}/-/reload")).raise_for_status()
                trace = await bot.until(lambda: bot.trace(top.ts), "the run stopped by the resolve", within=120)
            except TimeoutError:
                pytest.fail(await diagnosis(prometheus.url, alertmanager_url, tmp_path), pytrace=False)
            await asyncio.to_thread(servers.close)
    assert_thread_tells_the_alert(bot, top, trace)


def assert_thread_tells_the_alert(bot: AlertBot, top: Message, trace: dict) -> None:
    assert top.text.startswith(f"🚨 {ALERTNAME} is firing")
    shown = str(top.blocks)
    assert "order-service answers 12% of requests with 5xx" in shown
    assert "*Severity:* critical" in shown
    assert "/graph?g0.expr=" in shown
    assert trace["task"] == ALERT_TASK
    assert trace["task_data"].startswith(f"Alert group {ALERTNAME} (severity critical).")
    assert "service=order-service" in trace["task_data"]
    assert trace["stop_reason"] == "cancelled"
    texts = [m.text for m in bot.thread(top.ts)]
    assert bot.thread(top.ts)[1].edits[0]["text"] == f"🔎 Investigating: {ALERTNAME} firing (Alertmanager)"
    assert f"✅ Resolved: Alertmanager reports {ALERTNAME} resolved" in texts
    assert any(text.startswith("⏹ *Stopped by alertmanager* after 1 step") for text in texts), "one reply at the end"
    assert not any(m.reply_broadcast for m in bot.thread(top.ts)), "an alert's thread is at the channel's top already"
    assert len(bot.alert_threads()) == 1
