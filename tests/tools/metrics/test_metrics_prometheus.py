"""The metrics tools end to end against a real Prometheus holding incident-shaped data, called as a run calls them.

Odd servers (slow, down, not Prometheus) are a local fake or a closed port; everything else is real PromQL.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from kernel import (
    Tool,
    ToolFailure,
)
from opsagent_tools.metrics import DEFAULT_ALIASES, MetricAlias, MetricsSettings, metrics_tools
from opsagent_tools.metrics.prometheus import LONG_QUERY_CHARS, PrometheusClient
from testkit.fakes.model_server import FakeModelServer, Reply, closed_port_url
from testkit.servers.prometheus import PrometheusServer, binary
from worlds.dispatch import dispatch_call

SPIKE_QUERY = (
    'query: (sum(rate(http_requests_total{service="order-service",code=~"5.."}[75s])) or vector(0)) '
    '/ sum(rate(http_requests_total{service="order-service"}[75s])) · step 60s · unit percent'
)


async def call(tools: list[Tool], name: str, **args: Any) -> str:
    """One call through the kernel's Dispatcher, as a run makes it: the output, or the error the model would see
    (the words for people, then the hint), without its prefix."""
    result = await dispatch_call(tools, name, **args)
    return f"{result.error.said} {result.error.hint}".rstrip() if result.error else result.text


@pytest.fixture
def tools(prometheus: PrometheusServer) -> list[Tool]:
    return metrics_tools(MetricsSettings(url=prometheus.url), now=prometheus.now)


# --- incident shapes --------------------------------------------------------------------------


async def test_a_spike_names_its_change_point(tools: list[Tool]) -> None:
    lines = (await call(tools, "query_metrics", service="order-service")).splitlines()
    assert lines[0] == "order-service http_5xx_rate over the last 30m: jumped from 0.10% to 12.0% at t-10m"
    assert lines[1].startswith("t-30m:0.10% t-29m:0.10%")
    assert "t-11m:0.10% t-10m:4.9% t-9m:12.0%" in lines[1]
    assert lines[1].endswith("now:12.0%")
    assert lines[2] == SPIKE_QUERY
    assert len(lines) == 3


async def test_a_drift_is_gradual(tools: list[Tool]) -> None:
    lines = (await call(tools, "query_metrics", service="payment-service", window="1h")).splitlines()
    assert lines[0].startswith("payment-service http_5xx_rate over the last 1h: rose gradually from 0.10% to 2.")
    assert " over 2" in lines[0]
    assert lines[1].startswith("t-1h:0.10% t-58m:0.10%")
    assert lines[-1].endswith("· step 120s · unit percent")


async def test_a_flat_service_has_no_change_point(tools: list[Tool]) -> None:
    lines = (await call(tools, "query_metrics", service="inventory-service", window="2h")).splitlines()
    assert lines[0] == "inventory-service http_5xx_rate over the last 2h: flat at about 0.10%; no change point"
    assert lines[-1].endswith("· step 300s · unit percent")


async def test_a_service_that_stopped_reporting_says_what_to_try(tools: list[Tool]) -> None:
    text = await call(tools, "query_metrics", service="ghost-service")
    assert text.startswith("'query_metrics' failed: no series for service=\"ghost-service\" and http_5xx_rate")
    assert 'list_metrics(service="ghost-service") shows what exists; check the service label' in text
    assert 'query: (sum(rate(http_requests_total{service="ghost-service"' in text
    said = (await dispatch_call(tools, "query_metrics", service="ghost-service")).error.said
    assert "list_metrics" not in said, "people read what was missing; the model, what to try"


async def test_the_stopped_service_is_still_there_over_a_longer_window(tools: list[Tool]) -> None:
    text = await call(tools, "query_metrics", service="ghost-service", window="2h")
    assert text.startswith("ghost-service http_5xx_rate over the last 2h: ")
    assert "flat at about 0.10%" in text


async def test_an_unknown_service_gets_the_closest_names(tools: list[Tool]) -> None:
    text = await call(tools, "query_metrics", service="order")
    assert text.startswith(
        "'query_metrics' failed: No service \"order\" has metrics (service or container) in the last 6h. Nearest: order-service. "
        "Known services (4): ghost-service, inventory-service, order-service, payment-service. query: "
    )
    assert text.endswith(" Use one of these names.")


# --- aliases and PromQL -----------------------------------------------------------------------


async def test_latency_alias_reads_in_milliseconds_and_seconds(tools: list[Tool]) -> None:
    lines = (await call(tools, "query_metrics", service="order-service", metric="latency_p99")).splitlines()
    assert lines[0].startswith("order-service latency_p99 over the last 30m: jumped from 233ms to ")
    assert lines[0].endswith(" at t-10m, now 4.75s")
    assert lines[-1] == (
        "query: histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket"
        '{service="order-service"}[75s]))) · step 60s · unit seconds'
    )


async def test_per_pod_series_lead_with_the_one_that_changed(tools: list[Tool]) -> None:
    lines = (await call(tools, "query_metrics", service="order-service", metric="cpu_usage")).splitlines()
    hot, calm = '{pod="order-service-7d9f8-abcde"}', '{pod="order-service-7d9f8-fghij"}'
    assert lines[0] == (
        f"order-service cpu_usage over the last 30m, 2 series; largest change {hot}: "
        "jumped from 0.2cores to 0.9cores at t-10m"
    )
    assert lines[1] == f"{hot}: jumped from 0.2cores to 0.9cores at t-10m"
    assert lines[2].startswith("  t-30m:0.2cores")
    assert lines[3] == f"{calm}: flat at about 0.2cores; no change point"
    assert 'container_cpu_usage_seconds_total{container="order-service"}' in lines[-1]


async def test_raw_promql_gets_the_service_and_shows_values_as_returned(tools: list[Tool]) -> None:
    promql = 'sum(rate(http_requests_total{service="{service}",code="500"}[1m]))'
    lines = (await call(tools, "query_metrics", service="order-service", metric=promql)).splitlines()
    assert re.fullmatch(r"order-service PromQL over the last 30m: jumped from 0\.\d+ to 1[12]\.\d at t-10m.*", lines[0])
    assert lines[-1] == (
        'query: sum(rate(http_requests_total{service="order-service",code="500"}[1m])) · step 60s '
        "· unit none (values as returned)"
    )


async def test_a_bare_metric_name_gets_the_service_selector(tools: list[Tool]) -> None:
    text = await call(tools, "query_metrics", service="order-service", metric="http_requests_total", step="5m")
    assert text.splitlines()[0].startswith(
        "order-service http_requests_total over the last 30m, 2 series; largest change {code="
    )
    assert text.endswith(
        'query: http_requests_total{service="order-service"} · step 300s · unit none (values as returned)'
    )


async def test_a_guessed_metric_name_is_named_as_no_alias(tools: list[Tool]) -> None:
    text = await call(tools, "query_metrics", service="order-service", metric="error_rate")
    assert 'no series for service="order-service" and error_rate in the last 30m (error_rate is not an alias: ' in text
    assert "http_5xx_rate, http_request_rate, latency_p99, cpu_usage, memory_usage)" in text
    assert 'list_metrics(service="order-service") shows what exists' in text


async def test_a_service_name_cannot_break_out_of_its_string(tools: list[Tool]) -> None:
    text = await call(tools, "query_metrics", service='x"} or vector(1) or {a="', metric="http_request_rate")
    assert 'http_requests_total{service="x\\"} or vector(1) or {a=\\""}' in text
    assert 'No service "x\\"} or vector(1) or {a=\\"" has metrics' in text


async def test_bad_promql_is_rejected_with_the_query_to_fix(tools: list[Tool]) -> None:
    text = await call(tools, "query_metrics", service="order-service", metric="sum(rate(http_requests_total[5m])")
    assert text.startswith("'query_metrics' failed: Prometheus rejected the query: ")
    assert "parse error" in text
    assert text.endswith(": sum(rate(http_requests_total[5m]). Fix the PromQL.")


async def test_a_query_prometheus_cannot_evaluate_says_so(tools: list[Tool]) -> None:
    text = await call(
        tools, "query_metrics", service="order-service", metric="http_requests_total / on() http_requests_total"
    )
    assert "Prometheus could not evaluate the query: " in text
    assert "many-to-many matching not allowed" in text


async def test_custom_aliases_add_to_the_defaults(prometheus: PrometheusServer) -> None:
    errors = MetricAlias(
        promql='sum(rate(http_requests_total{{service_label}="{service}",code="500"}[{rate_window}]))',
        unit="rps",
        description="5xx responses per second",
    )
    settings = MetricsSettings(url=prometheus.url, aliases={"errors_per_second": errors})
    assert set(settings.aliases) == {*DEFAULT_ALIASES, "errors_per_second"}
    tools = metrics_tools(settings, now=prometheus.now)
    lines = (await call(tools, "query_metrics", service="order-service", metric="errors_per_second")).splitlines()
    assert re.fullmatch(
        r"order-service errors_per_second over the last 30m: jumped from 0\.\d+req/s to 1[12]\.\dreq/s .*", lines[0]
    )
    assert lines[-1].endswith("[75s])) · step 60s · unit rps")


def test_alias_templates_with_unknown_placeholders_are_refused() -> None:
    with pytest.raises(ValidationError, match="unknown placeholder"):
        MetricAlias(promql='up{job="{svc}"}', description="typo")
    with pytest.raises(ValidationError, match="alias names must look like metric names"):
        MetricsSettings(url="http://x", aliases={"5xx rate": DEFAULT_ALIASES["http_5xx_rate"]})


# --- windows ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"window": "90 minutes"}, 'window "90 minutes" is not a duration. Write it like 15m, 1h or 2h30m'),
        ({"window": "30d"}, 'window "30d" is longer than 7d. Use at most 7d'),
        ({"window": "30s"}, 'window "30s" is shorter than 1m'),
        ({"window": "7d", "step": "1s"}, "gives more than 1000 points. Use a step of at least 10m5s"),
        ({"step": "fast"}, 'step "fast" is not a duration'),
    ],
)
async def test_bad_windows_say_the_format(args: dict[str, str], message: str) -> None:
    tools = metrics_tools(MetricsSettings(url=closed_port_url()))  # validation fails before any request
    text = await call(tools, "query_metrics", service="order-service", **args)
    assert text.startswith("'query_metrics' failed: ")
    assert message in text


async def test_a_step_in_seconds_and_a_compound_window(tools: list[Tool]) -> None:
    text = await call(tools, "query_metrics", service="order-service", window="1h30m", step=120)
    assert text.splitlines()[0].startswith(
        "order-service http_5xx_rate over the last 1h30m: jumped from 0.10% to 12.0%"
    )
    assert text.endswith("· step 120s · unit percent")


# --- discovery --------------------------------------------------------------------------------


async def test_list_metrics_lists_aliases_and_services(tools: list[Tool]) -> None:
    text = await call(tools, "list_metrics")
    assert "  http_5xx_rate (percent): share of HTTP requests answered with a 5xx status" in text
    assert "  latency_p99 (seconds): " in text
    assert (
        "Services (values of label service, 4): ghost-service, inventory-service, order-service, payment-service"
        in text
    )


async def test_list_metrics_for_a_service_lists_its_metric_names(tools: list[Tool]) -> None:
    text = await call(tools, "list_metrics", service="order-service")
    assert (
        'Metric names with service="order-service" or container="order-service" (6): ALERTS, app_build_info, '
        "container_cpu_usage_seconds_total, container_memory_working_set_bytes, http_request_duration_seconds_bucket, "
        "http_requests_total"
    ) in text


async def test_list_metrics_for_an_unknown_service_suggests_one(tools: list[Tool]) -> None:
    text = await call(tools, "list_metrics", service="ordr")
    assert 'No service "ordr" has metrics (service or container) in the last 6h. Nearest: order-service.' in text


# --- the client on its own --------------------------------------------------------------------


async def test_client_instant_query_labels_and_long_queries(prometheus: PrometheusServer) -> None:
    client = PrometheusClient(base_url=prometheus.url)
    at = prometheus.anchor - timedelta(minutes=20)
    short = 'sum(rate(http_requests_total{service="order-service",code="500"}[1m]))'
    [before] = await client.query(short, at)
    assert before.labels == {}
    assert before.points[0][0] == at.timestamp()
    assert before.points[0][1] == pytest.approx(0.1, rel=0.05)
    long = short + " + 0 * (" + " + ".join(["vector(1)"] * 250) + ")"
    assert len(long) > LONG_QUERY_CHARS  # sent as a POST form
    [same] = await client.query(long, at)
    assert same.points == before.points
    assert await client.label_values("code", '{service="order-service"}') == ["200", "500"]
    assert "container_cpu_usage_seconds_total" in await client.label_values("__name__")
    assert await client.query("vector(1) > 2", at) == []
    with pytest.raises(ToolFailure, match='"le}" is not a label name'):
        await client.label_values("le}")


async def test_client_shares_an_injected_http_client(prometheus: PrometheusServer) -> None:
    async with httpx.AsyncClient() as http:
        client = PrometheusClient(base_url=prometheus.url, client=http)
        end = prometheus.anchor
        [series] = await client.query_range("vector(2)", end - timedelta(minutes=2), end, 60)
        assert not http.is_closed
    assert series.points == [(end.timestamp() - 120, 2.0), (end.timestamp() - 60, 2.0), (end.timestamp(), 2.0)]


def test_without_prometheus_installed_the_fixture_fails_rather_than_skips(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(pytest.fail.Exception, match=r"`apt-get install prometheus`"):
        binary("prometheus")


async def test_a_stopped_server_is_unreachable() -> None:
    url = closed_port_url()
    text = await call(metrics_tools(MetricsSettings(url=url)), "query_metrics", service="order-service")
    assert text.startswith(f"'query_metrics' failed: cannot reach Prometheus at {url} (")
    assert text.endswith("): check tools.metrics.url and that the server is up")


async def test_a_slow_server_times_out_with_advice() -> None:
    async with FakeModelServer() as slow:
        slow.script(Reply(body={"status": "success"}, delay=5.0))
        tools = metrics_tools(MetricsSettings(url=slow.url, timeout_s=0.3))
        text = await call(tools, "query_metrics", service="order-service")
    assert text == (
        "'query_metrics' failed: Prometheus did not answer within 0.3 s. Narrow the window or raise the step."
    )


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply(body="<html>Bad Gateway</html>", status=502), "Prometheus answered HTTP 502 without an API response"),
        (Reply(body="404 page not found", status=404), "(HTTP 404): check tools.metrics.url (Mimir and Cortex"),
        (Reply(body="no auth", status=401), "refused the request (HTTP 401): check the credentials"),
        (
            Reply(body={"status": "error", "errorType": "timeout", "error": "query timed out"}, status=503),
            "Prometheus gave up on the query (query timed out). Narrow the window or raise the step.",
        ),
    ],
)
async def test_servers_that_are_not_well_say_what_to_check(reply: Reply, message: str) -> None:
    async with FakeModelServer() as fake:
        fake.script(reply)
        client = PrometheusClient(base_url=fake.url + "/", headers={"Authorization": "Bearer t0ken"})
        with pytest.raises(ToolFailure) as failure:
            await client.query("up")
    assert message in f"{failure.value} {failure.value.hint}"
    assert fake.requests[0].path == "/api/v1/query"
    assert fake.requests[0].headers["authorization"] == "Bearer t0ken"
