"""Unit tests of the series helpers: value units, relative times, downsampling and change-point summaries."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opsagent_tools.metrics.series import (
    Series,
    describe_change,
    distinguishing_labels,
    downsample,
    format_labels,
    format_value,
    render_points,
    report_series,
)

NOW = 1_800.0
MINUTES = [i * 60.0 for i in range(31)]
"""A 30-minute window sampled every minute, ending at NOW."""


def shape(values: list[float]) -> list[tuple[float, float]]:
    return list(zip(MINUTES, values, strict=True))


def noisy(level: float, spread: float, seed: int = 1) -> list[float]:
    rng = random.Random(seed)
    return [level * (1 + rng.uniform(-spread, spread)) for _ in MINUTES]


# --- values and times -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (0.001, "percent", "0.10%"),
        (0.0009, "percent", "0.09%"),
        (0.042, "percent", "4.2%"),
        (0.12, "percent", "12.0%"),
        (1.0, "percent", "100%"),
        (0.0, "percent", "0%"),
        (0.000004, "percent", "0.0004%"),
        (0.2333, "seconds", "233ms"),
        (4.75, "seconds", "4.75s"),
        (0.0125, "seconds", "12.5ms"),
        (0.00001, "seconds", "10.0µs"),
        (900.0, "seconds", "15.0min"),
        (512.0, "bytes", "512B"),
        (2048.0, "bytes", "2.00KiB"),
        (300 * 1024**2, "bytes", "300MiB"),
        (3 * 1024**3, "bytes", "3.00GiB"),
        (3.0, "count", "3"),
        (12_345.0, "count", "12.3k"),
        (1.5e7, "count", "15.0M"),
        (99.96, "rps", "100req/s"),
        (12.34, "rps", "12.3req/s"),
        (0.25, "cores", "0.25cores"),
        (0.5, None, "0.5"),
        (1234.5, None, "1234"),
        (float("nan"), "percent", "NaN"),
        (float("inf"), "seconds", "+Inf"),
        (float("-inf"), None, "-Inf"),
    ],
)
def test_values_read_with_their_unit(value: float, unit: str | None, text: str) -> None:
    assert format_value(value, unit) == text


# --- downsampling -----------------------------------------------------------------------------


def test_short_series_are_shown_whole() -> None:
    points = shape([0.001] * 31)
    assert downsample(points, 31) == points


def test_downsampling_keeps_spikes_and_the_last_point() -> None:
    points = [(i * 15.0, 1.0) for i in range(240)]
    points[101] = (101 * 15.0, 50.0)
    points[-1] = (239 * 15.0, 2.0)
    kept = downsample(points, 30)
    assert len(kept) == 30
    assert (101 * 15.0, 50.0) in kept
    assert kept[-1] == (239 * 15.0, 2.0)
    assert [t for t, _ in kept] == sorted(t for t, _ in kept)


def test_downsampling_prefers_finite_values_in_a_bucket() -> None:
    points = [(float(i), math.nan if i % 2 else 1.0) for i in range(100)]
    assert all(math.isfinite(v) for _, v in downsample(points, 10)[:-1])


def test_points_render_in_relative_time_with_units() -> None:
    text = render_points(shape([0.001] * 20 + [0.12] * 11), NOW, "percent")
    assert text.startswith("t-30m:0.10% t-29m:0.10%")
    assert "t-11m:0.10% t-10m:12.0%" in text
    assert text.endswith("t-1m:12.0% now:12.0%")
    assert len(text.split()) == 31


def test_rendering_caps_the_number_of_points() -> None:
    points = [(NOW - 3600 + i * 15.0, float(i)) for i in range(241)]
    assert len(render_points(points, NOW, "count", max_points=32).split()) == 32


# --- change points ----------------------------------------------------------------------------


def test_a_step_up_is_a_jump_with_its_time() -> None:
    change = describe_change(shape([0.001] * 20 + [0.12] * 11), NOW, "percent")
    assert change.kind == "jump"
    assert change.text == "jumped from 0.10% to 12.0% at t-10m"


def test_a_step_smeared_by_rate_over_two_points_is_still_a_jump() -> None:
    change = describe_change(shape([0.001] * 20 + [0.06] + [0.12] * 10), NOW, "percent")
    assert change.text == "jumped from 0.10% to 12.0% at t-10m"


def test_a_jump_that_keeps_rising_says_where_it_is_now() -> None:
    values = [0.001] * 20 + [0.042 + i * 0.0078 for i in range(11)]
    change = describe_change(shape(values), NOW, "percent")
    assert change.text == "jumped from 0.10% to 4.2% at t-10m, now 12.0%"


def test_a_noisy_step_is_found() -> None:
    values = noisy(0.001, 0.3)[:20] + noisy(0.12, 0.3, seed=2)[20:]
    change = describe_change(shape(values), NOW, "percent")
    assert change.kind == "jump"
    assert change.text.startswith("jumped from 0.1")
    assert " at t-10m" in change.text


def test_a_step_down_is_a_drop() -> None:
    change = describe_change(shape([100.0] * 15 + [3.0] * 16), NOW, "rps")
    assert change.kind == "drop"
    assert change.text == "dropped from 100req/s to 3req/s at t-15m"


def test_a_drift_is_gradual_with_its_span() -> None:
    change = describe_change(shape([0.001 + 0.022 * i / 30 for i in range(31)]), NOW, "percent")
    assert change.kind == "rise"
    assert change.text.startswith("rose gradually from 0.1")
    assert " to 2.2% over 2" in change.text


def test_a_ramp_between_two_levels_is_gradual() -> None:
    values = [0.2] * 10 + [0.2 + 0.07 * i for i in range(1, 11)] + [0.9] * 11
    change = describe_change(shape(values), NOW, "seconds")
    assert change.text == "rose gradually from 200ms to 900ms over 10m (t-21m to t-11m)"


def test_a_falling_drift_is_a_fall() -> None:
    change = describe_change(shape([500.0 - 10 * i for i in range(31)]), NOW, "count")
    assert change.kind == "fall"
    assert change.text.startswith("fell gradually from 490 to 210")


@pytest.mark.parametrize("seed", range(5))
def test_noise_is_flat(seed: int) -> None:
    change = describe_change(shape(noisy(0.001, 0.1, seed)), NOW, "percent")
    assert change.kind == "flat"
    assert change.text in {"flat at about 0.10%; no change point", "flat at about 0.09%; no change point"}
    assert change.size == 0


def test_a_constant_series_is_flat() -> None:
    assert describe_change(shape([0.2] * 31), NOW, "cores").text == "flat at about 0.2cores; no change point"


def test_a_change_from_zero_counts_however_small() -> None:
    change = describe_change(shape([0.0] * 20 + [0.0005] * 11), NOW, "percent")
    assert change.text == "jumped from 0% to 0.05% at t-10m"


def test_a_brief_spike_says_when_and_the_level_around_it() -> None:
    values = [0.001] * 31
    values[10:13] = [0.08, 0.08, 0.08]
    change = describe_change(shape(values), NOW, "percent")
    assert change.kind == "spike"
    assert change.text == "brief spike to 8.0% (t-20m to t-18m), otherwise about 0.10%"


def test_a_single_point_dip() -> None:
    values = [100.0] * 31
    values[15] = 10.0
    change = describe_change(shape(values), NOW, "rps")
    assert change.text == "brief dip to 10req/s at t-15m, otherwise about 100req/s"


def test_a_jump_in_the_last_sample() -> None:
    change = describe_change(shape([0.2] * 30 + [0.5]), NOW, "cores")
    assert change.text == "jumped from 0.2cores to 0.5cores in the last sample"


def test_no_points_is_no_data() -> None:
    change = describe_change([], NOW, "percent")
    assert (change.kind, change.text) == ("no_data", "no data in the window")


def test_only_nan_says_why_it_may_be() -> None:
    change = describe_change(shape([math.nan] * 31), NOW, "percent")
    assert change.kind == "no_data"
    assert change.text.startswith("no finite values: all 31 points are NaN or ±Inf")


def test_nan_and_inf_samples_are_ignored() -> None:
    values = [0.001] * 20 + [0.12] * 11
    values[5], values[25] = math.nan, math.inf
    assert describe_change(shape(values), NOW, "percent").text == "jumped from 0.10% to 12.0% at t-10m"


def test_too_few_points_are_listed() -> None:
    assert describe_change([(NOW - 60, 1.0), (NOW, 2.0)], NOW).text == "only 2 points: 1 at t-1m, 2 at now"
    assert describe_change([(NOW, 0.5)], NOW, "percent").text == "one point only: 50.0% at now"


def test_every_kind_of_change_has_a_brief_for_people() -> None:
    spike = [0.001] * 31
    spike[10:13] = [0.08, 0.08, 0.08]
    dip = [100.0] * 31
    dip[15] = 10.0
    briefs = [
        (describe_change(shape([0.001] * 20 + [0.12] * 11), NOW, "percent").brief, "0.10% → 12.0% at t-10m"),
        (describe_change(shape([0.2] * 30 + [0.5]), NOW, "cores").brief, "0.2cores → 0.5cores in the last sample"),
        (describe_change(shape(spike), NOW, "percent").brief, "spike to 8.0% (t-20m to t-18m), else 0.10%"),
        (describe_change(shape(dip), NOW, "rps").brief, "dip to 10req/s at t-15m, else 100req/s"),
        (describe_change(shape([0.2] * 31), NOW, "cores").brief, "flat at 0.2cores"),
        (describe_change(shape([float(i) for i in range(31)]), NOW).brief, "rose 1 → 29 over 26m, now 30"),
        (describe_change([(NOW - 60, 1.0), (NOW, 2.0)], NOW).brief, "2 points: 1 → 2"),
        (describe_change([(NOW, 0.5)], NOW, "percent").brief, "one point: 50.0% at now"),
        (describe_change([], NOW).brief, "no data"),
        (describe_change(shape([math.nan] * 31), NOW).brief, "no finite values (NaN)"),
    ]
    assert [brief for brief, _ in briefs] == [expected for _, expected in briefs]


# --- several series ---------------------------------------------------------------------------


def test_labels_shared_by_every_series_are_dropped() -> None:
    series = [
        Series({"service": "order-service", "pod": "a"}, []),
        Series({"service": "order-service", "pod": "b"}, []),
    ]
    assert distinguishing_labels(series) == [{"pod": "a"}, {"pod": "b"}]
    assert distinguishing_labels(series[:1]) == [{}]
    assert format_labels({"pod": "a", "code": "500"}) == '{code="500",pod="a"}'
    assert format_labels({}) == ""


def test_series_are_ranked_by_change_and_capped() -> None:
    flat = [Series({"pod": f"flat-{i}"}, shape([0.2] * 31)) for i in range(6)]
    hot = Series({"pod": "hot"}, shape([0.2] * 20 + [0.9] * 11))
    shown, left_out = report_series([*flat, hot], NOW, "cores", top=3)
    assert [report.labels for report in shown] == [{"pod": "hot"}, {"pod": "flat-0"}, {"pod": "flat-1"}]
    assert shown[0].change.text == "jumped from 0.2cores to 0.9cores at t-10m"
    assert shown[0].points.endswith("now:0.9cores")
    assert left_out == 4


# --- properties -------------------------------------------------------------------------------

any_value = st.floats(allow_nan=True, allow_infinity=True)
finite_value = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def series_points(draw: st.DrawFn, values: st.SearchStrategy[float] = any_value) -> list[tuple[float, float]]:
    gaps = draw(st.lists(st.floats(min_value=0.001, max_value=3600), max_size=80))
    times, t = [], 1_700_000_000.0
    for gap in gaps:
        t += gap
        times.append(t)
    return [(ts, draw(values)) for ts in times]


@settings(max_examples=300, deadline=None)
@given(points=series_points(finite_value), unit=st.sampled_from([None, "percent", "seconds", "bytes", "count", "rps"]))
def test_finite_series_always_get_one_line(points: list[tuple[float, float]], unit: str | None) -> None:
    now = points[-1][0] if points else 0.0
    change = describe_change(points, now, unit)
    assert change.text
    assert "\n" not in change.text
    assert change.size >= 0 or math.isnan(change.size)


@settings(max_examples=300, deadline=None)
@given(points=series_points(), unit=st.sampled_from([None, "percent", "seconds", "bytes"]), cap=st.integers(1, 40))
def test_any_series_renders_within_the_cap(points: list[tuple[float, float]], unit: str | None, cap: int) -> None:
    now = points[-1][0] + 30 if points else 0.0
    describe_change(points, now, unit)
    rendered = render_points(points, now, unit, max_points=cap)
    assert len(rendered.split()) == min(len(points), cap)
