"""Verifying an action by reading its symptom again: against the real Prometheus's incident (order-service's 5xx is
still at 12%: it did not hold), a Prometheus that is down or has nothing (inconclusive, never held), and the judge
on series shaped as recoveries, relapses and noise."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from kernel import ToolCall, VerificationOutcome
from opsagent_tools.links import LinkSettings
from opsagent_tools.metrics import MetricsFamily, MetricsSettings
from opsagent_tools.metrics.headline import BARS
from opsagent_tools.metrics.series import Series
from opsagent_tools.metrics.verify import judge
from testkit.fakes.model_server import closed_port_url
from testkit.servers.prometheus import PrometheusServer

ACTION_AT = 1200.0
"""The action ran 20 minutes into a series sampled every minute."""


def family(url: str, prometheus: PrometheusServer) -> MetricsFamily:
    return MetricsFamily(MetricsSettings(url=url), now=prometheus.now, links=LinkSettings())


def query(**args: object) -> ToolCall:
    return ToolCall(name="query_metrics", args=args)


async def test_a_symptom_still_there_after_the_action_did_not_hold(prometheus: PrometheusServer) -> None:
    metrics = family(prometheus.url, prometheus)
    action_at = prometheus.anchor - timedelta(minutes=4)
    check = await metrics.recheck(query(service="order-service", metric="http_5xx_rate"), action_at=action_at)
    assert check.outcome is VerificationOutcome.DID_NOT_HOLD
    assert (check.metric, check.value(check.before), check.value(check.now)) == ("http_5xx_rate", "12.0%", "12.0%")
    assert check.baseline_range == "0.10%", "the range before the incident began (t-10.5m), not the window's"
    assert len(check.sparkline) == 12
    assert check.sparkline[0] == BARS[0]
    assert check.sparkline[-1] == BARS[-1], "the series ends high: it never came back"


async def test_a_service_with_no_data_is_inconclusive_never_held(prometheus: PrometheusServer) -> None:
    metrics = family(prometheus.url, prometheus)
    action_at = prometheus.anchor - timedelta(minutes=4)
    check = await metrics.recheck(query(service="ghost-service", window="15m"), action_at=action_at)
    assert (check.outcome, check.detail) == (VerificationOutcome.INCONCLUSIVE, "no data: the query found no values")
    assert (check.before, check.now, check.baseline) == (None, None, None)


async def test_a_symptom_that_was_never_anomalous_in_the_window_is_inconclusive(prometheus: PrometheusServer) -> None:
    metrics = family(prometheus.url, prometheus)
    action_at = prometheus.anchor - timedelta(minutes=4)
    check = await metrics.recheck(query(service="inventory-service"), action_at=action_at)
    assert check.outcome is VerificationOutcome.INCONCLUSIVE
    assert check.detail == "no change before the action to compare with (flat at 0.10%)"


async def test_a_prometheus_that_is_down_is_inconclusive_and_says_why(prometheus: PrometheusServer) -> None:
    metrics = family(closed_port_url(), prometheus)
    check = await metrics.recheck(query(service="order-service"), action_at=prometheus.anchor - timedelta(minutes=4))
    assert check.outcome is VerificationOutcome.INCONCLUSIVE
    assert check.detail.startswith("the query failed: cannot reach Prometheus at http://127.0.0.1:")
    assert check.metric == "http_5xx_rate"


async def test_a_read_that_named_no_service_is_inconclusive(prometheus: PrometheusServer) -> None:
    check = await family(prometheus.url, prometheus).recheck(query(metric="latency_p99"), action_at=prometheus.anchor)
    assert (check.outcome, check.metric, check.detail) == (
        VerificationOutcome.INCONCLUSIVE,
        "latency_p99",
        "the read named no service",
    )


def test_only_a_metrics_query_is_read_again(prometheus: PrometheusServer) -> None:
    metrics = family(prometheus.url, prometheus)
    assert metrics.rechecks(query(service="order-service"))
    assert not metrics.rechecks(ToolCall(name="search_logs", args={"service": "order-service"}))


# --- the judge ---------------------------------------------------------------------------------


def series(values: list[float], labels: dict[str, str] | None = None) -> Series:
    return Series(labels or {}, [(i * 60.0, value) for i, value in enumerate(values)])


AT_THE_END = {"action_at": ACTION_AT, "now": ACTION_AT + 10 * 60}
AT_MINUTE_21 = {"action_at": ACTION_AT, "now": ACTION_AT + 60}
BASELINE = [0.001, 0.0012, 0.0011, 0.001, 0.0012, 0.001, 0.0011, 0.001, 0.0012, 0.001]
INCIDENT = [0.12] * 10
"""Ten minutes at about 0.1%, then ten at 12%: the action runs at the end of the incident (minute 20)."""


@pytest.mark.parametrize(
    ("after", "outcome"),
    [
        ([0.002] * 10, VerificationOutcome.HELD),
        ([0.0011] * 10, VerificationOutcome.HELD),
        ([0.12] * 10, VerificationOutcome.DID_NOT_HOLD),
        ([0.05] * 10, VerificationOutcome.DID_NOT_HOLD),
        ([0.002] * 9 + [0.11], VerificationOutcome.DID_NOT_HOLD),
        ([0.11] * 9 + [0.001], VerificationOutcome.HELD),
    ],
    ids=["recovered", "exactly as before", "still high", "half way down", "relapsed", "recovered at last"],
)
def test_held_is_the_latest_value_back_within_the_range_before_the_incident(after, outcome) -> None:
    check = judge("http_5xx_rate", "percent", [series([*BASELINE, *INCIDENT, 0.12, *after])], **AT_THE_END)
    assert check.outcome is outcome
    assert check.value(check.before) == "12.0%"
    assert check.value(check.now) == check.value(after[-1])
    assert check.baseline_range == "0.10%–0.12%"


def test_noise_before_the_incident_widens_the_range() -> None:
    rng = random.Random(3)
    noisy = [100 + rng.uniform(-8, 8) for _ in BASELINE]
    incident = [400.0] * 10
    check = judge("http_request_rate", "rps", [series([*noisy, *incident, 400.0, 112.0])], **AT_MINUTE_21)
    assert check.outcome is VerificationOutcome.HELD, "12 above a range that varies by ±8 each minute is noise"
    check = judge("http_request_rate", "rps", [series([*noisy, *incident, 400.0, 180.0])], **AT_MINUTE_21)
    assert check.outcome is VerificationOutcome.DID_NOT_HOLD


def test_of_several_series_the_one_that_changed_most_is_judged() -> None:
    calm = series([0.5] * 22, {"pod": "b"})
    sick = series([*BASELINE, *INCIDENT, 0.12, 0.12], {"pod": "a"})
    check = judge("cpu_usage", "cores", [calm, sick], **AT_MINUTE_21)
    assert (check.outcome, check.value(check.now)) == (VerificationOutcome.DID_NOT_HOLD, "0.12cores")


@pytest.mark.parametrize(
    ("values", "detail"),
    [
        ([*BASELINE, *INCIDENT, 0.12], "no data since the action"),
        ([0.12] * 21 + [0.001], "no change before the action to compare with (flat at 12.0%)"),
        ([0.001, *[0.12] * 20, 0.001], "too little data from before the incident to know its normal range"),
        ([float("nan")] * 22, "no data: the query found no values"),
        ([*BASELINE, *INCIDENT, 0.12, 0.002, float("nan")], "no data now: the series stopped after the action"),
    ],
    ids=["nothing since the action", "high all along", "one point before the incident", "all NaN", "NaN now"],
)
def test_without_the_data_to_tell_it_is_inconclusive(values, detail) -> None:
    now = {"action_at": ACTION_AT, "now": (len(values) - 1) * 60.0}
    check = judge("http_5xx_rate", "percent", [series(values)], **now)
    assert (check.outcome, check.detail) == (VerificationOutcome.INCONCLUSIVE, detail)


def test_no_series_at_all_is_inconclusive() -> None:
    check = judge("http_5xx_rate", "percent", [], **AT_MINUTE_21)
    assert (check.outcome, check.detail) == (VerificationOutcome.INCONCLUSIVE, "no data: the query found no values")
