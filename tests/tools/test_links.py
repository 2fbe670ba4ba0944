"""Safe link assembly and the `[links]` settings: public bases only (http(s), no user or password), every part quoted,
and no link ever carrying a credential that a configured URL holds, whichever builder makes it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernel import SourceLink
from opsagent_tools.links import LinkSettings, grafana_explore, page_url, public_base, safe_link
from opsagent_tools.logs.elasticsearch import ElasticsearchSettings
from opsagent_tools.logs.links import kibana_discover
from opsagent_tools.logs.search import LogQuery
from opsagent_tools.metrics.links import MetricLinks
from opsagent_tools.repos.links import RepoLinks

END = datetime(2026, 11, 30, 20, 25, tzinfo=UTC)
START = END - timedelta(minutes=30)


def test_a_public_base_drops_user_password_query_and_fragment() -> None:
    assert (
        public_base("https://ops:hunter2@prom.example.com:9443/prom/?x=1#top") == "https://prom.example.com:9443/prom"
    )
    assert public_base("http://[::1]:9090/") == "http://[::1]:9090"
    assert public_base(" https://grafana.example.com ") == "https://grafana.example.com"


@pytest.mark.parametrize(
    "url", ["file:///srv/series.jsonl", "ftp://x", "javascript:alert(1)", "prometheus:9090", "http://h:port", "", None]
)
def test_what_is_not_an_http_base_gives_no_link(url: str | None) -> None:
    assert public_base(url) is None


def test_a_page_quotes_its_path_and_parameters() -> None:
    url = page_url("https://h.example", "blob/v1 #2/a?b.yaml", {"q": 'x="y" & z'})
    assert url == "https://h.example/blob/v1%20%232/a%3Fb.yaml?q=x%3D%22y%22%20%26%20z"


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        ("https://github.com/acme/orders/pull/415", True),
        ("http://127.0.0.1:9090/graph?g0.expr=up", True),
        ("https://user:pw@github.com/acme", False),
        ("https://@github.com/acme", False),
        ("javascript:alert(1)", False),
        ("data:text/html,<b>x</b>", False),
        ("https://evil.example/a|<!channel>", False),
        ("https://evil.example/a b", False),
        ("https://evil.example/\nx", False),
        ("/relative/path", False),
    ],
)
def test_a_link_from_elsewhere_is_kept_only_when_it_is_a_plain_http_url(url: str, kept: bool) -> None:
    assert (safe_link("github", url) == SourceLink("github", url)) is kept


def test_grafana_needs_both_its_url_and_the_data_source() -> None:
    assert grafana_explore(LinkSettings(grafana_url="https://g"), "prometheus", {"expr": "up"}, START, END) is None
    assert grafana_explore(LinkSettings(grafana_loki_datasource="l"), "loki", {"expr": "{}"}, START, END) is None
    org = LinkSettings(grafana_url="https://g/", grafana_loki_datasource="loki", grafana_org_id=3)
    url = grafana_explore(org, "loki", {"expr": '{app="x"}'}, START, END)
    assert url is not None
    params = {key: value[0] for key, value in parse_qs(urlsplit(url).query).items()}
    assert params["orgId"] == "3"
    assert list(json.loads(params["panes"])) == ["oa1"], "three characters of [0-9a-z], not all digits"


MARK = "Ξ"
"""Every generated secret holds it; paths and refs are ASCII, so a link holding it (or its quoted form) leaked one."""
secrets = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=30).map(
    lambda text: f"{MARK}{text}"
)
users = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.", max_size=12).map(lambda text: f"opsuser{text}")
ascii_text = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=30)


@given(user=users, secret=secrets, path=ascii_text, ref=ascii_text.filter(bool))
def test_no_builder_ever_puts_a_configured_credential_in_a_link(user: str, secret: str, path: str, ref: str) -> None:
    userinfo = f"{quote(user, safe='')}:{quote(secret, safe='')}@"
    base = f"https://{userinfo}example.com:8443/x"
    links = LinkSettings(
        prometheus_url=base,
        grafana_url=base,
        grafana_prometheus_datasource="prom",
        grafana_loki_datasource="loki",
        kibana_url=base,
        git_web_url=f"https://{userinfo}git.example.com/acme/{{repo}}",
    )
    q = LogQuery(service="checkout", since=START, until=END, level="error", query="timeout", limit=5)
    made = [
        MetricLinks(links, base).graph("up", START, END),
        MetricLinks(LinkSettings(), base).graph("up", START, END),
        RepoLinks.of("orders", None, "https://api.github.com", links).file(ref, path),
        RepoLinks.of("orders", "acme/orders", f"https://{userinfo}ghe.example.com/api/v3", links).compare(ref, ref),
    ]
    urls = [link.url for link in made if link is not None]
    urls += [
        grafana_explore(links, "loki", {"expr": "{}"}, START, END),
        kibana_discover(links, ElasticsearchSettings(), q),
    ]
    assert len(urls) == 6
    for url in urls:
        assert url is not None
        parts = urlsplit(url)
        assert (parts.scheme, "@" in parts.netloc) == ("https", False)
        assert MARK not in url
        assert quote(MARK) not in url
        assert "opsuser" not in url
