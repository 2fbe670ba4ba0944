"""Runbook front matter from a hostile repository: the line that made the old hand-written parser backtrack for
minutes (issue 19) parses, oversized files and front matter are refused before parsing, YAML's deep nesting,
aliases ("billion laughs") and tags are refused, and the library skips each such file with a reason, keeping the
rest. These tests assert what comes out, never how long it took (bench/regex_bench.py times the parser's regexes)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from opsagent_tools.runbooks.documents import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_FRONT_MATTER_BYTES,
    FrontMatterError,
    parse_runbook,
)
from opsagent_tools.runbooks.library import DirectorySource, RunbookLibrary, TextSource
from opsagent_tools.runbooks.settings import RunbookSettings


def front_matter(*lines: str, body: str = "body") -> str:
    return "---\ntitle: Latency\n" + "\n".join(lines) + "\n---\n" + body


def problem(text: str) -> str:
    with pytest.raises(FrontMatterError) as raised:
        parse_runbook("r", text)
    return str(raised.value)


@pytest.mark.parametrize("spaces", [380, 1_000, MAX_FRONT_MATTER_BYTES - 100])
def test_the_finding_s_line_is_a_tag_as_yaml_reads_it(spaces):
    """`[latency` + spaces + `']`: in YAML, a plain scalar with a quote at its end (a quote only opens a string
    at the start of one); the old regex tried every split of the spaces between its alternatives."""
    runbook = parse_runbook("r", front_matter("tags: [latency" + " " * spaces + "']"))
    assert runbook.tags == ("latency" + " " * spaces + "'",)


def test_the_finding_s_line_with_the_quote_first_is_an_unclosed_quote_naming_where_it_opens():
    assert problem(front_matter("tags: ['latency" + " " * 1_000 + "]")).startswith(
        "line 3, column 8: while scanning a quoted scalar, found unexpected end of the front matter: close the quote"
    )


def test_a_front_matter_over_16_kib_is_refused_before_it_is_parsed():
    # Unparsable YAML past the bound: the size is what is said, so the parser never saw it.
    text = front_matter("tags: [latency" + " " * MAX_FRONT_MATTER_BYTES + "']", "broken: [")
    assert problem(text) == (
        "the front matter is over 16,384 bytes: keep title, services, alerts, tags and when_to_use there, "
        "and move the rest into the body"
    )


def test_a_file_over_256_kib_is_refused_whatever_its_front_matter():
    body = "x" * (MAX_FILE_BYTES - len(front_matter(body="")))
    assert parse_runbook("r", front_matter(body=body)).body == body, "exactly at the limit is read"
    expected = f"the file is over {MAX_FILE_BYTES:,} bytes, the most a runbook may be: split it into several runbooks"
    assert problem(front_matter(body=body + "é")) == expected, "bytes are counted, not characters"
    assert problem(front_matter(body=body * 50)) == expected


def test_nesting_deeper_than_the_bound_is_refused_even_under_a_key_nobody_reads():
    nested = "[" * (MAX_DEPTH - 1) + "x" + "]" * (MAX_DEPTH - 1)
    assert parse_runbook("r", front_matter(f"meta: {nested}")).title == "Latency", "the front matter is level 1"
    assert problem(front_matter(f"meta: [{nested}]")) == (
        f"line 3: the values nest deeper than {MAX_DEPTH} levels: write 'key: value' lines and lists of names"
    )
    block = "\n".join(
        " " * (2 * level) + "- x" if level == MAX_DEPTH else " " * (2 * level) + "-" for level in range(9)
    )
    assert problem(front_matter("meta:", block)).startswith("line 11: the values nest deeper than 8 levels")


def test_a_front_matter_of_nothing_but_openers_is_refused_naming_the_line():
    message = problem(front_matter("meta: " + "[" * (MAX_FRONT_MATTER_BYTES - 100)))
    assert message.startswith("line 3, column "), message
    assert "nest" in message
    assert message.endswith(": write 'key: value' lines and lists of names")


def test_billion_laughs_is_refused_at_its_first_anchor():
    laughs = ['lol0: &a0 ["lol"]'] + [f"lol{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 10)]
    assert problem(front_matter(*laughs)) == (
        "line 3: YAML anchors and aliases ('&name', '*name') are not supported: write the value out"
    )
    assert problem(front_matter("tags: *undefined")).startswith("line 3: YAML anchors and aliases")


def test_a_python_tag_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "ran"
    text = front_matter(f"tags: !!python/object/apply:os.system ['touch {marker}']")
    assert problem(text) == (
        "line 3: YAML tags ('tag:yaml.org,2002:python/object/apply:os.system') are not supported: "
        "write the value as plain text"
    )
    assert not marker.exists()
    assert problem(front_matter("tags: !custom [a]")) == (
        "line 3: YAML tags ('!custom') are not supported: write the value as plain text"
    )


async def test_the_library_skips_each_oversized_or_hostile_runbook_with_its_reason_and_keeps_the_rest(tmp_path):
    (tmp_path / "good.md").write_text(front_matter("services: [api]"))
    (tmp_path / "huge.md").write_text(front_matter(body="x" * MAX_FILE_BYTES))
    (tmp_path / "laughs.md").write_text(front_matter("a: &a [x]", "b: *a"))
    (tmp_path / "slow.md").write_text(front_matter("tags: [latency" + " " * 1_000 + "']"))
    library = RunbookLibrary(DirectorySource(tmp_path))
    index = await library.index()
    assert index.ids() == ["good", "slow"]
    size = (tmp_path / "huge.md").stat().st_size
    assert [s.line() for s in library.status.skipped] == [
        f"huge.md: {size:,} bytes, over knowledge.max_runbook_bytes (262,144)",
        "laughs.md: line 3: YAML anchors and aliases ('&name', '*name') are not supported: write the value out",
    ]


async def test_runbooks_given_as_text_are_bounded_too():
    texts = {"big.md": front_matter(body="x" * MAX_FILE_BYTES), "ok.md": front_matter()}
    library = RunbookLibrary(TextSource(texts))
    assert (await library.index()).ids() == ["ok"]
    assert [s.line() for s in library.status.skipped] == [
        "big.md: the file is over 262,144 bytes, the most a runbook may be: split it into several runbooks"
    ]


def test_the_size_setting_may_lower_the_bound_but_not_raise_it():
    assert RunbookSettings(max_runbook_bytes=4096).max_runbook_bytes == 4096
    with pytest.raises(ValidationError, match="max_runbook_bytes\n  Input should be less than or equal to 262144"):
        RunbookSettings(max_runbook_bytes=MAX_FILE_BYTES + 1)
