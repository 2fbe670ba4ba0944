"""`discover` against the local Loki and Elasticsearch servers: stream labels and values, index patterns and
fields (with a misconfigured field named), answers cached per process with a time-to-live and a bound."""

from __future__ import annotations

from datetime import timedelta

from kernel import ToolRegistry
from opsagent_tools.discovery import DiscoverySettings
from opsagent_tools.logs import LogsSettings
from opsagent_tools.logs.discovery import index_pattern
from opsagent_tools.logs.files import FileLogSettings
from opsagent_tools.toolset import ToolsSettings, build_tools
from testkit.fakes.log_servers import NOW, FakeElasticsearch, FakeLoki, LokiEntry
from worlds.dispatch import dispatch_call

ENTRIES = [
    LokiEntry(NOW - timedelta(minutes=m), {"service_name": s, "pod": p, "env": "prod"}, "level=error msg=x")
    for m, s, p in ((30, "order-service", "order-1"), (9, "order-service", "order-2"), (4, "gateway", "gw-1"))
]
OLD = LokiEntry(NOW - timedelta(hours=8), {"service_name": "legacy", "team": "old"}, "older than the lookback")


def loki_tools(loki: FakeLoki, **discover: float) -> ToolRegistry:
    settings = ToolsSettings(
        logs=LogsSettings(backend="loki", loki={"url": loki.url}), discover=DiscoverySettings(**discover)
    )
    return build_tools(settings, now=lambda: NOW)


async def discover(tools: ToolRegistry, kind: str, filter: str | None = None) -> str:
    outcome = await dispatch_call(tools, "discover", kind=kind, **({"filter": filter} if filter is not None else {}))
    assert outcome.error is None, outcome.text
    return outcome.text


async def test_loki_labels_with_their_values_within_the_lookback():
    async with FakeLoki([*ENTRIES, OLD]) as loki:
        text = await discover(loki_tools(loki), "loki_labels")
    assert text.splitlines() == [
        "Stream labels in the last 6h (3); search_logs selects services by service_name:",
        "  env (1): prod",
        "  pod (3): gw-1, order-1, order-2",
        "  service_name (2): gateway, order-service",
    ]


async def test_one_loki_labels_values_and_an_unknown_label():
    async with FakeLoki(ENTRIES) as loki:
        tools = loki_tools(loki)
        values = await discover(tools, "loki_labels", "service_name")
        unknown = await discover(tools, "loki_labels", "service")
        injected = await discover(tools, "loki_labels", "../query_range?query=x")
    assert values == "Values of label service_name in the last 6h (2): gateway, order-service"
    assert unknown == (
        'No label "service" is on any stream in the last 6h. Nearest: service_name. Known labels (3): env, pod, '
        "service_name."
    )
    assert injected.startswith('No label "../query_range?query=x" is on any stream'), "never put in a URL path"


async def test_answers_are_cached_until_their_time_to_live_runs_out():
    async with FakeLoki(ENTRIES) as loki:
        cached = loki_tools(loki)
        await discover(cached, "loki_labels", "pod")
        asked = len(loki.requests)
        await discover(cached, "loki_labels", "pod")
        assert len(loki.requests) == asked, "the second answer came from the cache"
        await discover(cached, "loki_labels", "env")
        assert len(loki.requests) > asked, "another filter is another question"
        uncached = loki_tools(loki, ttl_s=0)
        await discover(uncached, "loki_labels", "pod")
        before = len(loki.requests)
        await discover(uncached, "loki_labels", "pod")
        assert len(loki.requests) > before


def es_tools(es: FakeElasticsearch, **settings: str) -> ToolRegistry:
    logs = LogsSettings(backend="elasticsearch", elasticsearch={"url": es.url, "index": "logs-app-*", **settings})
    return build_tools(ToolsSettings(logs=logs), now=lambda: NOW)


DOCS = [
    {"@timestamp": "2026-11-30T03:30:00.000Z", "service": {"name": "order-service"}, "log": {"level": "error"},
     "message": "upstream connect error", "http": {"response": {"status_code": 503}}, "retry": False},
]  # fmt: skip
OTHERS = {
    "logs-app-2026.11.29": 40,
    "logs-app-2026.11.28": 50,
    "logs-gateway": 7,
    ".ds-logs-nginx-default-2026.11.30-000001": 12,
    ".ds-logs-nginx-default-2026.11.30-000002": 3,
}


def test_an_index_belongs_to_the_pattern_of_its_name_without_dates():
    assert index_pattern("logs-app-2026.11.30") == "logs-app-*"
    assert index_pattern("metrics-202611") == "metrics-*"
    assert index_pattern(".ds-logs-nginx-default-2026.11.30-000001") == "logs-nginx-default"
    assert index_pattern("logs-gateway") == "logs-gateway"


async def test_elasticsearch_index_patterns_with_their_document_counts():
    async with FakeElasticsearch(DOCS, index="logs-app-2026.11.30", others=OTHERS) as es:
        every = await discover(es_tools(es), "elasticsearch_indices")
        none = await discover(es_tools(es), "elasticsearch_indices", "traces-*")
    assert every.splitlines() == [
        "Indices matching *: 6 in 3 patterns (search_logs searches logs-app-*):",
        "  logs-app-* (3 indices, 91 docs): logs-app-2026.11.28 … logs-app-2026.11.30",
        "  logs-gateway (1 index, 7 docs): logs-gateway",
        "  logs-nginx-default (2 indices, 15 docs): .ds-logs-nginx-default-2026.11.30-000001 … "
        ".ds-logs-nginx-default-2026.11.30-000002",
    ]
    assert none == 'No open index matches traces-*. discover(kind="elasticsearch_indices") lists every index.'
    assert es.requests[0].path == "/_cat/indices/*"
    assert es.requests[0].query == {"format": "json", "h": "index,docs.count", "s": "index"}


async def test_elasticsearch_fields_by_type_and_a_setting_that_names_no_field():
    async with FakeElasticsearch(DOCS, index="logs-app-2026.11.30", others=OTHERS) as es:
        text = await discover(es_tools(es, service_field="service.keyword"), "elasticsearch_fields")
        missing = await dispatch_call(es_tools(es), "discover", kind="elasticsearch_fields", filter="traces")
    assert text.splitlines() == [
        "Fields of logs-app-* (9 in 3 indices), by type:",
        "  boolean (1): retry",
        "  date (1): @timestamp",
        "  keyword (3): log.level.keyword, message.keyword, service.name.keyword",
        "  long (1): http.response.status_code",
        "  text (3): log.level, message, service.name",  # noqa: RUF100
        'note: logs.elasticsearch.service_field names a field that is not there. No field "service.keyword" is in '
        "logs-app-*. Nearest: service.name.keyword, service.name, log.level.keyword. Known fields (9): @timestamp, http.response.status_code, "
        "log.level, log.level.keyword, message, message.keyword, retry, service.name, service.name.keyword.",
    ]
    assert missing.text.startswith("[ToolError] exception: 'discover' failed: Elasticsearch has no such index")


def test_local_log_files_offer_nothing_to_discover(tmp_path):
    settings = ToolsSettings(logs=LogsSettings(backend="files", files=FileLogSettings(directory=tmp_path)))
    assert "discover" not in build_tools(settings)
