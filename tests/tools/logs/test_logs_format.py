"""The shared log search layer: time parsing, message grouping, the text the model reads, and the tool's arguments."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kernel import ErrorKind
from opsagent_tools.logs import LogQuery, LogsSettings, build_backend, log_tools
from opsagent_tools.logs.records import guess_level
from opsagent_tools.logs.search import (
    LogRecord,
    LogSearchResult,
    MessageGroup,
    canonical_level,
    format_result,
    group_messages,
)
from testkit.fakes.log_servers import NOW
from worlds.dispatch import search_logs


def at(minutes_ago: float) -> datetime:
    return NOW - timedelta(minutes=minutes_ago)


def record(message: str, minutes_ago: float = 1, level: str = "error", **fields: str) -> LogRecord:
    return LogRecord(at(minutes_ago), "order-service", level, message, fields)


def query(**overrides) -> LogQuery:
    settings = {"service": "order-service", "since": at(12), "until": NOW, "level": "error", "query": "", "limit": 20}
    return LogQuery(**(settings | overrides))


# --- levels -------------------------------------------------------------------------------------


def test_levels_are_canonical_and_a_query_level_is_a_minimum():
    assert [canonical_level(w) for w in ("ERROR", "Warning", "err", "CRITICAL", "notice", "nonsense")] == [
        "error", "warn", "error", "fatal", "info", "",
    ]  # fmt: skip
    q = query(level="warn")
    assert [q.accepts(level) for level in ("fatal", "error", "warn", "info", "")] == [True, True, True, False, False]
    assert query(level=None).accepts("")
    assert guess_level("ts=1 level=warn msg=x") == "warn"
    assert guess_level("[main] ERROR c.e.Order - boom") == "error"
    assert guess_level("no level here, only an error word") == ""


# --- grouping -----------------------------------------------------------------------------------


def test_messages_that_differ_only_in_numbers_group_and_constant_parts_stay_visible():
    groups = group_messages(
        [
            record("upstream connect error #123 → payment-service:8443", 1),
            record("upstream connect error #124 → payment-service:8443", 2),
            record("upstream connect error #125 → payment-service:8443", 3),
            record("cache miss", 4),
        ]
    )
    assert groups == [
        MessageGroup("upstream connect error #<n> → payment-service:8443", 3, at(3), at(1)),
        MessageGroup("cache miss", 1, at(4), at(4)),
    ]


@pytest.mark.parametrize(
    ("first", "second", "shape"),
    [
        ("order 5f3c2a1b-1111-2222-3333-444455556666 failed", "order 0e7a9c2d-aaaa-bbbb-cccc-ddddeeeeffff failed",
         "order <uuid> failed"),
        ("dial tcp 10.0.3.17:8443: connection refused", "dial tcp 10.0.9.2:8443: connection refused",
         "dial tcp <ip>: connection refused"),
        ("request took 350ms", "request took 1.25s", "request took <dur>"),
        ("span 7f9c8d2ab1 closed", "span 0a1b2c3d4e closed", "span <hex> closed"),
        ('user "alice" not found', 'user "bob" not found', 'user "…" not found'),
        ("at 2026-11-30T03:00:01Z retry", "at 2026-11-30T03:00:09Z retry", "at <time> retry"),
    ],
)  # fmt: skip
def test_variable_parts_are_folded(first, second, shape):
    assert group_messages([record(first), record(second)])[0] == MessageGroup(shape, 2, at(1), at(1))


def test_words_with_digits_and_first_lines_of_stack_traces_group_sensibly():
    groups = group_messages(
        [record("http2 stream reset on v2 api\n at a.B(B.java:1)"), record("http2 stream reset on v2 api\n at c.D")]
    )
    assert groups == [MessageGroup("http2 stream reset on v2 api", 2, at(1), at(1))]


# --- the text the model reads -------------------------------------------------------------------


def test_result_shows_count_groups_each_with_its_newest_and_first_lines_and_keeps_the_rest_for_read_output():
    records = [
        record(f"upstream connect error #{i} → payment-service:8443", i / 10, pod="order-7f9c") for i in range(8)
    ]
    records.append(record("db pool exhausted", 5, pod="order-2b1d"))
    result = LogSearchResult(total=1482, records=records, groups=group_messages(records))
    view = format_result(query(limit=3), result, window="t-12m..now")
    assert view.text == "\n".join(
        [
            "order-service, level=error, t-12m..now (03:26:57Z..03:38:57Z): 1,482 lines",
            "messages by count:",
            "  8 × upstream connect error #<n> → payment-service:8443  (03:38:15Z..03:38:57Z)",
            "      03:38:57Z ERROR pod=order-7f9c upstream connect error #0 → payment-service:8443",
            "      03:38:51Z ERROR pod=order-7f9c upstream connect error #1 → payment-service:8443",
            "      03:38:15Z ERROR pod=order-7f9c upstream connect error #7 → payment-service:8443",
            "  1 × db pool exhausted",
            "      03:33:57Z ERROR pod=order-2b1d db pool exhausted",
            "  … 1,473 more lines of other kinds",
        ]
    )
    assert view.more == "\n".join(
        [
            "newest 3 of 1,482:",
            "  03:38:57Z ERROR pod=order-7f9c upstream connect error #0 → payment-service:8443",
            "  03:38:51Z ERROR pod=order-7f9c upstream connect error #1 → payment-service:8443",
            "  03:38:45Z ERROR pod=order-7f9c upstream connect error #2 → payment-service:8443",
        ]
    ), "the newest line the exemplars left out (#2) is kept for read_output"


def test_twenty_lines_alike_but_for_pod_and_trace_id_cost_one_count_and_three_lines():
    records = [
        record("NullPointerException in CheckoutController.submit", i / 10, pod=f"pod-{i % 4}", trace_id=f"t{i:04d}")
        for i in range(20)
    ]
    view = format_result(query(), LogSearchResult(total=20, records=records), window="t-12m..now")
    lines = view.text.splitlines()
    assert lines[1:3] == [
        "messages by count:",
        "  20 × NullPointerException in CheckoutController.submit  (03:37:03Z..03:38:57Z)",
    ]
    assert [line.split()[3] for line in lines[3:]] == ["trace_id=t0000", "trace_id=t0001", "trace_id=t0019"], (
        "the newest two and the first occurrence, and nothing after them"
    )
    assert view.more.count("\n  ") == 20, "every one of the 20 lines stays reachable"
    assert len(view.text) < len(view.more) / 3


def test_lines_of_no_group_shown_follow_the_groups_newest_first():
    records = [record(f"kind {chr(97 + i)} happened", i) for i in range(4)]
    view = format_result(query(), LogSearchResult(total=4, records=records), window="t-12m..now", max_groups=2)
    assert view.text.splitlines()[-3:] == [
        "other lines, newest 2:",
        "  03:36:57Z ERROR kind c happened",
        "  03:35:57Z ERROR kind d happened",
    ]
    assert view.more == "", "every line is shown: nothing to read elsewhere"


def test_groups_from_a_sample_say_they_are_from_a_sample():
    records = [record("timeout calling inventory", i) for i in range(3)]
    text = format_result(query(limit=1), LogSearchResult(total=40, records=records), window="t-12m..now").text
    assert "messages by count, in the newest 3 of 40 lines:\n  3 × timeout calling inventory" in text
    assert "  … 37 more lines" not in text  # the rest was never seen, so it is not described


def test_long_lines_are_capped_and_query_and_lower_bound_are_shown():
    long = "x" * 1000
    result = LogSearchResult(total=10_000, records=[record(long)], total_is_lower_bound=True)
    text = format_result(query(query='say "hi"', level=None), result, window="t-12m..now").text
    lines = text.splitlines()
    assert (
        lines[0] == 'order-service, level=any, query="say \\"hi\\"", t-12m..now (03:26:57Z..03:38:57Z): ≥10,000 lines'
    )
    assert lines[-1].startswith("      03:37:57Z ERROR xxx"), "the group's one line, under its count"
    assert len(lines[-1]) == len("      ") + 300  # indent, then the line capped at 300 chars
    assert lines[-1].endswith("…")


def test_window_across_days_shows_dates():
    q = query(since=NOW - timedelta(days=1))
    text = format_result(q, LogSearchResult(total=1, records=[record("boom")]), window="t-1d..now").text
    assert text.splitlines()[0].endswith("t-1d..now (2026-11-29T03:38:57Z..2026-11-30T03:38:57Z): 1 lines")
    assert text.splitlines()[-1] == "      2026-11-30T03:37:57Z ERROR boom"


def test_zero_lines_gives_next_steps_and_names_the_services_that_have_logs():
    result = LogSearchResult(total=0, records=[], services=["payment-service", "gateway", "orders"])
    text = format_result(query(query="timeout"), result, window="t-12m..now").text
    assert text == "\n".join(
        [
            'order-service, level=error, query="timeout", t-12m..now (03:26:57Z..03:38:57Z): 0 lines',
            'No lines matched. Next: widen the window (since="1h"), drop the level filter (level="any"), '
            "loosen or drop the query, check the service name.",
            'No service "order-service" has logs in this window. Nearest: orders, payment-service. '
            "Known services (3): gateway, orders, payment-service.",
        ]
    )


def test_zero_lines_for_a_known_service_without_filters_suggests_only_what_applies():
    result = LogSearchResult(total=0, records=[], services=["order-service"], notes=["3 files skipped."])
    text = format_result(query(level=None, since=NOW - timedelta(hours=3)), result, window="t-3h..now").text
    assert text.splitlines()[1:] == [
        'No lines matched. Next: widen the window (since="6h"), check the service name.',
        "Services with logs in this window: order-service.",
        "note: 3 files skipped.",
    ]


# --- the tool's arguments -----------------------------------------------------------------------


class RecordingBackend:
    def __init__(self) -> None:
        self.queries: list[LogQuery] = []

    async def search(self, q: LogQuery) -> LogSearchResult:
        self.queries.append(q)
        return LogSearchResult(total=1, records=[record("boom")])


@pytest.fixture
def recorded(tmp_path):
    backend = RecordingBackend()
    tools = log_tools(LogsSettings(files={"directory": tmp_path}), backend=backend, now=lambda: NOW)
    return backend, tools


async def test_tool_turns_arguments_into_a_query(recorded):
    backend, tools = recorded
    outcome = await search_logs(tools, service=" order-service ", since="t-12m", level="warning", query=" timeout ")
    assert outcome.error is None
    assert backend.queries == [
        LogQuery("order-service", at(12), NOW, "warn", "timeout", limit=20, sample=500),
    ]
    await search_logs(tools, service="gateway", since="2026-11-30T03:00:00Z", until="2026-11-30T03:30:00Z", level="all")
    assert backend.queries[1].level is None
    assert backend.queries[1].since == datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
    assert outcome.text.startswith('order-service, level=warn, query="timeout", t-12m..now (03:26:57Z..03:38:57Z)')


@pytest.mark.parametrize("limit", [0, 201])
async def test_limit_outside_1_to_200_is_refused_before_the_backend_is_asked(recorded, limit):
    backend, tools = recorded
    outcome = await search_logs(tools, service="order-service", limit=limit)
    assert outcome.error.kind is ErrorKind.BAD_ARGS
    assert "- limit: Input should be" in outcome.text
    assert backend.queries == []


async def test_bad_times_and_reversed_windows_are_model_facing_errors(recorded):
    backend, tools = recorded
    outcome = await search_logs(tools, service="order-service", since="yesterday")
    assert outcome.error.kind is ErrorKind.EXCEPTION
    assert outcome.text.startswith(
        "[ToolError] exception: 'search_logs' failed: Cannot read the time 'yesterday'. Use "
    )
    outcome = await search_logs(tools, service="order-service", since="5m", until="10m")
    assert outcome.text == (
        "[ToolError] exception: 'search_logs' failed: since ('5m') is not before until ('10m'). since is the start "
        "of the window, e.g. since='1h', until='now'."
    )
    assert backend.queries == []


def test_description_names_the_pitfalls_and_the_query_syntax(recorded):
    _, tools = recorded
    spec = tools[0].spec
    assert "search service=gateway" in spec.description
    assert "level=error (the default) hides warnings" in spec.description
    assert "level=any (or all)" in spec.description
    assert "'re:'" in spec.description
    assert spec.parameters["properties"]["limit"] | {} == {
        "default": 20,
        "description": "Newest matching lines to show; the counts cover all of them.",
        "maximum": 200,
        "minimum": 1,
        "type": "integer",
    }


def test_settings_need_a_directory_for_files_and_secrets_from_named_variables(monkeypatch):
    with pytest.raises(ValueError, match=r'tools.logs.backend is "files" but tools.logs.files.directory is not set'):
        LogsSettings()
    settings = LogsSettings(backend="elasticsearch", elasticsearch={"api_key_env": "OPSAGENT_TEST_ES_KEY"})
    monkeypatch.delenv("OPSAGENT_TEST_ES_KEY", raising=False)
    with pytest.raises(ValueError, match="api_key_env names the environment variable OPSAGENT_TEST_ES_KEY, but it is"):
        build_backend(settings)
    assert "OPSAGENT_TEST_ES_KEY" in settings.model_dump_json()  # the name is stored, never the key
