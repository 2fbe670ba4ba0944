"""The change timeline's Prometheus sources: a build-info metric taking a new version, and alerts that fired."""

from __future__ import annotations

from datetime import timedelta

from opsagent_tools.changes import ChangeQuery
from opsagent_tools.links import LinkSettings
from opsagent_tools.metrics.changes import AlertChanges, VersionChanges, grid_step, runs, selector
from opsagent_tools.metrics.files import FileMetricsClient, write_series
from opsagent_tools.metrics.links import MetricLinks
from opsagent_tools.metrics.prometheus import PrometheusClient
from samples.change_history import described, window
from samples.kube_objects import NOW
from testkit.servers.prometheus import PrometheusServer


def versions(client, **overrides) -> VersionChanges:
    options = {"metric": ".+_build_info", "version_label": "version", "service_label": "service", "links": None}
    return VersionChanges(client, **(options | overrides))


async def test_a_new_version_label_is_a_change(prometheus: PrometheusServer):
    client = PrometheusClient(base_url=prometheus.url)
    now = prometheus.anchor
    hour = await versions(client).read(window(now, timedelta(hours=1)))
    assert described(hour, now) == [("0:12:00", "order-service version v2.13.2 → v2.14.0 (app_build_info)")]
    assert hour.covered == '{__name__=~".+_build_info"}: versions of 3 services'
    two = await versions(client, metric="app_build_info").read(window(now, timedelta(hours=2), "inventory-service"))
    assert described(two, now) == [("1:30:00", "inventory-service version v3.1.0 → v3.2.0 (app_build_info)")]
    assert two.covered == 'app_build_info{service="inventory-service"}: versions of 1 service'


async def test_versions_without_the_label_or_the_metric_read_as_nothing(prometheus: PrometheusServer):
    client = PrometheusClient(base_url=prometheus.url)
    now = prometheus.anchor
    unlabelled = await versions(client, version_label="release").read(window(now, timedelta(hours=1)))
    assert (unlabelled.changes, unlabelled.covered) == ([], '{__name__=~".+_build_info"}: versions of 0 services')
    absent = await versions(client, metric="nope_build_info").read(window(now, timedelta(hours=1)))
    assert absent.changes == []


async def test_a_rollback_to_an_earlier_version_is_a_change_too(tmp_path):
    def every_15s(start_s: int, stop_s: int) -> list[tuple[float, float]]:
        return [(NOW.timestamp() - t, 1.0) for t in range(start_s, stop_s, -15)]

    old = every_15s(3600, 1200) + every_15s(600, -15)  # rolled back 10 minutes ago
    new = every_15s(1200, 600)  # the replaced version lingers 5 minutes in Prometheus' lookback: a run still
    write_series(tmp_path / "m.jsonl", [
        ("checkout_build_info", {"service": "checkout", "version": "v3.8.0"}, old),
        ("checkout_build_info", {"service": "checkout", "version": "v3.9.0"}, new),
    ])  # fmt: skip
    recorded = await versions(FileMetricsClient(tmp_path / "m.jsonl")).read(window(NOW, timedelta(hours=1)))
    assert described(recorded, NOW) == [
        ("0:10:00", "checkout version v3.9.0 → v3.8.0 (checkout_build_info)"),
        ("0:20:00", "checkout version v3.8.0 → v3.9.0 (checkout_build_info)"),
    ]


async def test_alerts_that_fired_in_the_window(prometheus: PrometheusServer):
    client = PrometheusClient(base_url=prometheus.url)
    now = prometheus.anchor
    alerts = AlertChanges(client, "service", MetricLinks(LinkSettings(), f"{prometheus.url}/"))
    result = await alerts.read(window(now, timedelta(hours=1)))
    assert described(result, now) == [
        ("0:08:00", 'OrderService5xxBurnRate{service="order-service",severity="page"} started firing, still firing'),
        (
            "0:50:00",
            'PaymentServiceLatencyHigh{service="payment-service",severity="warning"} started firing, '
            "last seen firing t-35m",
        ),
    ]
    moment = now.strftime("%Y-%m-%d%%20%H%%3A%M%%3A%S")
    assert result.changes[0].link == (
        f"{prometheus.url}/graph?g0.expr=ALERTS%7Balertname%3D%22OrderService5xxBurnRate%22%7D&g0.tab=0"
        f"&g0.range_input=1h&g0.end_input={moment}&g0.moment_input={moment}"
    )
    pending_only = await alerts.read(ChangeQuery(None, now - timedelta(minutes=10), now - timedelta(minutes=9)))
    assert pending_only.changes == [], "a pending alert has not fired"


def test_the_query_grid_and_its_runs():
    assert [grid_step(s) for s in (300, 3600, 7200, 86400, 7 * 86400)] == [15, 15, 30, 600, 3600]
    assert runs([0, 15, 30, 90, 105], 15) == [(0, 30), (90, 105)]
    assert selector("app_build_info", {"service": 'we"ird'}) == 'app_build_info{service="we\\"ird"}'
    assert selector(".+_build_info", {}) == '{__name__=~".+_build_info"}'
