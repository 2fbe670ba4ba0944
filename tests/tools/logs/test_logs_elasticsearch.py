"""The Elasticsearch backend against a fake cluster over real HTTP: the search body, totals, auth, and every failure."""

from __future__ import annotations

import base64
from datetime import timedelta

from opsagent_tools.logs import LogsSettings, log_tools
from testkit.fakes.log_servers import NOW, Failure, FakeElasticsearch, es_error
from testkit.fakes.model_server import closed_port_url
from worlds.dispatch import search_logs


def stamp(minutes: float) -> str:
    return (NOW - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def doc(minutes: float, message: str, level: str = "error", service: str = "order-service", **extra):
    return {
        "@timestamp": stamp(minutes),
        "service": {"name": service},
        "log": {"level": level},
        "message": message,
        **extra,
    }


DOCS = [
    doc(40, "upstream connect error #1 → payment-service:8443"),
    doc(9, "order 1001 accepted", "info"),
    doc(8, "slow response 2300ms", "WARN"),
    doc(7, "upstream connect error #2 → payment-service:8443", kubernetes={"pod": {"name": "order-1"}}),
    doc(6, "upstream connect error #3 → payment-service:8443", kubernetes={"pod": {"name": "order-2"}}),
    doc(5, "db timeout", "ERROR", trace={"id": "abc123"}),
    doc(4, "upstream 503", service="gateway"),
]
PREFIX = "[ToolError] exception: 'search_logs' failed: "
ERROR_WORDS = ["ALERT", "Alert", "CRIT", "CRITICAL", "Crit", "Critical", "EMERG", "ERR", "ERROR", "Emerg", "Err",
               "Error", "FATAL", "Fatal", "PANIC", "Panic", "alert", "crit", "critical", "emerg", "err", "error",
               "fatal", "panic"]  # fmt: skip


def tools_with(es, *, sample_size=500, **es_settings):
    settings = LogsSettings(
        backend="elasticsearch",
        elasticsearch={"url": es.url, "index": "logs-*", **es_settings},
        sample_size=sample_size,
    )
    return log_tools(settings, now=lambda: NOW)


async def search(tools, **args):
    outcome = await search_logs(tools, **args)
    assert outcome.error is None, outcome.text
    return outcome.text


async def test_search_body_is_a_filtered_bool_query_sorted_newest_first():
    async with FakeElasticsearch(DOCS) as es:
        text = await search(tools_with(es), service="order-service", query='upstream AND "connect error"')
    request = es.requests[0]
    assert (request.method, request.path) == ("POST", "/logs-*/_search")
    assert request.body == {
        "size": 500,
        "sort": [{"@timestamp": {"order": "desc"}}],
        "track_total_hits": True,
        "query": {
            "bool": {
                "filter": [
                    {
                        "range": {
                            "@timestamp": {
                                "gte": "2026-11-30T03:23:57.000Z",
                                "lte": "2026-11-30T03:38:57.000Z",
                                "format": "strict_date_optional_time",
                            }
                        }
                    },
                    {"term": {"service.name": "order-service"}},
                    {"terms": {"log.level": ERROR_WORDS}},
                    {
                        "query_string": {
                            "query": 'upstream AND "connect error"',
                            "default_field": "message",
                            "default_operator": "AND",
                        }
                    },
                ]
            }
        },
    }
    assert text == "\n".join(
        [
            'order-service, level=error, query="upstream AND \\"connect error\\"", t-15m..now (03:23:57Z..03:38:57Z): '
            "2 lines",
            "messages by count:",
            "  2 × upstream connect error #<n> → payment-service:8443",
            "      03:32:57Z ERROR pod=order-2 upstream connect error #3 → payment-service:8443",
            "      03:31:57Z ERROR pod=order-1 upstream connect error #2 → payment-service:8443",
        ]
    )


async def test_levels_match_in_any_case_and_any_drops_the_filter():
    async with FakeElasticsearch(DOCS) as es:
        tools = tools_with(es)
        errors = await search(tools, service="order-service")
        warn = await search(tools, service="order-service", level="warn")
        everything = await search(tools, service="order-service", level="any")
    assert errors.splitlines()[0].endswith(": 3 lines")
    assert "  03:33:57Z ERROR trace_id=abc123 db timeout" in errors
    assert warn.splitlines()[0].endswith(": 4 lines")
    assert "WARN slow response 2300ms" in warn
    assert everything.splitlines()[0].endswith(": 5 lines")
    assert [f["terms"] for f in es.bodies[2]["query"]["bool"]["filter"] if "terms" in f] == []


async def test_total_is_the_tracked_hit_count_not_the_page():
    docs = [doc(10 - i / 60, f"timeout #{i} calling tax-api") for i in range(120)]
    async with FakeElasticsearch(docs) as es:
        text = await search(tools_with(es, sample_size=30), service="order-service", limit=2)
    assert es.bodies[0]["size"] == 30
    lines = text.splitlines()
    assert lines[0].endswith(": 120 lines")
    assert lines[1:3] == [
        "messages by count, in the newest 30 of 120 lines:",
        "  30 × timeout #<n> calling tax-api  (03:30:27Z..03:30:56Z)",
    ]
    assert lines[3:] == [
        "      03:30:56Z ERROR timeout #119 calling tax-api",
        "      03:30:55Z ERROR timeout #118 calling tax-api",
        "      03:30:27Z ERROR timeout #90 calling tax-api",
    ], "the group's newest two and its first in the page of 30"


async def test_group_field_counts_messages_over_all_hits_with_an_aggregation():
    docs = [doc(10 - i / 10, f"timeout #{i}", error={"type": "TimeoutError"}) for i in range(40)]
    docs += [doc(3, "refused", error={"type": "ConnectionRefused"})]
    async with FakeElasticsearch(docs) as es:
        text = await search(tools_with(es, sample_size=5, group_field="error.type"), service="order-service", limit=1)
    assert es.bodies[0]["aggs"] == {
        "messages": {
            "terms": {"field": "error.type", "size": 10},
            "aggs": {"first": {"min": {"field": "@timestamp"}}, "last": {"max": {"field": "@timestamp"}}},
        }
    }
    assert text.splitlines()[1:4] == [
        "messages by count:",
        "  40 × TimeoutError  (03:28:57Z..03:32:51Z)",
        "   1 × ConnectionRefused  (03:35:57Z)",
    ]


async def test_custom_field_names_are_used_in_the_query_and_to_read_hits():
    flat = [{"ts": stamp(2), "svc": "billing", "lvl": "err", "msg": "card declined", "pod": "billing-1"}]
    async with FakeElasticsearch(flat) as es:
        text = await search(
            tools_with(es, timestamp_field="ts", service_field="svc", level_field="lvl", message_field="msg"),
            service="billing",
            query="declined",
        )
    filters = es.bodies[0]["query"]["bool"]["filter"]
    assert list(filters[0]["range"]) == ["ts"]
    assert filters[1] == {"term": {"svc": "billing"}}
    assert filters[3]["query_string"]["default_field"] == "msg"
    assert es.bodies[0]["sort"] == [{"ts": {"order": "desc"}}]
    assert text.splitlines()[-1] == "      03:36:57Z ERROR pod=billing-1 card declined"


async def test_zero_hits_lists_the_services_with_logs_in_the_window():
    async with FakeElasticsearch(DOCS) as es:
        text = await search(tools_with(es), service="orders")
    assert es.bodies[1] == {
        "size": 0,
        "query": {"bool": {"filter": [es.bodies[0]["query"]["bool"]["filter"][0]]}},
        "aggs": {"services": {"terms": {"field": "service.name", "size": 50}}},
    }
    assert text.splitlines()[-1] == (
        'No service "orders" has logs in this window. Nearest: order-service. Known services (2): gateway, '
        "order-service."
    )


async def test_api_key_and_basic_auth_come_from_named_environment_variables(monkeypatch):
    monkeypatch.setenv("OPSAGENT_TEST_ES_KEY", "c2VjcmV0LWtleS1pZDpzZWNyZXQ=")
    monkeypatch.setenv("OPSAGENT_TEST_ES_PASSWORD", "pa55word")
    async with FakeElasticsearch(DOCS, api_key="c2VjcmV0LWtleS1pZDpzZWNyZXQ=") as es:
        ok = await search(tools_with(es, api_key_env="OPSAGENT_TEST_ES_KEY"), service="gateway")
        refused = await search_logs(
            tools_with(es, username="elastic", password_env="OPSAGENT_TEST_ES_PASSWORD"), service="gateway"
        )
    assert ok.splitlines()[0].endswith(": 1 lines")
    assert es.requests[1].headers["authorization"] == "Basic " + base64.b64encode(b"elastic:pa55word").decode()
    assert refused.text == PREFIX + (
        "Elasticsearch refused the credentials (HTTP 401: security_exception: missing authentication credentials for "
        "REST request [/logs-*/_search]). Credentials are configuration (tools.logs.elasticsearch: "
        "username, password_env, api_key_env). Tell the user, and use other evidence (metrics, deploys) meanwhile."
    )


async def test_secrets_in_hits_are_redacted():
    leaky = [doc(1, "login failed for token=ghp_abcdefghijklmnopqrstuvwxyz0123456789")]
    async with FakeElasticsearch(leaky) as es:
        outcome = await search_logs(tools_with(es), service="order-service")
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in outcome.text
    assert "[REDACTED:" in outcome.text


# --- failures -----------------------------------------------------------------------------------


async def test_a_query_string_parse_error_shows_the_root_cause_and_how_to_fix_it():
    async with FakeElasticsearch(DOCS) as es:
        outcome = await search_logs(tools_with(es), service="order-service", query="(upstream")
    assert outcome.text == PREFIX + (
        "Elasticsearch rejected the search: query_shard_exception: Failed to parse query [(upstream] (caused by: "
        "Cannot parse '(upstream': Encountered \"<EOF>\" at line 1, column 9.). Check the query's syntax (quote "
        'phrases; escape + - = && || > < ! ( ) { } [ ] ^ " ~ * ? : \\ / with a backslash) or drop it.'
    )


async def test_regex_queries_are_refused_with_the_lucene_alternative():
    async with FakeElasticsearch(DOCS) as es:
        outcome = await search_logs(tools_with(es), service="order-service", query="re:time.*out")
    assert es.requests == []
    assert outcome.text == PREFIX + (
        "Elasticsearch searches words, not lines with regular expressions. Drop 're:' and use query_string syntax, "
        'e.g. upstream AND "connect error", or a regex on one word: /time.*out/.'
    )


async def test_missing_index_server_errors_and_partial_failures():
    async with FakeElasticsearch(DOCS) as es:
        missing = await search_logs(tools_with(es, index="logs-prod"), service="order-service")
        es.fail(
            Failure(
                503, es_error(503, "cluster_block_exception", "blocked by: [SERVICE_UNAVAILABLE/1/state not recovered]")
            )
        )
        unavailable = await search_logs(tools_with(es), service="order-service")
        partial = {"took": 1, "timed_out": True, "_shards": {"total": 5, "successful": 3, "failed": 2, "failures": [
            {"reason": {"type": "node_disconnected_exception", "reason": "node left"}}]},
            "hits": {"total": {"value": 0, "relation": "eq"}, "hits": []}}  # fmt: skip
        es.fail(Failure(200, partial))
        half = await search(tools_with(es), service="order-service")
    assert missing.text == PREFIX + (
        f"Elasticsearch has no such index (index_not_found_exception: no such index [logs-prod]; searched {es.url} "
        "index logs-prod). tools.logs.elasticsearch.index may be wrong. Tell the user."
    )
    assert unavailable.text == PREFIX + (
        "Elasticsearch failed with HTTP 503: cluster_block_exception: blocked by: [SERVICE_UNAVAILABLE/1/state not "
        "recovered]. Try a shorter window or a narrower query; if it keeps failing, the cluster is unhealthy: use "
        "other evidence."
    )
    assert half.splitlines()[-2:] == [
        "note: 2 of 5 shards failed (node left): counts may be low.",
        "note: Elasticsearch timed out while searching: the results may be incomplete.",
    ]


async def test_a_hanging_cluster_times_out_and_a_closed_port_is_unreachable():
    async with FakeElasticsearch(DOCS) as es:
        es.hang(30)
        slow = await search_logs(tools_with(es, timeout_s=0.2), service="order-service")
    assert slow.text == PREFIX + (
        "Elasticsearch did not answer within 0.2 s. Narrow the window (a later since) or the query, then try again."
    )
    url = closed_port_url()
    settings = LogsSettings(backend="elasticsearch", elasticsearch={"url": url})
    down = await search_logs(log_tools(settings, now=lambda: NOW), service="order-service")
    assert down.text == PREFIX + (
        f"Cannot reach Elasticsearch at {url} (ConnectError: All connection attempts failed). It may be down or "
        "tools.logs.elasticsearch.url wrong. Tell the user, and use other evidence (metrics, deploys) meanwhile."
    )
