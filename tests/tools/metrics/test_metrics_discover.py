"""`discover` against the real Prometheus of the tests: metric names per service, label names and values, the
labels of a selector's series, and, when a name names nothing, the nearest names that exist."""

from __future__ import annotations

import pytest

from kernel import ToolRegistry
from opsagent_tools.metrics import MetricsSettings
from opsagent_tools.toolset import ToolsSettings, build_tools
from testkit.servers.prometheus import PrometheusServer
from worlds.dispatch import dispatch_call


@pytest.fixture
def tools(prometheus: PrometheusServer) -> ToolRegistry:
    return build_tools(ToolsSettings(metrics=MetricsSettings(url=prometheus.url)), now=prometheus.now)


async def discover(tools: ToolRegistry, kind: str, filter: str | None = None) -> str:
    outcome = await dispatch_call(tools, "discover", kind=kind, **({"filter": filter} if filter is not None else {}))
    assert outcome.error is None, outcome.text
    return outcome.text


def test_the_prometheus_kinds_are_offered_and_described(tools):
    spec = tools.get("discover").spec
    assert spec.parameters["properties"]["kind"]["enum"] == [
        "prometheus_metrics",
        "prometheus_labels",
        "prometheus_series",
    ]
    assert "- prometheus_series: the labels, with their values, on the series a selector picks" in spec.description


async def test_a_services_metric_names(tools):
    text = await discover(tools, "prometheus_metrics", "order-service")
    assert text == (
        "Metric names of service order-service in the last 6h (6): ALERTS, app_build_info, "
        "container_cpu_usage_seconds_total, container_memory_working_set_bytes, http_request_duration_seconds_bucket, "
        "http_requests_total"
    )


async def test_an_unknown_service_gets_the_nearest_names(tools):
    text = await discover(tools, "prometheus_metrics", "ordr")
    assert text == (
        'No service "ordr" has metrics (service or container) in the last 6h. Nearest: order-service. Known services '
        "(4): ghost-service, inventory-service, order-service, payment-service."
    )


async def test_label_names_then_one_labels_values(tools):
    names = await discover(tools, "prometheus_labels")
    assert (
        names.splitlines()[0]
        == "Label names in the last 6h (11): __name__, alertname, alertstate, code, container, le, namespace, pod, "
        "service, severity, version"
    )
    assert await discover(tools, "prometheus_labels", "code") == "Values of label code in the last 6h (2): 200, 500"


async def test_an_unknown_label_gets_the_nearest_names(tools):
    text = await discover(tools, "prometheus_labels", "status_code")
    assert text == (
        'No label "status_code" is on any series in the last 6h. Nearest: code. Known labels (11): __name__, '
        "alertname, alertstate, code, container, le, namespace, pod, service, severity, version."
    )


async def test_the_labels_and_values_on_a_selectors_series(tools):
    text = await discover(tools, "prometheus_series", 'http_requests_total{service="order-service"}')
    assert text.splitlines() == [
        '2 series match http_requests_total{service="order-service"} in the last 6h; their labels and values:',
        "  __name__ (1): http_requests_total",
        "  code (2): 200, 500",
        "  service (1): order-service",
    ]


@pytest.mark.parametrize(
    ("selector", "answer"),
    [
        (
            'http_request_total{service="order-service"}',
            'No metric "http_request_total" has series in the last 6h. Nearest: http_requests_total,',
        ),
        (
            'http_requests_total{service="ordr"}',
            'No service "ordr" has metrics (service or container) in the last 6h. Nearest: order-service.',
        ),
        (
            'http_requests_total{service="order-service",code="404"}',
            'No series match http_requests_total{service="order-service",code="404"} in the last 6h: the names exist,',
        ),
    ],
)
async def test_a_selector_that_picks_nothing_says_which_name_is_wrong(tools, selector, answer):
    assert (await discover(tools, "prometheus_series", selector)).startswith(answer)


async def test_a_series_listing_needs_a_selector_and_a_bad_one_gets_prometheus_reason(tools):
    missing = await dispatch_call(tools, "discover", kind="prometheus_series")
    assert missing.text == (
        "[ToolError] exception: 'discover' failed: discover(kind='prometheus_series') needs a filter: a metric name "
        'or series selector, e.g. http_requests_total{service="checkout"}.'
    )
    bad = await dispatch_call(tools, "discover", kind="prometheus_series", filter="http_requests_total{")
    assert bad.text.startswith("[ToolError] exception: 'discover' failed: Prometheus rejected the query: ")


async def test_an_unknown_kind_lists_the_kinds(tools):
    outcome = await dispatch_call(tools, "discover", kind="kubernetes_pods")
    assert "Invalid arguments for 'discover'" in outcome.text
    assert "'prometheus_metrics', 'prometheus_labels' or 'prometheus_series'" in outcome.text


@pytest.mark.parametrize(
    ("kind", "filter", "headline"),
    [
        ("prometheus_metrics", "order-service", "Metric names of service order-service in the last 6h (6)"),
        ("prometheus_metrics", "ordr", 'No service "ordr" has metrics (service or container) in the last 6h.'),
        ("prometheus_labels", "code", "Values of label code in the last 6h (2)"),
        (
            "prometheus_series",
            'http_requests_total{service="order-service"}',
            '2 series match http_requests_total{service="order-service"} in the last 6h; their labels and values',
        ),
    ],
)
async def test_people_see_the_listings_heading_cached_or_not(tools, kind, filter, headline):
    for _ in range(2):  # the second answer comes from the cache
        outcome = await dispatch_call(tools, "discover", kind=kind, filter=filter)
        assert outcome.headline == headline
        assert outcome.links == ()
