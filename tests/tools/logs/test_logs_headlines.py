"""What a person sees of a log search: the count, the commonest message and when, and a link to the same search in
Grafana (Loki) or Kibana (Elasticsearch), as dispatch records them; over the fake Loki and Elasticsearch and real files."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import prison

from kernel import Tool
from opsagent_tools.links import LinkSettings
from opsagent_tools.logs import LogsSettings, log_tools
from testkit.fakes.log_servers import NOW, FakeElasticsearch, FakeLoki
from tools.logs.test_logs_elasticsearch import DOCS, ERROR_WORDS
from tools.logs.test_logs_loki import ENTRIES
from worlds.dispatch import search_logs

GRAFANA = LinkSettings(grafana_url="https://grafana.example.com/g/", grafana_loki_datasource="loki-uid")
KIBANA = LinkSettings(kibana_url="https://kibana.example.com/kibana", kibana_data_view="logs-view")


def loki_tools(url: str, links: LinkSettings | None) -> list[Tool]:
    return log_tools(LogsSettings(backend="loki", loki={"url": url}), now=lambda: NOW, links=links)


def es_tools(url: str, links: LinkSettings | None) -> list[Tool]:
    return log_tools(LogsSettings(backend="elasticsearch", elasticsearch={"url": url}), now=lambda: NOW, links=links)


def ms(minutes_ago: float) -> str:
    return str(int((NOW - timedelta(minutes=minutes_ago)).timestamp() * 1000))


async def test_loki_reads_as_count_top_message_and_when_and_opens_in_grafana_explore() -> None:
    async with FakeLoki(ENTRIES) as loki:
        result = await search_logs(loki_tools(loki.url, GRAFANA), service="order-service", since="1h")
    assert result.headline == "4 lines · 3 × upstream connect error #<n> · 03:08–03:33 UTC"
    (link,) = result.links
    assert link.label == "logs"
    assert link.url.startswith("https://grafana.example.com/g/explore?schemaVersion=1&panes=")
    (pane,) = json.loads(parse_qs(urlsplit(link.url).query)["panes"][0]).values()
    assert pane["datasource"] == "loki-uid"
    assert pane["range"] == {"from": ms(60), "to": ms(0)}
    (target,) = pane["queries"]
    assert target["datasource"] == {"type": "loki", "uid": "loki-uid"}
    assert target["expr"] == loki.logql()[0], "the LogQL the tool sent"
    assert target["queryType"] == "range"


async def test_nothing_found_names_the_window_and_loki_without_grafana_has_no_link() -> None:
    async with FakeLoki(ENTRIES) as loki:
        nobody = await search_logs(loki_tools(loki.url, LinkSettings()), service="nobody")
        no_uid = await search_logs(loki_tools(loki.url, LinkSettings(grafana_url="https://g")), service="order-service")
    assert nobody.headline == "no matching lines · 03:23–03:38 UTC"
    assert nobody.links == no_uid.links == (), "Loki has no UI of its own: a link needs Grafana and its data source"


async def test_elasticsearch_opens_the_same_search_in_kibana_discover() -> None:
    query = 'upstream AND "connect error"'
    async with FakeElasticsearch(DOCS) as es:
        result = await search_logs(es_tools(es.url, KIBANA), service="order-service", since="1h", query=query)
    assert result.headline == "3 lines · 3 × upstream connect error #<n> → payment-service:8443 · 02:58–03:32 UTC"
    (link,) = result.links
    parts = urlsplit(link.url)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == "https://kibana.example.com/kibana/app/discover"
    assert parts.fragment.startswith("/?_g=(time:(from:")
    state = {key: prison.loads(value[0]) for key, value in parse_qs(parts.fragment.removeprefix("/?")).items()}
    assert state["_g"] == {"time": {"from": "2026-11-30T02:38:57.000Z", "to": "2026-11-30T03:38:57.000Z"}}
    assert state["_a"]["dataSource"] == {"dataViewId": "logs-view", "type": "dataView"}
    levels = " OR ".join(f'"{word}"' for word in ERROR_WORDS)
    assert state["_a"]["query"] == {
        "language": "lucene",
        "query": f'service.name:"order-service" AND log.level:({levels}) AND ({query})',
    }


async def test_rison_and_lucene_escape_what_a_service_or_query_holds() -> None:
    hostile = 'it\'s! "odd" & #x'
    async with FakeElasticsearch(DOCS) as es:
        tools = es_tools(es.url, LinkSettings(kibana_url="https://kibana.example.com"))
        result = await search_logs(tools, service=hostile, level="any", query="a&b=c #d")
    (link,) = result.links
    fragment = urlsplit(link.url).fragment
    state = {key: prison.loads(value[0]) for key, value in parse_qs(fragment.removeprefix("/?")).items()}
    assert set(state) == {"_g", "_a"}, "an & or = of the query does not cut the state short"
    assert "dataSource" not in state["_a"], "without a data view Kibana opens its default"
    assert state["_a"]["query"]["query"] == 'service.name:"it\'s! \\"odd\\" & #x" AND (a&b=c #d)'


async def test_files_have_a_headline_and_never_a_link(tmp_path: Path) -> None:
    stamp = (NOW - timedelta(minutes=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    (tmp_path / "checkout.log").write_text(f"{stamp} ERROR 504 upstream timeout\n" * 3, encoding="utf-8")
    settings = LogsSettings(files={"directory": tmp_path})
    result = await search_logs(log_tools(settings, now=lambda: NOW, links=KIBANA), service="checkout")
    assert result.headline == "3 lines · 3 × 504 upstream timeout · at 03:35 UTC"
    assert result.links == ()
