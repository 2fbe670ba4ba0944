"""The time words every tool family reads and writes: durations, windows, spans, relative times and ISO-8601."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernel import ToolFailure
from opsagent_tools.time_words import (
    clock_span,
    describe_time,
    format_span,
    parse_duration,
    parse_time,
    relative_time,
    utc_now,
    window_seconds,
)

NOW = datetime(2026, 11, 30, 3, 38, 57, tzinfo=UTC)
BAD_TIME = (
    "Cannot read the time 'yesterday'.",
    "Use a relative time such as '15m', '2h', '1d' or 't-12m' (that long before "
    "now), 'now', or an ISO-8601 time such as '2026-11-30T03:20:00Z' or '2026-11-30T04:20:00+01:00'.",
)


def at(minutes_ago: float) -> datetime:
    return NOW - timedelta(minutes=minutes_ago)


# --- durations and windows ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"), [("15m", 900), ("1h", 3600), ("2h30m", 9000), (" 1D ", 86400), ("1w", 604800)]
)
def test_durations_read_as_seconds(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["90 minutes", "1.5h", "h", "", "15x"])
def test_anything_else_is_not_a_duration_and_says_how_to_write_one(text):
    with pytest.raises(ToolFailure) as caught:
        parse_duration(text, "step")
    assert str(caught.value) == f'step "{text}" is not a duration.', "people read what is wrong"
    assert caught.value.hint == "Write it like 15m, 1h or 2h30m (units s, m, h, d).", "the model, how to write it"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("30s", ('window "30s" is shorter than 1m.', "Use at least 1m")),
        ("8d", ('window "8d" is longer than 7d.', "Use at most 7d")),
    ],
)
def test_a_window_is_between_a_minute_and_a_week(text, error):
    assert window_seconds("1m") == 60
    assert window_seconds("7d") == 7 * 86400
    said, hint = error
    with pytest.raises(ToolFailure) as caught:
        window_seconds(text)
    assert (str(caught.value), caught.value.hint.startswith(hint)) == (said, True)


@given(counts=st.lists(st.tuples(st.integers(0, 500), st.sampled_from("wdhms")), min_size=1, max_size=4))
def test_a_duration_reads_alike_as_a_window_and_as_a_time_before_now(counts):
    text = "".join(f"{count}{unit}" for count, unit in counts)
    assert parse_time(text, NOW) == NOW - timedelta(seconds=parse_duration(text))


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (45, "45s"),
        (90, "1m30s"),
        (600, "10m"),
        (3600, "1h"),
        (5430, "1h31m"),
        (2 * 86400 + 3 * 3600, "2d3h"),
    ],
)
def test_spans_are_compact(seconds: float, text: str) -> None:
    assert format_span(seconds) == text


def test_a_clock_span_shows_dates_only_across_midnight():
    assert clock_span(at(20), at(5)) == "03:18–03:33 UTC"
    assert clock_span(at(5), at(5)) == "at 03:33 UTC"
    assert clock_span(at(240), NOW) == "11-29 23:38–11-30 03:38 UTC"


# --- points in time -----------------------------------------------------------------------------


def test_times_are_relative_to_now() -> None:
    now = 1_800.0
    assert relative_time(now, now) == "now"
    assert relative_time(now - 0.4, now) == "now"
    assert relative_time(now - 600, now) == "t-10m"
    assert relative_time(now - 5400, now) == "t-1h30m"
    assert relative_time(now + 60, now) == "t+1m"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("now", NOW),
        ("15m", at(15)),
        ("t-12m", at(12)),
        ("-12m", at(12)),
        ("now-2h", NOW - timedelta(hours=2)),
        ("2h", NOW - timedelta(hours=2)),
        ("1d", NOW - timedelta(days=1)),
        ("1h30m", at(90)),
        ("90s", NOW - timedelta(seconds=90)),
        ("2026-11-30T03:20:00Z", datetime(2026, 11, 30, 3, 20, tzinfo=UTC)),
        ("2026-11-30T04:20:00+01:00", datetime(2026, 11, 30, 3, 20, tzinfo=UTC)),
        ("2026-11-30T03:20:00.250Z", datetime(2026, 11, 30, 3, 20, 0, 250_000, tzinfo=UTC)),
        ("2026-11-30 03:20:00", datetime(2026, 11, 30, 3, 20, tzinfo=UTC)),  # no offset: UTC
    ],
)
def test_parse_time_accepts_relative_and_iso_times(text, expected):
    assert parse_time(text, NOW) == expected


@pytest.mark.parametrize("text", ["yesterday", "15 minutes", "12x", "30-11-2026"])
def test_parse_time_rejects_anything_else_naming_the_accepted_formats(text):
    with pytest.raises(ToolFailure) as caught:
        parse_time(text, NOW)
    said, hint = BAD_TIME
    assert (str(caught.value), caught.value.hint) == (said.replace("'yesterday'", repr(text)), hint)


def test_describe_time_keeps_relative_times_short_and_shows_iso_in_utc():
    assert describe_time("12m", at(12)) == "t-12m"
    assert describe_time("t-12m", at(12)) == "t-12m"
    assert describe_time("now", NOW) == "now"
    when = parse_time("2026-11-30T04:20:00+01:00", NOW)
    assert describe_time("2026-11-30T04:20:00+01:00", when) == "2026-11-30T03:20:00Z"


def test_the_wall_clock_is_aware_and_in_utc():
    before = datetime.now(UTC)
    now = utc_now()
    assert now.tzinfo is UTC
    assert before <= now <= datetime.now(UTC)
