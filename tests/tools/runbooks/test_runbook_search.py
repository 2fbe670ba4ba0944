"""Runbook search: BM25 over SQLite FTS5 ranks a title match above a passing mention, reads front matter and
stems words; the tools answer through the kernel's dispatch like any other, and an unknown id gets the nearest."""

from __future__ import annotations

import pytest

from opsagent_tools.runbooks.documents import parse_runbook
from opsagent_tools.runbooks.index import RunbookIndex
from opsagent_tools.runbooks.library import RunbookLibrary, TextSource
from opsagent_tools.runbooks.tools import runbook_tools
from worlds.dispatch import dispatch_call


def runbook(title: str, body: str, *, services: str = "", alerts: str = "", tags: str = "", when: str = "") -> str:
    return (
        f"---\ntitle: {title}\nservices: [{services}]\nalerts: [{alerts}]\ntags: [{tags}]\nwhen_to_use: {when}\n---\n"
        f"{body}\n"
    )


LIBRARY = {
    "checkout/high-5xx.md": runbook(
        "Checkout 5xx above SLO",
        "Open https://grafana.example/d/checkout-golden. Compare with the gateway.",
        services="checkout",
        alerts="CheckoutHigh5xx",
        when="checkout answers 5xx",
    ),
    "gateway/upstream.md": runbook(
        "Gateway upstream errors",
        "When checkout or payments fail behind the gateway, the gateway logs upstream connect errors.",
        services="gateway",
    ),
    "db/pool.md": runbook(
        "Database connection pool exhausted",
        "Requests time out waiting for a connection. Check db_pool_in_use against pool_size.",
        services="orders-db",
        tags="database",
        when="timeouts acquiring a connection",
    ),
    "certs/expiry.md": runbook(
        "Certificate expiry", "TLS handshakes fail after the certificate's notAfter.", tags="tls"
    ),
    "dns/resolution.md": runbook("DNS resolution failures", "Lookups fail: check CoreDNS.", services="coredns"),
    "disk/full.md": runbook("Disk full", "Writes fail with ENOSPC; find the biggest directories.", tags="storage"),
}


def index() -> RunbookIndex:
    return RunbookIndex([parse_runbook(path.removesuffix(".md"), text) for path, text in LIBRARY.items()])


def test_a_title_match_outranks_a_mention_in_a_body():
    hits = index().search("checkout 5xx", 5)
    assert [h.runbook.id for h in hits][:2] == ["checkout/high-5xx", "gateway/upstream"]
    assert hits[0].score > hits[1].score > 0


def test_front_matter_is_searched_and_words_are_stemmed():
    assert [h.runbook.id for h in index().search("CheckoutHigh5xx", 5)] == ["checkout/high-5xx"]
    assert [h.runbook.id for h in index().search("storage", 5)] == ["disk/full"]
    assert index().search("timeouts", 5)[0].runbook.id == "db/pool", "timeouts finds 'time out' and 'timeouts'"
    assert index().search("connections", 5)[0].runbook.id == "db/pool", "a plural finds the singular"


def test_a_query_without_words_or_matches_finds_nothing():
    assert index().search("?? --", 5) == []
    assert index().search("kubernetes", 5) == []


def test_fts_syntax_in_a_query_is_taken_as_words():
    hits = index().search('disk" NEAR(x) "* title:', 5)
    assert [h.runbook.id for h in hits] == ["disk/full"]


async def call(name: str, **args: object) -> str:
    outcome = await dispatch_call(runbook_tools(RunbookLibrary(TextSource(LIBRARY))), name, **args)
    return outcome.text


async def test_search_runbooks_lists_ranked_summaries_with_ids():
    text = await call("search_runbooks", query="checkout 5xx", limit=2)
    assert text.splitlines() == [
        "Runbooks for 'checkout 5xx', best match first (2 of 6):",
        '1. [checkout/high-5xx] "Checkout 5xx above SLO", when to use: "checkout answers 5xx" · services: checkout '
        "· alerts: CheckoutHigh5xx",
        '2. [gateway/upstream] "Gateway upstream errors" · services: gateway',
        'read_runbook(id="…") shows one in full.',
    ]


async def test_search_runbooks_without_a_match_lists_the_ids():
    text = await call("search_runbooks", query="kubernetes")
    assert text == (
        "No runbook mentions any word of 'kubernetes'. Runbooks (6): certs/expiry, checkout/high-5xx, db/pool, "
        "disk/full, dns/resolution, gateway/upstream."
    )


async def test_read_runbook_returns_its_front_matter_and_text():
    text = await call("read_runbook", id="db/pool.md")
    assert text.splitlines()[:5] == [
        "Runbook db/pool: Database connection pool exhausted",
        "services: orders-db",
        "tags: database",
        "when to use: timeouts acquiring a connection",
        "source: 6 given texts, file db/pool.md",
    ]
    assert text.endswith("Requests time out waiting for a connection. Check db_pool_in_use against pool_size.")


async def test_an_unknown_runbook_id_gets_the_nearest_ones():
    text = await call("read_runbook", id="db-pool")
    assert text.startswith("[ToolError] exception: 'read_runbook' failed: ")
    assert 'No runbook "db-pool" is in the runbook library. Nearest: db/pool.' in text


@pytest.mark.parametrize("query", ["", "   ", "?!"])
async def test_a_query_without_words_is_refused_with_what_to_write(query):
    text = await call("search_runbooks", query=query)
    assert text.startswith("[ToolError] ")
    assert "e.g. 'checkout 5xx'" in text or "at least 1 character" in text


async def test_people_see_the_best_runbook_or_that_none_matched_and_a_read_one_with_its_length():
    tools = runbook_tools(RunbookLibrary(TextSource(LIBRARY)))
    found = await dispatch_call(tools, "search_runbooks", query="checkout 5xx", limit=2)
    assert found.headline == "2 runbooks · best checkout/high-5xx: Checkout 5xx above SLO"
    none = await dispatch_call(tools, "search_runbooks", query="kubernetes")
    assert none.headline == "no runbook matches (6 in the library)"
    read = await dispatch_call(tools, "read_runbook", id="db/pool")
    assert read.headline == "db/pool: Database connection pool exhausted (1 line)"
    assert found.links == none.links == read.links == ()
