"""What a person sees of a metric query: the one-line outcome with its sparkline, and the link to the same query in
Prometheus or Grafana, as dispatch records them; against the real Prometheus of the metrics tests."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
from hypothesis import given
from hypothesis import strategies as st

from kernel import DispatchResult, Tool
from opsagent_tools.links import LinkSettings
from opsagent_tools.metrics import MetricsSettings, metrics_tools
from opsagent_tools.metrics.files import FileMetricsClient, write_series
from opsagent_tools.metrics.headline import BARS, SPARK_CELLS, sparkline
from opsagent_tools.metrics.links import prometheus_duration
from testkit.servers.prometheus import PrometheusServer
from worlds.dispatch import dispatch_call

PASSWORD = "s3cr3t-prometheus-pass"


def tools_for(prometheus: PrometheusServer, links: LinkSettings | None = None, url: str | None = None) -> list[Tool]:
    return metrics_tools(MetricsSettings(url=url or prometheus.url), now=prometheus.now, links=links)


async def query(tools: list[Tool], **args: str) -> DispatchResult:
    result = await dispatch_call(tools, "query_metrics", **args)
    assert result.error is None, result.text
    return result


def query_of(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


async def test_a_jump_reads_as_before_after_when_and_a_sparkline(prometheus: PrometheusServer) -> None:
    result = await query(tools_for(prometheus), service="order-service")
    assert result.headline == "http_5xx_rate 0.10% → 12.0% at t-10m ▁▁▁▁▁▁▁▁████"
    assert "▁" not in result.text, "the model reads the text, not the sparkline"


async def test_a_drift_a_flat_series_and_the_top_of_several(prometheus: PrometheusServer) -> None:
    tools = tools_for(prometheus)
    drift = await query(tools, service="payment-service", window="1h")
    assert drift.headline == "http_5xx_rate rose 0.10% → 2.1% over 26m, now 2.2% ▁▁▁▁▁▁▂▃▄▅▇█"
    flat = await query(tools, service="inventory-service", window="2h")
    assert flat.headline == "http_5xx_rate flat at 0.10% ▁▁▁▁▁▁▁▁▁▁▁▁"
    noisy = await query(tools, service="inventory-service", metric="http_request_rate")
    assert noisy.headline == "http_request_rate flat at 80.3req/s ▁▁▁▁▁▁▁▁▁▁▁▁", "noise is not drawn as a change"
    cpu = await query(tools, service="order-service", metric="cpu_usage")
    assert (
        cpu.headline == "cpu_usage pod=order-service-7d9f8-abcde (top of 2) 0.2cores → 0.9cores at t-10m ▁▁▁▁▁▁▁▁████"
    )
    raw = await query(tools, service="order-service", metric='sum(rate(http_requests_total{service="{service}"}[1m]))')
    assert raw.headline == "flat at 100 ▁▁▁▁▁▁▁▁▁▁▁▁", "raw PromQL is not named: the call line shows it"


async def test_the_link_is_prometheus_graph_page_for_the_exact_query_and_range(prometheus: PrometheusServer) -> None:
    result = await query(tools_for(prometheus), service="order-service", window="1h30m")
    (link,) = result.links
    assert link.label == "graph"
    assert link.url.startswith(f"{prometheus.url}/graph?")
    params = query_of(link.url)
    promql = result.text.splitlines()[-1].removeprefix("query: ").split(" · ")[0]
    assert params["g0.expr"] == promql
    assert params["g0.tab"] == "0"
    assert params["g0.range_input"] == "1h30m"
    assert params["g0.end_input"] == params["g0.moment_input"] == prometheus.now().strftime("%Y-%m-%d %H:%M:%S")
    async with httpx.AsyncClient(follow_redirects=True) as client:
        page = await client.get(link.url)
    assert page.status_code == 200, "Prometheus serves its graph page at the link"
    assert query_of(str(page.url)) == params, "and keeps the query through its redirects"


async def test_a_password_in_the_metrics_url_never_reaches_the_link(prometheus: PrometheusServer) -> None:
    with_password = prometheus.url.replace("http://", f"http://opsagent:{PASSWORD}@")
    result = await query(tools_for(prometheus, url=with_password), service="order-service")
    (link,) = result.links
    assert link.url.startswith(f"{prometheus.url}/graph?g0.expr=")
    assert PASSWORD not in link.url
    assert "opsagent:" not in link.url
    assert "@" not in urlsplit(link.url).netloc


async def test_a_public_prometheus_url_replaces_the_api_address(prometheus: PrometheusServer) -> None:
    links = LinkSettings(prometheus_url="https://prometheus.example.com/prom/")
    (link,) = (await query(tools_for(prometheus, links), service="order-service")).links
    assert link.url.startswith("https://prometheus.example.com/prom/graph?g0.expr=%28sum%28rate")


async def test_with_grafana_the_link_is_an_explore_pane_grafana_reads(prometheus: PrometheusServer) -> None:
    links = LinkSettings(grafana_url="https://grafana.example.com", grafana_prometheus_datasource="prom-uid-1")
    result = await query(tools_for(prometheus, links), service="order-service")
    (link,) = result.links
    assert link.url.startswith("https://grafana.example.com/explore?schemaVersion=1&panes=")
    params = query_of(link.url)
    assert params["schemaVersion"] == "1"
    (pane,) = json.loads(params["panes"]).values()
    end = prometheus.now()
    assert pane["datasource"] == "prom-uid-1"
    assert pane["range"] == {
        "from": str(int((end - timedelta(minutes=30)).timestamp() * 1000)),
        "to": str(int(end.timestamp() * 1000)),
    }
    (target,) = pane["queries"]
    assert target["datasource"] == {"type": "prometheus", "uid": "prom-uid-1"}
    assert target["expr"].startswith('(sum(rate(http_requests_total{service="order-service",code=~"5.."}')
    assert target["refId"] == "A"
    assert target["range"] is True
    without_uid = LinkSettings(grafana_url="https://grafana.example.com")
    (fallback,) = (await query(tools_for(prometheus, without_uid), service="order-service")).links
    assert fallback.url.startswith(f"{prometheus.url}/graph?"), "Grafana without a data source uid is not linked"


async def test_recorded_series_have_a_headline_and_no_link(tmp_path: Path, prometheus: PrometheusServer) -> None:
    end = prometheus.now().timestamp()
    points = [(end - 60 * i, 0.001 if i > 10 else 0.2) for i in range(30, -1, -1)]
    write_series(tmp_path / "series.jsonl", [("http_requests_5xx_ratio", {"service": "checkout"}, points)])
    settings = MetricsSettings(url=f"file://{tmp_path / 'series.jsonl'}")
    client = FileMetricsClient(tmp_path / "series.jsonl")
    tools = metrics_tools(settings, client=client, now=prometheus.now, links=LinkSettings())
    result = await query(tools, service="checkout", metric="http_requests_5xx_ratio")
    assert result.headline.startswith("http_requests_5xx_ratio 0.001 → 0.2 at t-10m ")
    assert result.links == ()


async def test_list_metrics_says_what_it_found(prometheus: PrometheusServer) -> None:
    tools = tools_for(prometheus)
    assert (await dispatch_call(tools, "list_metrics")).headline == "4 services · 5 aliases"
    named = await dispatch_call(tools, "list_metrics", service="order-service")
    assert named.headline == "order-service: 6 metric names · 5 aliases"
    assert (await dispatch_call(tools, "list_metrics", service="nope")).headline == "no metrics for nope · 5 aliases"


async def test_a_failed_query_has_no_headline_and_no_link(prometheus: PrometheusServer) -> None:
    result = await dispatch_call(tools_for(prometheus), "query_metrics", service="ghost-service")
    assert result.error is not None
    assert (result.headline, result.links) == ("", ())


finite = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False)
any_value = st.one_of(finite, st.sampled_from([float("nan"), float("inf"), float("-inf")]))


@given(st.lists(any_value, max_size=200), st.integers(min_value=1, max_value=24))
def test_a_sparkline_has_one_bar_per_cell_and_only_bars(values: list[float], cells: int) -> None:
    points = [(float(i), v) for i, v in enumerate(values)]
    line = sparkline(points, cells)
    finite_count = sum(1 for v in values if v == v and abs(v) != float("inf"))
    assert len(line) == min(cells, finite_count)
    assert set(line) <= set(BARS)


@given(st.lists(finite, min_size=2, max_size=100))
def test_a_sparkline_spans_its_range_when_the_range_is_large(values: list[float]) -> None:
    low, high = min(values), max(values)
    line = sparkline([(float(i), v) for i, v in enumerate(values)], len(values))
    if high - low > 0.1 * max(abs(low), abs(high)):
        assert line[values.index(low)] == BARS[0]
        assert line[values.index(high)] == BARS[-1]


def test_the_default_sparkline_and_prometheus_durations() -> None:
    assert len(sparkline([(float(i), float(i % 7)) for i in range(31)])) == SPARK_CELLS
    assert [prometheus_duration(s) for s in (30, 90, 3600, 5400, 86400 + 60, 0.2)] == [
        "30s",
        "1m30s",
        "1h",
        "1h30m",
        "1d1m",
        "1s",
    ]
