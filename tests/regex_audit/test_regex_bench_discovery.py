"""The regex bench (suite x) finds every module-level compiled regex by itself, knows how the code applies each,
and makes hostile inputs of the length it claims. Its timings are a report (`python -m bench --only x`), not a
test: nothing here measures time."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from bench.regex_bench import LENGTH, PACKAGES, discover, hostile_inputs

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def found():
    return discover()


def compiled_at_module_level() -> list[tuple[str, str]]:
    """(module, name) of every `NAME = re.compile(...)` at the top of a module, read from the source."""
    assigned = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
                if isinstance(value, ast.Call) and ast.unparse(value.func) == "re.compile":
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    assigned += [(module, target.id) for target in targets if isinstance(target, ast.Name)]
    return assigned


def test_every_pattern_compiled_at_module_level_is_found(found):
    by_identity = {id(item.pattern) for item in found}
    assigned = compiled_at_module_level()
    assert len(assigned) > 100, "the source scan itself finds the patterns"
    missing = [
        f"{module}.{name}"
        for module, name in assigned
        if id(getattr(importlib.import_module(module), name)) not in by_identity
    ]
    assert missing == []


def test_patterns_kept_in_tables_are_found_and_named_by_their_place(found):
    labels = {item.label for item in found}
    assert {
        "kernel.parsing.reply._ACTION_INPUT",
        "bot.slack.mrkdwn._ADDRESS",
        "opsagent_tools.logs.records._LOGFMT_PAIR",
    } <= labels
    assert any(re.fullmatch(r"kernel\.parsing\.call_markers\.NAMED_MARKERS\[\d+\]\[\d+\]", label) for label in labels)
    assert any(re.fullmatch(r"kernel\.redaction\.patterns\.DEFAULT_PATTERNS\[\d+\]\.regex", label) for label in labels)
    assert len(labels) == len(found), "each pattern once"


def test_each_pattern_is_applied_as_the_code_applies_it(found):
    uses = {item.label: item.uses for item in found}
    assert uses["kernel.parsing.reply._ACTION_INPUT"] == ("match",)
    assert uses["kernel.parsing.reply._THOUGHT_LABEL"] == ("sub",)
    assert uses["bot.slack.mrkdwn._ADDRESS"] == ("search",)
    assert uses["opsagent_tools.logs.records._LOGFMT_PAIR"] == ("match",)
    table = next(label for label in uses if label.startswith("kernel.parsing.call_markers.NAMED_MARKERS"))
    assert uses[table] == ("search", "match", "fullmatch", "finditer"), "unknown use: every way of applying it"


def test_hostile_inputs_are_all_of_the_length_and_include_the_shapes_that_backtrack():
    # The runbook front-matter regex of issue 19: spaces, then a quote that fails the item.
    inline_item = re.compile(r"""\s*(?P<item>"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^,'"]*?)\s*(?:,|$)""")
    inputs = hostile_inputs(inline_item)
    assert len(inputs) > 100
    assert {len(text) for text in inputs.values()} == {LENGTH}
    assert len(set(inputs.values())) == len(inputs), "no input twice"
    assert inputs["'' + run of ' ' + \"'\""] == " " * (LENGTH - 1) + "'"
    assert '"' * LENGTH in inputs.values(), "unbalanced double quotes"

    tagged = hostile_inputs(re.compile(r"<tool_call>\s*(?P<name>[^\s<>]{1,200})"), 1_000)
    assert {len(text) for text in tagged.values()} == {1_000}
    assert tagged["'<tool_call>' repeated"].startswith("<tool_call><tool_call>")
    assert tagged["'<tool_call>' + run of ' ' + '\\x00'"] == "<tool_call>" + " " * 988 + "\x00"
