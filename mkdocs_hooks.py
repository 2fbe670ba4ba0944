"""MkDocs hooks of the guide (mkdocs.yml `hooks:`): the benchmarks page shows bench/README.md's latest tables.

`python -m bench` rewrites the tables between two markers in bench/README.md; the guide reads them at build time
instead of keeping a copy that would go stale.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.pages import Page

BENCH_README = Path(__file__).parent / "bench" / "README.md"
PLACEHOLDER = "<!-- the latest bench tables -->"
START, END = "<!-- bench:start -->", "<!-- bench:end -->"


def on_page_markdown(markdown: str, page: Page, **_: object) -> str:
    """Put the bench tables where a page has the placeholder; fail the build when bench/README.md lost its markers."""
    if PLACEHOLDER not in markdown:
        return markdown
    text = BENCH_README.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise ValueError(f"{page.file.src_path}: {BENCH_README} has no {START} … {END} tables to show")
    return markdown.replace(PLACEHOLDER, text[text.index(START) + len(START) : text.index(END)].strip())
