"""The recorded-metrics backend: plain selectors, Prometheus' step grid and lookback, discovery, and the metrics
tools end to end over a small recorded incident."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kernel import Tool, ToolFailure
from opsagent_tools.metrics import MetricAlias, MetricsSettings, metrics_tools
from opsagent_tools.metrics.files import UNSUPPORTED, FileMetricsClient, write_series
from opsagent_tools.metrics.series import Point, Series

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
N = NOW.timestamp()
SCRAPE = 15
RATIO = "http_requests_5xx_ratio"


def every_15s(value: float, since: float = N - 7200, until: float = N) -> list[Point]:
    return [(float(t), value) for t in range(int(since), int(until) + 1, SCRAPE)]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    spike = [(t, 0.001 if t < N - 600 else 0.12) for t, _ in every_15s(0)]
    file = tmp_path / "incident.jsonl"
    write_series(
        file,
        [
            (RATIO, {"service": "order-service", "pod": "a"}, spike),
            (RATIO, {"service": "payment-service"}, every_15s(0.001)),
            (RATIO, {"service": "inventory-service"}, every_15s(0.001, until=N - 1200)),  # stale for 20m
            ("http_requests_total", {"service": "order-service", "code": "200"}, every_15s(1000)),
            ("http_requests_total", {"service": "order-service", "code": "503"}, every_15s(5)),
            ("container_memory_working_set_bytes", {"container": "order-service"}, every_15s(3e8)),
            ("probe_value", {"job": "probe"}, [(N - 1000, 1.0), (N - 990, 2.0), (N - 900, 3.0)]),
        ],
    )
    return file


@pytest.fixture
def client(path: Path) -> FileMetricsClient:
    return FileMetricsClient(path)


def services(found: list[Series]) -> list[str]:
    return sorted(s.labels.get("service", "") for s in found)


# --- selectors ---------------------------------------------------------------------------------


async def test_a_name_with_an_equality_matcher_selects_one_series_with_its_labels(client: FileMetricsClient) -> None:
    found = await client.query(f'{RATIO}{{service="order-service"}}', NOW)
    assert found == [Series({"__name__": RATIO, "pod": "a", "service": "order-service"}, [(N, 0.12)])]


async def test_a_bare_name_selects_every_series_that_is_not_stale(client: FileMetricsClient) -> None:
    assert services(await client.query(RATIO, NOW)) == ["order-service", "payment-service"]
    assert services(await client.query(RATIO, NOW - timedelta(minutes=25))) == [
        "inventory-service",
        "order-service",
        "payment-service",
    ]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (f'{RATIO}{{service!="order-service"}}', ["inventory-service", "payment-service"]),
        (f'  {RATIO} {{ service =~ "order.*|pay.*" , }} ', ["order-service", "payment-service"]),
        (f'{RATIO}{{service=~"order"}}', []),  # regexes are anchored, as in Prometheus
        (f'{RATIO}{{service!~"order.*"}}', ["inventory-service", "payment-service"]),
        (f'{RATIO}{{pod!="a"}}', ["inventory-service", "payment-service"]),  # a missing label reads as ""
        (f'{RATIO}{{pod=""}}', ["inventory-service", "payment-service"]),
        (f"{RATIO}{{service='payment-service'}}", ["payment-service"]),
        (f"{RATIO}{{service=`payment-service`}}", ["payment-service"]),
        (f'{{__name__="{RATIO}", service=~"inv.*"}}', ["inventory-service"]),
        ('{service="order-service", code="503"}', ["order-service"]),
        (f'{RATIO}{{service="order-service",service!="order-service"}}', []),
    ],
)
async def test_matchers(client: FileMetricsClient, selector: str, expected: list[str]) -> None:
    assert services(await client.query(selector, NOW - timedelta(minutes=25))) == expected


async def test_a_name_regex_selects_across_metrics(client: FileMetricsClient) -> None:
    found = await client.query('{__name__=~"http_.*", service="order-service"}', NOW)
    assert sorted((s.labels["__name__"], s.labels.get("code", "")) for s in found) == [
        ("http_requests_5xx_ratio", ""),
        ("http_requests_total", "200"),
        ("http_requests_total", "503"),
    ]


async def test_escapes_in_strings_are_read(tmp_path: Path) -> None:
    file = tmp_path / "m.jsonl"
    write_series(file, [("m", {"path": 'a"b\\c'}, [(N, 1.0)])])
    found = await FileMetricsClient(file).query('m{path="a\\"b\\\\c"}', NOW)
    assert [s.labels["path"] for s in found] == ['a"b\\c']


@pytest.mark.parametrize(
    "promql",
    [
        f"sum({RATIO})",
        "rate(http_requests_total[5m])",
        "http_requests_total[5m]",
        f"{RATIO} / http_requests_total",
        f"{RATIO} > 0.05",
        f"{RATIO} offset 5m",
        f'sum by (service) ({RATIO}{{service="x"}})',
        f'{RATIO}{{service="x"',
        f"{RATIO}{{service}}",
        f'{RATIO}{{service=="x"}}',
        "{}",
        "",
    ],
)
async def test_promql_beyond_plain_selectors_says_what_this_backend_answers(
    client: FileMetricsClient, promql: str
) -> None:
    with pytest.raises(ToolFailure) as failure:
        await client.query_range(promql, NOW - timedelta(minutes=30), NOW, 60)
    message = str(failure.value)
    assert message.startswith(
        'the recorded-metrics backend answers plain selectors such as name{service="x"}, not PromQL functions'
    )
    assert message.startswith(UNSUPPORTED)
    assert message.endswith(f"(got: {promql}).")
    assert failure.value.hint == "Use a metric alias from list_metrics().", "the model is told what to use instead"


async def test_a_selector_that_matches_everything_or_a_bad_regex_is_refused(client: FileMetricsClient) -> None:
    with pytest.raises(ToolFailure, match="non-empty matcher"):
        await client.query('{service=~".*"}', NOW)
    with pytest.raises(
        ToolFailure, match=r"The regular expression '\(' for service in .* is not a valid regular expression"
    ):
        await client.query(f'{RATIO}{{service=~"("}}', NOW)


# --- the step grid and the lookback ------------------------------------------------------------


async def test_each_grid_time_takes_the_latest_sample_within_five_minutes(client: FileMetricsClient) -> None:
    found = await client.query_range("probe_value", NOW - timedelta(seconds=1000), NOW - timedelta(seconds=500), 50)
    # samples at -1000 (1.0), -990 (2.0), -900 (3.0); the last one goes stale 5 minutes later, at -600
    expected = [(N - 1000, 1.0), (N - 950, 2.0)] + [(N - s, 3.0) for s in range(900, 600, -50)]
    assert found == [Series({"__name__": "probe_value", "job": "probe"}, expected)]


async def test_a_sample_before_the_window_counts_within_the_lookback(client: FileMetricsClient) -> None:
    found = await client.query_range("probe_value", NOW - timedelta(seconds=800), NOW - timedelta(seconds=700), 100)
    assert found[0].points == [(N - 800, 3.0), (N - 700, 3.0)]
    found = await client.query_range("probe_value", NOW - timedelta(seconds=1100), NOW - timedelta(seconds=1000), 50)
    assert found[0].points == [(N - 1000, 1.0)]


async def test_a_series_with_no_point_on_the_grid_is_left_out(client: FileMetricsClient) -> None:
    assert await client.query_range("probe_value", NOW - timedelta(minutes=9), NOW, 60) == []
    found = await client.query_range(RATIO, NOW - timedelta(minutes=10), NOW, 60)
    assert services(found) == ["order-service", "payment-service"]


async def test_the_grid_runs_from_start_by_step_up_to_end(client: FileMetricsClient) -> None:
    found = await client.query_range(f'{RATIO}{{service="payment-service"}}', NOW - timedelta(seconds=100), NOW, 30)
    assert [t - N for t, _ in found[0].points] == [-100, -70, -40, -10]
    naive = NOW.replace(tzinfo=None)  # naive datetimes are UTC
    assert await client.query_range(RATIO, naive - timedelta(seconds=100), naive, 30) == await client.query_range(
        RATIO, NOW - timedelta(seconds=100), NOW, 30
    )


async def test_query_defaults_to_the_end_of_the_recording(client: FileMetricsClient) -> None:
    assert client.last_sample == N
    found = await client.query(f'{RATIO}{{service="order-service"}}')
    assert found[0].points == [(N, 0.12)]


async def test_bad_steps_are_refused(client: FileMetricsClient) -> None:
    with pytest.raises(ToolFailure, match="step must be positive"):
        await client.query_range(RATIO, NOW - timedelta(minutes=5), NOW, 0)
    with pytest.raises(ToolFailure, match="more than 11000 points"):
        await client.query_range(RATIO, NOW - timedelta(days=1), NOW, 1)


# --- discovery ---------------------------------------------------------------------------------


async def test_label_values_over_a_window(client: FileMetricsClient) -> None:
    everyone = ["inventory-service", "order-service", "payment-service"]
    assert await client.label_values("service") == everyone
    assert (
        await client.label_values("service", start=NOW - timedelta(hours=2), end=NOW - timedelta(hours=1)) == everyone
    )
    assert await client.label_values("service", start=NOW - timedelta(minutes=10), end=NOW) == everyone[1:]
    assert await client.label_values("service", start=NOW + timedelta(minutes=1)) == []


async def test_label_values_under_matchers(client: FileMetricsClient) -> None:
    assert await client.label_values("code", '{service="order-service"}') == ["200", "503"]
    assert await client.label_values("service", f'{RATIO}{{service=~"o.*|p.*"}}') == [
        "order-service",
        "payment-service",
    ]
    assert await client.label_values("container") == ["order-service"]
    with pytest.raises(ToolFailure, match='"bad-label" is not a label name'):
        await client.label_values("bad-label")


async def test_metric_names_with_or_ed_matchers(client: FileMetricsClient) -> None:
    names = await client.label_values(
        "__name__",
        ['{service="order-service"}', '{container="order-service"}'],
        start=NOW - timedelta(hours=6),
        end=NOW,
    )
    assert names == ["container_memory_working_set_bytes", "http_requests_5xx_ratio", "http_requests_total"]
    assert await client.label_values("__name__", '{service="payment-service"}') == [RATIO]
    assert "probe_value" in await client.label_values("__name__")
    assert "probe_value" not in await client.label_values("__name__", start=NOW - timedelta(minutes=5))


# --- the file ----------------------------------------------------------------------------------


GOOD_LINE = json.dumps({"metric": "m", "labels": {"a": "b"}, "points": [[N, 1]]})


@pytest.mark.parametrize(
    ("line", "complaint"),
    [
        ("{not json", "Expecting property name"),
        ("[1, 2]", 'expected {"metric"'),
        ('{"metric": "m", "labels": {}}', 'expected {"metric"'),
        ('{"metric": "m", "points": [], "point": []}', 'expected {"metric"'),
        ('{"metric": "bad name", "points": []}', '"metric" must be a metric name'),
        ('{"metric": "m", "labels": {"a": 1}, "points": []}', '"labels" must map label names'),
        ('{"metric": "m", "labels": {"__name__": "x"}, "points": []}', '"labels" must map label names'),
        ('{"metric": "m", "points": {"1": 2}}', '"points" must be a list'),
        ('{"metric": "m", "points": [[1]]}', "a point must be [unix_ts, value]"),
        ('{"metric": "m", "points": [["1", 2]]}', "a point must be [unix_ts, value]"),
        ('{"metric": "m", "points": [[true, 2]]}', "a point must be [unix_ts, value]"),
        ('{"metric": "m", "points": [[1, "many"]]}', "a point must be [unix_ts, value]"),
        ('{"metric": "m", "points": [[NaN, 1]]}', "a point must be [unix_ts, value]"),
    ],
)
def test_a_malformed_line_is_named_by_its_number(tmp_path: Path, line: str, complaint: str) -> None:
    file = tmp_path / "bad.jsonl"
    file.write_text(f"{GOOD_LINE}\n\n{line}\n")
    with pytest.raises(ValueError, match=r"bad\.jsonl line 3: ") as failure:
        FileMetricsClient(file)
    assert complaint in str(failure.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"cannot read the recorded metrics file .*nowhere\.jsonl"):
        FileMetricsClient(tmp_path / "nowhere.jsonl")


async def test_lines_of_one_series_merge_in_time_order_and_non_finite_values_survive(tmp_path: Path) -> None:
    file = tmp_path / "m.jsonl"
    rows = [
        {"metric": "m", "labels": {"a": "b"}, "points": [[N - 30, "NaN"], [N - 60, 1]]},
        {"metric": "m", "labels": {"a": "b"}, "points": [[N, "+Inf"]]},
    ]
    file.write_text("".join(json.dumps(row) + "\n" for row in rows))
    found = await FileMetricsClient(file).query_range("m", NOW - timedelta(seconds=60), NOW, 30)
    assert len(found) == 1
    values = [v for _, v in found[0].points]
    assert [t - N for t, _ in found[0].points] == [-60, -30, 0]
    assert values[0] == 1
    assert math.isnan(values[1])
    assert values[2] == math.inf


async def test_write_series_round_trips_and_refuses_bad_series(tmp_path: Path) -> None:
    file = tmp_path / "w.jsonl"
    write_series(file, [("m", {"b": "2", "a": "1"}, [(N, -math.inf), (N + 15, 0.5)])])
    assert json.loads(file.read_text()) == {
        "metric": "m",
        "labels": {"a": "1", "b": "2"},
        "points": [[N, "-Inf"], [N + 15, 0.5]],
    }
    found = await FileMetricsClient(file).query_range("m", NOW, NOW + timedelta(seconds=15), 15)
    assert found[0].points == [(N, -math.inf), (N + 15, 0.5)]
    with pytest.raises(ValueError, match=r"series 2: \"metric\" must be a metric name"):
        write_series(file, [("m", {}, []), ("no good", {}, [])])


# --- the metrics tools over a recording --------------------------------------------------------


@pytest.fixture
def tools(client: FileMetricsClient) -> dict[str, Tool]:
    alias = MetricAlias(
        promql=f'{RATIO}{{service="{{service}}"}}', unit="percent", description="share of requests answered 5xx"
    )
    settings = MetricsSettings(url="file://x", aliases={"http_5xx_rate": alias})
    return {tool.name: tool for tool in metrics_tools(settings, client=client, now=lambda: NOW)}


async def query_metrics(
    tools: dict[str, Tool], service: str, metric: str = "http_5xx_rate", window: str = "30m"
) -> str:
    return (await tools["query_metrics"].handler(service=service, metric=metric, window=window, step=None)).text


async def test_the_spike_names_its_change_point(tools: dict[str, Tool]) -> None:
    lines = (await query_metrics(tools, "order-service")).splitlines()
    assert lines[0] == "order-service http_5xx_rate over the last 30m: jumped from 0.10% to 12.0% at t-10m"
    assert lines[1].startswith("t-30m:0.10% t-29m:0.10%")
    assert "t-11m:0.10% t-10m:12.0% t-9m:12.0%" in lines[1]
    assert lines[1].endswith("now:12.0%")
    assert lines[2] == 'query: http_requests_5xx_ratio{service="order-service"} · step 60s · unit percent'


async def test_a_flat_service_and_several_series(tools: dict[str, Tool]) -> None:
    flat = await query_metrics(tools, "payment-service", window="1h")
    assert (
        flat.splitlines()[0] == "payment-service http_5xx_rate over the last 1h: flat at about 0.10%; no change point"
    )
    codes = (await query_metrics(tools, "order-service", metric="http_requests_total")).splitlines()
    assert codes[0].startswith("order-service http_requests_total over the last 30m, 2 series; largest change")
    assert '{code="200"}: flat at about 1000; no change point' in codes


async def test_a_stale_service_and_an_unknown_one_get_the_no_data_advice(tools: dict[str, Tool]) -> None:
    with pytest.raises(ToolFailure) as stale:
        await query_metrics(tools, "inventory-service", window="10m")
    assert str(stale.value).startswith('no series for service="inventory-service" and http_5xx_rate in the last 10m')
    with pytest.raises(ToolFailure, match="Nearest: order-service"):
        await query_metrics(tools, "ordr-service")


async def test_promql_functions_are_refused_through_the_tool(tools: dict[str, Tool]) -> None:
    with pytest.raises(ToolFailure, match="not PromQL functions") as failure:
        await query_metrics(tools, "order-service", metric=f'sum(rate({RATIO}{{service="{{service}}"}}[5m]))')
    assert "Use a metric alias from list_metrics" in failure.value.hint


async def test_list_metrics_over_a_recording(tools: dict[str, Tool]) -> None:
    listing = (await tools["list_metrics"].handler(service=None)).text
    assert "Services (values of label service, 3): inventory-service, order-service, payment-service" in listing
    names = (await tools["list_metrics"].handler(service="order-service")).text
    assert (
        'Metric names with service="order-service" or container="order-service" (3): '
        "container_memory_working_set_bytes, http_requests_5xx_ratio, http_requests_total"
    ) in names
