"""The Loki backend against a fake Loki over real HTTP: the LogQL sent, counts, label discovery and every failure."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from opsagent_tools.logs import LogQuery, LogsSettings, log_tools
from opsagent_tools.logs.loki import LokiSettings, build_logql
from testkit.fakes.log_servers import NOW, Failure, FakeLoki, LokiEntry
from testkit.fakes.model_server import closed_port_url
from worlds.dispatch import search_logs

NS = 1_000_000_000


def ago(minutes: float):
    return NOW - timedelta(minutes=minutes)


def entry(minutes: float, line: str, service: str = "order-service", **labels: str) -> LokiEntry:
    return LokiEntry(ago(minutes), {"service_name": service, **labels}, line)


ENTRIES = [
    entry(30, 'level=error msg="upstream connect error #1" upstream=payment-service:8443', pod="order-1"),
    entry(9, 'level=info msg="order 1001 accepted"', pod="order-1"),
    entry(8, 'level=warn msg="slow response 2300ms"', pod="order-2"),
    entry(7, 'level=error msg="upstream connect error #2" upstream=payment-service:8443', pod="order-1"),
    entry(6, 'level=error msg="upstream connect error #3" upstream=payment-service:8443', pod="order-2"),
    entry(5, json.dumps({"level": "error", "msg": "db timeout", "trace_id": "abc123"}), pod="order-2"),
    entry(4, 'level=error msg="upstream 503"', service="gateway", pod="gw-1"),
]


def tools_with(loki, *, sample_size=500, **loki_settings):
    settings = LogsSettings(backend="loki", loki={"url": loki.url, **loki_settings}, sample_size=sample_size)
    return log_tools(settings, now=lambda: NOW)


async def search(tools, **args):
    outcome = await search_logs(tools, **args)
    assert outcome.error is None, outcome.text
    return outcome.text


def query(**overrides) -> LogQuery:
    fields = {"service": "order-service", "since": ago(15), "until": NOW, "level": "error", "query": "", "limit": 20}
    return LogQuery(**(fields | overrides))


# --- LogQL --------------------------------------------------------------------------------------


def test_logql_for_each_level_filter_and_query_form():
    line = LokiSettings()
    assert build_logql(query(), line) == (
        '{service_name="order-service"} |~ `(?i)\\b(error|err|fatal|critical|crit|panic|emerg|alert)\\b`'
    )
    assert build_logql(query(level=None, query='say "hi" \\ bye'), line) == (
        '{service_name="order-service"} |= "say \\"hi\\" \\\\ bye"'
    )
    assert (
        build_logql(query(level="trace", query="re:time(d)?out"), line)
        == '{service_name="order-service"} |~ "time(d)?out"'
    )
    label = LokiSettings(service_label="app", level_filter="label", level_label="detected_level")
    assert build_logql(query(level="warn", query="timeout"), label) == (
        '{app="order-service"} |= "timeout" | detected_level=~"(?i)(warn|warning|wrn|error|err|fatal|critical|crit|panic|emerg|alert)"'
    )
    parsed = LokiSettings(level_filter="json")
    assert build_logql(query(level="fatal"), parsed) == (
        '{service_name="order-service"} | json | level=~"(?i)(fatal|critical|crit|panic|emerg|alert)"'
    )
    raw = '{namespace="prod"} |= "timeout" | logfmt | duration > 10s'
    assert build_logql(query(query=raw), line) == raw


# --- searches over HTTP -------------------------------------------------------------------------


async def test_search_sends_logql_and_window_and_shows_grouped_newest_lines():
    async with FakeLoki(ENTRIES) as loki:
        text = await search(tools_with(loki), service="order-service")
    assert len(loki.requests) == 1  # fewer lines than asked for: they are all of them, no count query
    request = loki.requests[0]
    assert request.path == "/loki/api/v1/query_range"
    assert request.query == {
        "query": '{service_name="order-service"} |~ `(?i)\\b(error|err|fatal|critical|crit|panic|emerg|alert)\\b`',
        "start": str(int(ago(15).timestamp()) * NS),
        "end": str(int(NOW.timestamp()) * NS),
        "limit": "500",
        "direction": "backward",
    }
    assert text == "\n".join(
        [
            "order-service, level=error, t-15m..now (03:23:57Z..03:38:57Z): 3 lines",
            "messages by count:",
            "  2 × upstream connect error #<n>",
            "      03:32:57Z ERROR pod=order-2 upstream connect error #3 upstream=payment-service:8443",
            "      03:31:57Z ERROR pod=order-1 upstream connect error #2 upstream=payment-service:8443",
            "  1 × db timeout",
            "      03:33:57Z ERROR pod=order-2 trace_id=abc123 db timeout",
        ]
    )


async def test_total_comes_from_count_over_time_when_lines_were_cut_off():
    entries = [entry(14 - i / 100, f'level=error msg="timeout #{i}"') for i in range(300)]
    async with FakeLoki(entries) as loki:
        outcome = await search_logs(tools_with(loki, sample_size=40), service="order-service", limit=2)
    text = outcome.text
    selector = '{service_name="order-service"} |~ `(?i)\\b(error|err|fatal|critical|crit|panic|emerg|alert)\\b`'
    assert [r.path for r in loki.requests] == ["/loki/api/v1/query_range", "/loki/api/v1/query"]
    assert loki.requests[0].query["limit"] == "40"
    assert loki.requests[1].query == {
        "query": f"sum(count_over_time({selector} [900s]))",
        "time": str(int(NOW.timestamp()) * NS),
    }
    lines = text.splitlines()
    assert lines[0].endswith(": 300 lines")
    assert lines[1] == "messages by count, in the newest 40 of 300 lines:"
    assert lines[-3:] == [
        "      03:27:56Z ERROR timeout #299",
        "      03:27:55Z ERROR timeout #298",
        "      03:27:33Z ERROR timeout #260",
    ]
    assert outcome.more == "", "the newest 2 the limit asks for are both shown: nothing is left to read elsewhere"


async def test_a_failed_count_leaves_a_lower_bound_and_says_why():
    entries = [entry(14 - i / 100, f'level=error msg="timeout #{i}"') for i in range(60)]
    async with FakeLoki(entries) as loki:
        loki.fail(Failure(500, "query timed out", path="/query"))
        text = await search(tools_with(loki, sample_size=40), service="order-service", limit=1)
    assert [r.path for r in loki.requests] == ["/loki/api/v1/query_range", "/loki/api/v1/query"]
    lines = text.splitlines()
    assert lines[0].endswith(": ≥40 lines")
    assert lines[-1] == (
        "note: Loki could not count every line, so the total is a lower bound: Loki failed with HTTP 500: query timed "
        "out."
    ), "a result's note says what happened, without the model's advice (people read it in the viewer)"


async def test_query_and_level_reach_loki_and_filter_lines():
    async with FakeLoki(ENTRIES) as loki:
        tools = tools_with(loki)
        warn = await search(tools, service="order-service", level="warn", query="slow")
        anything = await search(tools, service="order-service", level="any", query="re:order \\d+")
    assert loki.logql()[0] == (
        '{service_name="order-service"} |= "slow" '
        "|~ `(?i)\\b(warn|warning|wrn|error|err|fatal|critical|crit|panic|emerg|alert)\\b`"
    )
    assert warn.splitlines()[-1] == "      03:30:57Z WARN pod=order-2 slow response 2300ms"
    assert loki.logql()[1] == '{service_name="order-service"} |~ "order \\\\d+"'
    assert anything.splitlines()[0].endswith(": 1 lines")


async def test_json_and_label_level_filters_select_by_the_parsed_or_stored_level():
    entries = [
        entry(3, json.dumps({"level": "ERROR", "msg": "card declined"}), detected_level="error"),
        entry(2, json.dumps({"level": "info", "msg": "error budget report"}), detected_level="info"),
    ]
    async with FakeLoki(entries) as loki:
        by_json = await search(tools_with(loki, level_filter="json"), service="order-service")
        by_label = await search(
            tools_with(loki, level_filter="label", level_label="detected_level"), service="order-service"
        )
        by_line = await search(tools_with(loki), service="order-service")
    assert loki.logql()[0].endswith('| json | level=~"(?i)(error|err|fatal|critical|crit|panic|emerg|alert)"')
    assert loki.logql()[1].endswith('| detected_level=~"(?i)(error|err|fatal|critical|crit|panic|emerg|alert)"')
    for text in (by_json, by_label):
        assert text.splitlines()[0].endswith(": 1 lines")
        assert text.splitlines()[-1] == "      03:35:57Z ERROR card declined"
    # The default line filter also matches a line that only mentions the word: the documented trade-off.
    assert by_line.splitlines()[0].endswith(": 2 lines")


async def test_tenant_and_bearer_token_are_sent(monkeypatch):
    monkeypatch.setenv("OPSAGENT_TEST_LOKI_TOKEN", "glc_test_token_value")
    async with FakeLoki(ENTRIES) as loki:
        await search(tools_with(loki, tenant_id="team-a", token_env="OPSAGENT_TEST_LOKI_TOKEN"), service="gateway")
    assert loki.requests[0].headers["x-scope-orgid"] == "team-a"
    assert loki.requests[0].headers["authorization"] == "Bearer glc_test_token_value"


async def test_zero_lines_lists_the_values_of_the_service_label():
    async with FakeLoki(ENTRIES) as loki:
        text = await search(tools_with(loki), service="orders")
    assert [r.path for r in loki.requests] == ["/loki/api/v1/query_range", "/loki/api/v1/label/service_name/values"]
    assert text.splitlines()[-1] == (
        'No service "orders" has logs in this window. Nearest: order-service. Known services (2): gateway, '
        "order-service."
    )


async def test_zero_lines_with_a_wrong_service_label_names_the_labels_that_exist():
    async with FakeLoki(ENTRIES) as loki:
        text = await search(tools_with(loki, service_label="app"), service="order-service")
    assert [r.path for r in loki.requests][1:] == ["/loki/api/v1/label/app/values", "/loki/api/v1/labels"]
    assert text.splitlines()[-1] == (
        'note: No label "app" is on any stream in this window. Known labels (2): pod, service_name. '
        "tools.logs.loki.service_label names it, so that setting may be wrong, and the services cannot be listed "
        "until it is corrected."
    )


async def test_secrets_in_loki_lines_are_redacted():
    leaky = [
        entry(
            2, 'level=error msg="auth failed" Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl'
        )
    ]
    async with FakeLoki(leaky) as loki:
        outcome = await search_logs(tools_with(loki), service="order-service")
    assert "eyJzdWIiOiIxIn0" not in outcome.text
    assert "Authorization: Bearer [REDACTED:" in outcome.text


# --- failures -----------------------------------------------------------------------------------

PREFIX = "[ToolError] exception: 'search_logs' failed: "


async def test_a_logql_parse_error_is_shown_with_the_query_sent():
    async with FakeLoki(ENTRIES) as loki:
        outcome = await search_logs(tools_with(loki), service="order-service", query="{app=orders")
    assert outcome.text == PREFIX + (
        "Loki rejected the query: parse error at line 1, col 1: syntax error: unexpected IDENTIFIER, expecting { in "
        "{app=orders. LogQL sent: `{app=orders`. Pass plain text as query to search for a substring, or fix the "
        'LogQL (a raw query must start with a stream selector such as {service_name="checkout"}).'
    )


async def test_server_errors_and_bad_credentials_say_what_to_do():
    async with FakeLoki(ENTRIES) as loki:
        loki.fail(Failure(500, "too many outstanding requests"), Failure(401, "no org id"))
        server_error = await search_logs(tools_with(loki), service="order-service")
        refused = await search_logs(tools_with(loki), service="order-service")
    assert server_error.text == PREFIX + (
        "Loki failed with HTTP 500: too many outstanding requests. Try a shorter window or a narrower query; if it "
        "keeps failing, Loki is unhealthy: use other evidence."
    )
    assert refused.text == PREFIX + (
        "Loki refused the credentials (HTTP 401: no org id). Credentials are configuration (tools.logs.loki: "
        "username, password_env, token_env, tenant_id). Tell the user, and use other evidence (metrics, deploys) meanwhile."
    )


async def test_a_hanging_loki_times_out_with_advice():
    async with FakeLoki(ENTRIES) as loki:
        loki.hang(30)
        outcome = await search_logs(tools_with(loki, timeout_s=0.2), service="order-service")
    assert outcome.text == PREFIX + (
        "Loki did not answer within 0.2 s. Narrow the window (a later since) or add a query to cut the lines "
        "scanned, then try again."
    )


async def test_connection_refused_names_the_url():
    url = closed_port_url()
    settings = LogsSettings(backend="loki", loki={"url": url})
    outcome = await search_logs(log_tools(settings, now=lambda: NOW), service="order-service")
    assert outcome.text == PREFIX + (
        f"Cannot reach Loki at {url} (ConnectError: All connection attempts failed). Loki may be down or "
        "tools.logs.loki.url wrong. Tell the user, and use other evidence (metrics, deploys) meanwhile."
    )


@pytest.mark.parametrize("body", ["<html>proxy login</html>", '{"status": "error", "error": "x"}'])
async def test_an_answer_that_is_not_lokis_is_reported(body):
    async with FakeLoki(ENTRIES) as loki:
        loki.fail(Failure(200, body))
        outcome = await search_logs(tools_with(loki), service="order-service")
    assert outcome.text.startswith(PREFIX + f"Loki at {loki.url} answered with something that is not a Loki API")
