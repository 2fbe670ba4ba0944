"""A Markdown draft as a reader sees it once pasted: rendered, raw HTML passed through (as many wikis and viewers
do), by CommonMark (markdown-it-py, the renderer under `rich`), by GitHub's cmark-gfm (bare URLs linked, tables) and
by Python-Markdown (MkDocs'; not CommonMark: it keeps `\\<` as a backslash before live HTML), then read back as
HTML; plus hostile Markdown to feed the drafts' escaping."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import unquote

import cmarkgfm
import markdown
from cmarkgfm.cmark import Options
from hypothesis import strategies as st
from markdown_it import MarkdownIt

_COMMONMARK = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
RENDERERS = {
    "commonmark": _COMMONMARK.render,
    "github": lambda text: cmarkgfm.markdown_to_html_with_extensions(
        text, options=Options.CMARK_OPT_UNSAFE, extensions=["autolink", "table", "strikethrough", "tasklist"]
    ),
    "python-markdown": lambda text: markdown.markdown(text, extensions=["tables", "fenced_code"]),
}
PROSE_TAGS = {"p", "ul", "ol", "li", "em", "strong", "code", "pre", "a", "br"}
"""What a model's narrative may render as: prose (a code block's text is shown as written, so it may stay)."""
PIECES = ["<", ">", "[", "]", "(", ")", "!", "`", "``", "```", "~~~", "*", "_", "-", "=", "#", "|", "&", "\\", ":"]
PIECES += ["\n", "\n\n", " ", "    ", "\t", "1. ", "2) ", "- ", "* ", "+ ", "> ", "x", "é", "%41", "\x00", "\x1b"]
PIECES += ["http://a.example/p", "https://b.example", "javascript:alert(1)", "data:text/html,x", "www.c.example"]
PIECES += ["<img src=x onerror=alert(1)>", "<!--", "-->", "<script>", "![", "](", "[1]: ", "&lt;", "&#60;", "<a href="]
hostile_markdown = st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=40).map("".join)
"""Strings made of what Markdown acts on: HTML, links, images, references, fences, escapes, URLs of every scheme."""


class Rendered(HTMLParser):
    """`text` rendered: its HTML, the tags in order, each link's target and text, and its text."""

    def __init__(self, text: str, renderer: str = "commonmark") -> None:
        super().__init__(convert_charrefs=True)
        self.html = RENDERERS[renderer](text)
        self.tags: list[str] = []
        self.links: list[tuple[str, str]] = []
        self.text = ""
        self._in_link = False
        self.feed(self.html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "a":
            self.links.append((dict(attrs).get("href") or "", ""))
            self._in_link = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._in_link = False

    def handle_data(self, data: str) -> None:
        self.text += data
        if self._in_link:
            href, text = self.links[-1]
            self.links[-1] = (href, text + data)

    def dishonest_links(self) -> list[tuple[str, str]]:
        """Links whose text is not where they go, or that go anywhere but http(s). Percent-escapes aside (a
        renderer may show them decoded), and a bare `www.` name or address that GitHub links itself."""
        return [
            (href, text)
            for href, text in self.links
            if unquote(href) not in {unquote(text), f"http://{unquote(text)}", f"mailto:{unquote(text)}"}
            or not href.lower().startswith(("http://", "https://", "mailto:"))
        ]
