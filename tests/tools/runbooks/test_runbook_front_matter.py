"""Runbook front matter: YAML, read exactly, and a mistake or a value of the wrong type is one line that names the
line and says what to write, never a crash; the library skips that file and keeps the rest."""

from __future__ import annotations

import pytest

from opsagent_tools.runbooks.documents import FrontMatterError, parse_runbook
from opsagent_tools.runbooks.library import DirectorySource, RunbookLibrary

GOOD = """---
title: Checkout 5xx above SLO   # a comment
services: [checkout, "payments", 'cart-api']
alerts:
  - CheckoutHigh5xx
  - "Checkout: 5xx burn"
tags:
- http
when_to_use: 'checkout answers 5xx to more than 1% of requests, or it''s paging'
owner: team-checkout
reviewed: 2026-10-01
---
# Checkout 5xx

Open the dashboard.
"""


def test_every_supported_form_is_read():
    runbook = parse_runbook("checkout/high-5xx", GOOD)
    assert runbook.id == "checkout/high-5xx"
    assert runbook.title == "Checkout 5xx above SLO"
    assert runbook.services == ("checkout", "payments", "cart-api")
    assert runbook.alerts == ("CheckoutHigh5xx", "Checkout: 5xx burn")
    assert runbook.tags == ("http",)
    assert runbook.when_to_use == "checkout answers 5xx to more than 1% of requests, or it's paging"
    assert runbook.body == "# Checkout 5xx\n\nOpen the dashboard."


def test_yaml_forms_beyond_the_simple_ones_are_read_and_other_keys_may_hold_anything():
    text = (
        "---\ntitle: >-\n  Checkout 5xx\n  above SLO\nwhen_to_use: |\n  checkout answers 5xx\n  to many\n"
        "owner: {team: checkout, pager: [alice, bob]}\nreviewed: 2026-10-01\ntags: [\"no\", 'on', '404']\n---\nbody"
    )
    runbook = parse_runbook("r", text)
    assert runbook.title == "Checkout 5xx above SLO"
    assert runbook.when_to_use == "checkout answers 5xx to many"
    assert runbook.tags == ("no", "on", "404")
    assert runbook.body == "body"


def test_a_single_service_may_be_written_without_brackets_and_a_bom_is_ignored():
    runbook = parse_runbook("db", "\ufeff---\ntitle: DB\nservices: orders-db\n---\nbody")
    assert runbook.services == ("orders-db",)
    assert runbook.alerts == ()
    assert runbook.when_to_use == ""


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("# Just Markdown\n", "no front matter: the file must start with a '---' line, then title: …"),
        ("---\ntitle: x\n", "the front matter is not closed: add a '---' line after its last key"),
        (
            "---\nservices: [a]\n---\n",
            "the front matter has no title: add a line such as 'title: Checkout 5xx above SLO'",
        ),
        ("---\ntitle: ~\n---\n", "the front matter has no title: add a line such as 'title: Checkout 5xx above SLO'"),
        ("---\ntitle: x\nservice: checkout\n---\n", "line 3: unknown key 'service': write 'services'"),
        ("---\ntitle: x\nwhen-to-use: y\n---\n", "line 3: unknown key 'when-to-use': write 'when_to_use'"),
        ("---\ntitle: x\ntitle: y\n---\n", "line 3: 'title' is given twice"),
        (
            "---\ntitle: x\nservices:\n  checkout: {}\n---\n",
            "line 4: 'services' must be a list of names, e.g. services: [checkout, payments], not a mapping",
        ),
        (
            "---\ntitle: x\nalerts:\n  - Checkout: 5xx burn\n---\n",
            "line 4: each of 'alerts' must be a name, not a mapping (quote a name that holds ': ')",
        ),
        (
            "---\ntitle: x\nservices: 5\n---\n",
            "line 3: YAML reads 5 in 'services' as a number, not text: quote it: \"5\"",
        ),
        (
            "---\ntitle: x\ntags: [http, no]\n---\n",
            "line 3: YAML reads no in 'tags' as a true/false value, not text: quote it: \"no\"",
        ),
        (
            "---\ntitle: 2026-10-01\n---\n",
            "line 2: YAML reads 2026-10-01 in 'title' as a date, not text: quote it: \"2026-10-01\"",
        ),
        (
            '---\ntitle: "unclosed\n---\n',
            "line 2, column 8: while scanning a quoted scalar, found unexpected end of the front matter: close the "
            "quote (inside single quotes write '' for a quote, inside double quotes \\\")",
        ),
        (
            "---\ntitle: x\ntags: [a, b\n---\n",
            "line 3, column 7: while parsing a flow sequence, did not find expected ',' or ']': close the list with "
            "']', its items separated by commas: [a, b]",
        ),
        (
            "---\ntitle: Checkout: 5xx\n---\n",
            'line 2, column 16: mapping values are not allowed in this context: quote a value that holds ": ", '
            'e.g. title: "Checkout: 5xx above SLO"',
        ),
        (
            "---\ntitle: x\n\tservices: [a]\n---\n",
            "line 3, column 1: while scanning a plain scalar, found a tab character that violates indentation: "
            "indent with spaces, not tabs",
        ),
        (
            "---\ntitle: x\nnote: a\x07b\n---\n",
            "line 3: the character U+0007 is not allowed in YAML (control characters are not allowed): remove it",
        ),
        ("---\ntitle: [a, b]\n---\n", "line 2: 'title' must be one line of text, not a list"),
        (
            "---\ntitle: x\n- stray\n---\n",
            "line 3, column 1: while parsing a block mapping, did not find expected key: write 'key: value' lines, "
            "each key at the start of its line, and lists as [a, b] or '- item' lines",
        ),
        (
            "---\njust words\n---\n",
            "line 2: expected 'key: value' lines, e.g. 'title: Checkout 5xx above SLO'; got text",
        ),
        ("---\n[a]: x\n---\n", "line 2: a key must be a name such as 'title', not a list"),
    ],
)
def test_a_broken_front_matter_is_one_line_that_says_what_to_write(text, problem):
    with pytest.raises(FrontMatterError) as raised:
        parse_runbook("r", text)
    assert str(raised.value) == problem
    assert "\n" not in str(raised.value)


async def test_the_library_skips_a_broken_runbook_with_one_line_naming_it_and_keeps_the_rest(tmp_path):
    (tmp_path / "good.md").write_text(GOOD)
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "broken.md").write_text("---\ntitle: x\nservice: checkout\n---\n")
    (tmp_path / "ops" / "latin1.md").write_bytes("---\ntitle: caf\xe9\n---\n".encode("latin-1"))
    (tmp_path / "big.md").write_text("---\ntitle: big\n---\n" + "x" * 2000)
    (tmp_path / "README.md").write_text("# About this repository\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "draft.md").write_text("no front matter")
    (tmp_path / "escape.md").symlink_to("/etc/hostname")
    library = RunbookLibrary(DirectorySource(tmp_path), max_bytes=1000)
    index = await library.index()
    assert index.ids() == ["good"]
    assert [s.line() for s in library.status.skipped] == [
        "big.md: 2,019 bytes, over knowledge.max_runbook_bytes (1,000)",
        "ops/broken.md: line 3: unknown key 'service': write 'services'",
        "ops/latin1.md: not UTF-8 text",
    ]
    assert library.status.describe() == f"1 runbook from directory {tmp_path}; 3 skipped"


async def test_a_missing_directory_is_said_not_raised(tmp_path):
    library = RunbookLibrary(DirectorySource(tmp_path / "nope"))
    assert len(await library.index()) == 0
    assert library.status.error == f"FileNotFoundError: {tmp_path / 'nope'} is not a directory (knowledge.runbooks)"
    assert "and there is no copy to serve" in library.status.describe()
