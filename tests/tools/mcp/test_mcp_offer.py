"""How a server's listing becomes what the model is offered (`offer.py`, through `server_tools` as a live server's
listing goes): the prose budget shared out, the trimming steps in their order, keyword names kept apart from
property names, and the listings that cannot be offered at all."""

from __future__ import annotations

import json
import re
from typing import Any

from mcp.types import CallToolResult
from mcp.types import Tool as McpTool

from opsagent_tools.mcp import McpServerSettings, printable_name
from opsagent_tools.mcp.offer import MAX_ENUM, MAX_SERVER_TEXT, MAX_TOOL_BYTES, MIN_SHARE
from opsagent_tools.mcp.tools import Omission, server_tools

SETTINGS = McpServerSettings(url="http://127.0.0.1:9/mcp", read_only=["t"])
QUOTED = re.compile(r"«([^«»]*)»")


async def _never(name: str, arguments: dict[str, Any]) -> CallToolResult:
    raise AssertionError("no call is made while a listing is read")


def offered(description: str, schema: dict[str, Any], name: str = "t"):
    """The (tool, skipped) that one listed tool becomes."""
    entries, skipped = server_tools(
        "srv", SETTINGS, [McpTool(name=name, description=description, input_schema=schema)], _never
    )
    return (entries[0].tool if entries else None), skipped


def quoted(tool) -> list[str]:
    texts = [tool.spec.description, *_descriptions(tool.spec.parameters)]
    return [match for text in texts for match in QUOTED.findall(text) if match]


def _descriptions(schema: Any) -> list[str]:
    if isinstance(schema, dict):
        found = [schema["description"]] if isinstance(schema.get("description"), str) else []
        return found + [text for value in schema.values() for text in _descriptions(value)]
    if isinstance(schema, list):
        return [text for value in schema for text in _descriptions(value)]
    return []


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def test_long_prose_is_cut_to_one_length_and_short_prose_is_kept_whole():
    schema = obj(a={"type": "string", "description": "a" * 2000}, b={"type": "string", "description": "short one"})
    tool, _ = offered("d" * 600, schema)
    said = quoted(tool)
    assert said[2] == "short one"
    assert len(said[0]) == len(said[1]) == (MAX_SERVER_TEXT - len("short one")) // 2
    assert said[0].endswith("…")
    assert said[1].endswith("…")
    assert sum(map(len, said)) <= MAX_SERVER_TEXT


def test_past_a_useful_length_the_last_descriptions_go_and_the_tools_own_stays():
    schema = obj(**{f"p{i:02d}": {"type": "string", "description": f"field {i} " + "x" * 100} for i in range(60)})
    tool, _ = offered("What the tool does. " + "y" * 300, schema)
    said = quoted(tool)
    assert said[0].startswith("What the tool does.")
    assert MAX_SERVER_TEXT // MIN_SHARE - 1 <= len(said) <= MAX_SERVER_TEXT // MIN_SHARE
    assert all(len(text) >= MIN_SHARE for text in said)
    properties = tool.spec.parameters["properties"]
    assert "description" in properties["p00"]
    assert "description" not in properties["p59"], "the last go first"
    assert len(properties) == 60, "every argument is still there"


def test_property_names_that_spell_keywords_are_kept_and_unknown_keywords_dropped():
    schema = {
        "type": "object",
        "title": "Tool",
        "$comment": "internal",
        "x-vendor": {"anything": 1},
        "properties": {
            "title": {"type": "string", "title": "Title", "deprecated": True},
            "description": {"$ref": "#/$defs/text"},
            "flag": True,
        },
        "$defs": {"text": {"type": "string", "maxLength": 80}},
        "additionalProperties": False,
    }
    tool, _ = offered("d", schema)
    assert tool.spec.parameters == {
        "type": "object",
        "properties": {"title": {"type": "string"}, "description": {"$ref": "#/$defs/text"}, "flag": {}},
        "$defs": {"text": {"type": "string", "maxLength": 80}},
        "additionalProperties": False,
    }


def test_trimming_stops_at_the_first_step_that_fits():
    regions = [f"region-{i:03d}" for i in range(MAX_ENUM + 1)]
    examples = ["e" * 200] * 40
    fits_without_examples = obj(q={"type": "string", "enum": regions, "examples": examples, "default": "d" * 100})
    tool, _ = offered("d", fits_without_examples)
    assert tool.spec.parameters["properties"]["q"] == {"type": "string", "enum": regions, "default": "d" * 100}
    crowded = obj(q={"type": "string", "enum": [f"value-{i:04d}-{'z' * 20}" for i in range(300)], "default": "x"})
    tool, _ = offered("d", crowded)
    assert tool.spec.parameters["properties"]["q"] == {"type": "string", "default": "x"}, "the long enum went"
    assert len(json.dumps(tool.spec.model_dump(), separators=(",", ":"))) <= MAX_TOOL_BYTES


def test_what_cannot_be_offered_is_skipped_with_the_reason():
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(40):
        deep = obj(inner=deep)
    for schema, reason in [
        (deep, "its inputSchema nests deeper than 64 levels"),
        (obj(**{f"field_{i:04d}": {"type": "string"} for i in range(800)}), "its schema takes"),
        ({"type": "array"}, "its inputSchema is not a JSON Schema of an object"),
        (
            obj(n={"type": "integer", "minimum": "zero"}),
            "its inputSchema is not valid JSON Schema: 'zero' is not of type",
        ),
    ]:
        tool, (skip,) = offered("d", schema)
        assert tool is None
        assert skip.reason.startswith(reason), skip.reason
        assert skip.omission is Omission.UNFIT
    tool, (skip,) = offered("d", obj(), name="x" * 70)
    assert skip.reason == f"its full name 'srv__{'x' * 70}' is longer than the 64 characters function calling allows"


def test_names_that_collide_after_normalisation_or_repeat_are_all_left_out():
    listing = [McpTool(name=name, input_schema=obj()) for name in ("a.b", "a-b", "a_b", "a/b", "c", "c", "d")]
    entries, skipped = server_tools("srv", SETTINGS, listing, _never)
    assert [entry.name for entry in entries] == ["srv__a-b", "srv__d"]
    assert {skip.omission for skip in skipped} == {Omission.COLLISION}
    assert skipped[0].reason.startswith("'a.b', 'a_b' and 'a/b' all become srv__a_b, so none is offered")
    assert (
        skipped[-1].reason
        == "the server lists 'c' 2 times, so it is not offered: ask the server's maintainers to fix its listing"
    )


def test_a_name_with_invisible_characters_is_printed_escaped():
    assert printable_name("incident.note") == "'incident.note'"
    assert printable_name("note\u200b\u202e") == '"note\\u200b\\u202e"'
    tool, _ = offered("d", obj(), name="note\u200b")
    assert tool.name == "srv__note_"
    assert tool.description.startswith("[MCP server 'srv', tool \"note\\u200b\"; side effect:")
