"""Every ```toml block of the README and the guide loads as opsagent.toml (see doc_blocks for the convention);
one that does not is named by its page and line, with the configuration's own words for what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
from doc_blocks import NOT_LOADED, blocks_of, guide_pages, toml_problems

TOML = frozenset({"toml"})
TOML_BLOCKS = blocks_of(guide_pages(), languages=TOML)


@pytest.mark.parametrize("block", TOML_BLOCKS, ids=[block.where for block in TOML_BLOCKS])
def test_each_toml_block_of_the_guide_loads_as_settings(block, tmp_path):
    if block.title.startswith(NOT_LOADED):
        pytest.skip(f"{block.where}: not loaded, as its title says: {block.title}")
    problems = toml_problems(block, tmp_path)
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


def page(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_block_that_does_not_load_is_named_by_its_page_and_line(tmp_path):
    page(
        tmp_path,
        "docs/alerts.md",
        "# Alerts\n\nOpen a thread per alert group:\n\n"
        '```toml\n[alertmanager]\nchanel = "C0123INCIDENTS"\n```\n\n'
        'Or:\n\n```toml\n[slack]\napprovers = "U012ABCDEF"\n```\n\n'
        "```toml\n[budget]\nmax_seconds = 30 s\nmax_steps = 12\n```\n",
    )
    misspelled, wrong_type, broken = blocks_of(guide_pages(tmp_path), tmp_path, TOML)

    assert toml_problems(misspelled, tmp_path) == [
        "docs/alerts.md:7: [alertmanager] unknown key `chanel` (did you mean `channel`?)"
    ]
    assert toml_problems(wrong_type, tmp_path) == [
        'docs/alerts.md:14: [slack] approvers = "U012ABCDEF": should be a valid list'
    ]
    (problem,) = toml_problems(broken, tmp_path)
    assert problem.startswith("docs/alerts.md:19: not valid TOML: "), problem  # the line of `max_seconds = 30 s`


def test_blocks_inside_an_admonition_and_titled_blocks_are_read_as_mkdocs_shows_them(tmp_path):
    page(
        tmp_path,
        "README.md",
        '# OpsAgent\n\n!!! note "Approvals"\n\n    ```toml\n    [slack]\n    approvers = ["U012ABCDEF"]\n    ```\n\n'
        '```toml title="Not loaded: the shape of a section, not a value"\n[tools.mcp.servers.<name>]\n```\n'
        "```python\nprint('not a toml block')\n```\n",
    )
    indented, not_loaded = blocks_of(guide_pages(tmp_path), tmp_path, TOML)

    assert (indented.where, indented.text) == ("README.md:5", '[slack]\napprovers = ["U012ABCDEF"]')
    assert toml_problems(indented, tmp_path) == []
    assert not_loaded.title == "Not loaded: the shape of a section, not a value"
    assert toml_problems(not_loaded, tmp_path)  # the title is what keeps it out of the test, not luck
