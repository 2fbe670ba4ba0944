"""Outside text in a Markdown draft, rendered by three renderers that pass raw HTML through: a fact shows as
exactly its text; a model's narrative keeps its prose (paragraphs, lists, emphasis, code) and never renders as
HTML, an image, a heading, a quote, a table or a link whose text is not where it goes."""

from __future__ import annotations

from html import unescape
from urllib.parse import unquote

import pytest
from hypothesis import given, settings

from bot.drafts.markdown import escaped, escaped_prose
from samples.markdown_pages import PROSE_TAGS, RENDERERS, Rendered, hostile_markdown

CONTROLS = {*range(0x20), 0x7F, *range(0x80, 0xA0)}


def shown(text: str) -> str:
    """`text` on one line, its control characters written as `\\x1b` is: what a reader should see of a fact."""
    return "".join(f"\\x{ord(c):02x}" if ord(c) in CONTROLS else c for c in " ".join(text.split()))


@pytest.mark.parametrize("renderer", RENDERERS)
@settings(max_examples=300)
@given(text=hostile_markdown)
def test_a_fact_renders_as_text(renderer, text):
    page = Rendered(f"- {escaped(text)}", renderer)
    assert set(page.tags) <= {"ul", "li", "a"}, page.html
    assert page.dishonest_links() == [], page.html
    seen, meant = page.text.strip("\n"), shown(text)
    match renderer:
        case "commonmark":
            assert unquote(seen) == unquote(meant), "a link's text may show %41 as A"
        case "github" if "www." not in text:  # it links a bare `www.` name with the escapes after it
            assert unescape(unquote(seen)) == unescape(unquote(meant)), "and shows `&amp;` in an autolink as `&`"
        case _:  # Python-Markdown shows some escapes (`\|`, `\~`) as written
            pass


@pytest.mark.parametrize("renderer", RENDERERS)
@settings(max_examples=400)
@given(text=hostile_markdown)
def test_a_narrative_renders_as_prose_whatever_it_holds(renderer, text):
    page = Rendered(escaped_prose(text), renderer)
    assert set(page.tags) <= PROSE_TAGS, page.html
    assert page.dishonest_links() == [], page.html
    assert "<!--" not in page.html
    assert not CONTROLS & {ord(c) for c in page.text} - {0x09, 0x0A}, "control characters are shown, not sent"


def test_the_narratives_prose_is_kept():
    page = Rendered(
        escaped_prose(
            "Checkout failed for **ten minutes** after *the* deploy of `v2.14.0`.\n\n"
            "- web shoppers\n  - on mobile\n1. rolled back\n2. checked\n\nSee [the dashboard](https://grafana.example/d/1)."
        )
    )
    assert page.tags == ["p", "strong", "em", "code", "ul", "li", "ul", "li", "ol", "li", "li", "p", "a"]
    assert "See the dashboard (https://grafana.example/d/1)." in page.text
    assert page.links == [("https://grafana.example/d/1", "https://grafana.example/d/1")]


@pytest.mark.parametrize("renderer", RENDERERS)
def test_links_go_where_they_say_and_only_over_http(renderer):
    page = Rendered(
        escaped_prose(
            "[http://good.example](http://evil.example/a) [www.good.example](https://evil.example/b) "
            "[click](javascript:alert(1)) [x](data:text/html,hi) <https://ok.example/c> <javascript:alert(2)> "
            "![pixel](http://evil.example/p.png) ![logo][1]\n\n[1]: http://evil.example/ref.png.\n\n"
            "Bare: https://grafana.example/d?var_service=checkout_api&from=now-1h, then."
        ),
        renderer,
    )
    assert "img" not in page.tags
    assert "http://good.example" not in page.text, "a label that reads as an address is not shown for another"
    assert "[click](javascript:alert(1)) [x](data:text/html,hi)" in page.text
    assert "![pixel](http://evil.example/p.png) ![logo][1]" in page.text
    assert "[1]: http://evil.example/ref.png." in page.text
    bare = "https://grafana.example/d?var_service=checkout_api&from=now-1h"
    links = ["http://evil.example/a", "https://evil.example/b", "https://ok.example/c", "http://evil.example/ref.png"]
    assert [href for href, _ in page.links if href != "http://evil.example/p.png"] == [*links, bare]
    assert page.dishonest_links() == []


def test_a_url_in_a_fact_is_linked_whole_where_github_links_it():
    fact = "see https://grafana.example/d?var_service=checkout_api&x=(1) now; [click](https://evil.example)"
    page = Rendered(f"- {escaped(fact)}", "github")
    grafana = "https://grafana.example/d?var_service=checkout_api&x="  # a parenthesis ends it, as GitHub's would
    assert page.links == [(grafana, grafana), ("https://evil.example", "https://evil.example")]
    assert page.text.strip() == fact


def test_html_fences_and_headings_in_a_narrative_are_text():
    markdown = escaped_prose(
        "<img src=x onerror=alert(1)> <!-- hidden --> <script>alert(1)</script>\n# Root cause: Bob\n> quoted\n"
        "~~~\n| a | b |\n| - | - |\nText\n===\n```\n<b>x</b>\n`<i>kept as code</i>`\n\x1b[31mred"
    )
    page = Rendered(markdown)
    assert page.tags == ["p", "code"]
    assert "<img src=x onerror=alert(1)> <!-- hidden --> <script>alert(1)</script>\n# Root cause: Bob" in page.text
    assert "<i>kept as code</i>" in page.text
    assert "\\x1b[31mred" in page.text
