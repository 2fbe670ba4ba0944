"""What the model is offered of one MCP tool on every request: the server's text marked as the server's, and the
whole tool under a size cap.

A server's description and `inputSchema` are untrusted text sent with every request, so:

- **Marked.** Every piece of the server's prose (the tool's description, each `description` in its schema) is
  quoted in «…», and the tool's description starts with a tag of ours naming the server. « and » (and their
  look-alikes) are taken out of the server's text, so nothing inside can close the quote and speak as OpsAgent.
  Control, zero-width, bidi and other invisible characters are removed, whitespace collapsed, secrets redacted.
- **Prose capped.** The server's prose is at most `MAX_SERVER_TEXT` characters per tool in all. When longer,
  every piece is cut to one length (shorter ones kept whole) so they add up to the cap; if that length would
  be under `MIN_SHARE`, the schema's last descriptions (breadth first: the deepest) are dropped instead.
- **Only what shapes a call.** The schema keeps the JSON Schema keywords in `VALUE_KEYWORDS` and the subschema
  keywords; titles, `$comment`, `$schema`, vendor extensions (`x-…`) and unknown keywords are dropped.
- **Size capped.** The tool's entry in a request (name, description, schema; compact JSON, non-ASCII escaped,
  plus `ENVELOPE_BYTES` for the adapter's wrapping) is at most `MAX_TOOL_BYTES`. Past it, trimming goes on one
  step at a time until it fits (`TRIM_STEPS`): `examples`; long or structured `default`s; `enum` lists longer
  than `MAX_ENUM`; the schema's descriptions; every `default`. A tool still past the cap is a `TooLarge`: it is
  not offered, and `opsagent check` says so.

Calls are still validated against the server's full schema (`arguments.py`): trimming only changes what the
model is shown, never what a call must satisfy (a value outside a dropped `enum` is refused with the list).
"""

from __future__ import annotations

import json
import unicodedata
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from kernel import DEFAULT_REDACTOR
from opsagent_tools.mcp.results import masked

MAX_SERVER_TEXT = 1024
"""Characters of the server's own prose per tool: its description and every description in its schema."""
MAX_TOOL_BYTES = 8 * 1024
"""What one MCP tool may add to every request."""
ENVELOPE_BYTES = 64
"""Room for the adapter's wrapping of a tool (`{"type":"function","function":{…}}` is 34 bytes)."""
MIN_SHARE = 40
"""A description cut shorter than this says nothing: later ones are dropped instead."""
MAX_ENUM = 32
MAX_DEFAULT_CHARS = 64
OPEN, CLOSE = "«", "»"
_LOOK_ALIKES = str.maketrans(dict.fromkeys("«»‹›《》〈〉⟨⟩⟪⟫", '"'))
_INVISIBLE_RANGES = ((0xFE00, 0xFE0F), (0xE0100, 0xE01EF))
"""Variation selectors (category Mn, not C): they render as nothing and can smuggle text."""
_READ_WINDOW = 4 * MAX_SERVER_TEXT
"""Of a description longer than this, only its start is read: cleaning a 300 kB text to keep 1 kB is waste."""
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/")

SUBSCHEMA_KEYWORDS = frozenset(
    {"items", "additionalItems", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames"}
    | {"unevaluatedItems", "unevaluatedProperties"}
)
SUBSCHEMA_LIST_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
SUBSCHEMA_MAP_KEYWORDS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
VALUE_KEYWORDS = frozenset(
    {"type", "enum", "const", "default", "examples", "required", "format", "pattern", "$ref", "nullable"}
    | {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength"}
    | {"minItems", "maxItems", "uniqueItems", "minContains", "maxContains", "minProperties", "maxProperties"}
    | {"dependentRequired"}
)
"""Kept as the server wrote them: the model needs their exact values to make a valid call."""


@dataclass(frozen=True)
class Offer:
    """The tool as the model sees it: our tag and the server's quoted description, and the trimmed schema."""

    description: str
    schema: dict[str, Any]


@dataclass(frozen=True)
class TooLarge:
    """A tool that does not fit `MAX_TOOL_BYTES` even after every trimming step."""

    size: int
    """Bytes of its entry in a request after every step."""


def printable_name(name: str) -> str:
    """A server's tool name quoted for people and the model: 'a.b' when it is plain, else JSON with every
    character past ASCII escaped ("a\\u200bb"), so no invisible or control character is ever printed."""
    if name and all(char in _NAME_CHARS for char in name):
        return f"'{name}'"
    return json.dumps(name)


def offer(
    name: str, tag: str, description: str, schema: dict[str, Any], *, tail: str = "", secrets: Iterable[str] = ()
) -> Offer | TooLarge:
    """Tool `name` as offered: `tag` (ours), the server's `description` quoted, `tail` (ours), and `schema`
    (the server's, already checked) shaped and trimmed; or `TooLarge`."""
    shaped, nodes, described = _shape(schema)
    secret_values = tuple(secrets)
    texts = [_clean(text, secret_values) for text in (description, *(node["description"] for node in described))]
    shares = _shares([len(text) for text in texts], MAX_SERVER_TEXT)
    said = _quoted(texts[0], shares[0]) if texts[0] else "(no description)"
    full = f"{tag} {said}{tail}"
    for node, text, share in zip(described, texts[1:], shares[1:], strict=True):
        if share and text:
            node["description"] = _quoted(text, share)
        else:
            del node["description"]
    size = _size(name, full, shaped)
    for step in TRIM_STEPS:
        if size <= MAX_TOOL_BYTES:
            return Offer(full, shaped)
        step(nodes)
        size = _size(name, full, shaped)
    return Offer(full, shaped) if size <= MAX_TOOL_BYTES else TooLarge(size)


def _shape(schema: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """A copy of `schema` with only the kept keywords; all its (sub)schema objects breadth first; and those with
    a description. Values are the server's own objects, shared, never changed: steps only drop keys of the copy."""
    root: dict[str, Any] = {}
    nodes, described = [root], []
    queue: deque[tuple[dict[str, Any], dict[str, Any]]] = deque([(schema, root)])
    while queue:
        source, target = queue.popleft()
        for key, value in source.items():
            if key == "description":
                if isinstance(value, str) and value.strip():
                    target[key] = value
                    described.append(target)
            elif key in VALUE_KEYWORDS:
                target[key] = value
            elif key in SUBSCHEMA_KEYWORDS or key in SUBSCHEMA_LIST_KEYWORDS:
                target[key] = (
                    [_child(v, queue, nodes) for v in value] if isinstance(value, list) else _child(value, queue, nodes)
                )
            elif key in SUBSCHEMA_MAP_KEYWORDS and isinstance(value, dict):
                target[key] = {name: _child(v, queue, nodes) for name, v in value.items()}
    return root, nodes, described


def _child(value: Any, queue: deque[tuple[dict[str, Any], dict[str, Any]]], nodes: list[dict[str, Any]]) -> Any:
    if not isinstance(value, dict):
        return value  # `true`, `false`: schemas too
    copy: dict[str, Any] = {}
    queue.append((value, copy))
    nodes.append(copy)
    return copy


def _clean(text: str, secrets: tuple[str, ...]) -> str:
    """The server's text as the model may read it: visible characters only, one space between words, no quote
    marks of ours, secrets redacted."""
    visible = "".join(" " if char.isspace() else char for char in text[:_READ_WINDOW] if _visible(char))
    words = " ".join(visible.split()).translate(_LOOK_ALIKES)
    return masked(DEFAULT_REDACTOR.redact(words), secrets)


def _visible(char: str) -> bool:
    if char.isspace():
        return True
    code = ord(char)
    if any(low <= code <= high for low, high in _INVISIBLE_RANGES):
        return False
    return not unicodedata.category(char).startswith("C")  # Cc control, Cf format (zero-width, bidi), Co, Cs, Cn


def _shares(lengths: list[int], budget: int) -> list[int]:
    """How many characters each text keeps: all of each when they fit; else one length for all, the shorter
    kept whole; and when that length is under `MIN_SHARE`, 0 for the last texts until it is not (the first,
    the tool's own description, always keeps its share)."""
    if sum(lengths) <= budget:
        return lengths
    low, high = 1, len(lengths)
    while low < high:  # the most texts whose common length stays at MIN_SHARE or more (it shrinks as texts join)
        middle = (low + high + 1) // 2
        if _level(lengths[:middle], budget) >= MIN_SHARE:
            low = middle
        else:
            high = middle - 1
    level = _level(lengths[:low], budget)
    return [min(length, level) for length in lengths[:low]] + [0] * (len(lengths) - low)


def _level(lengths: list[int], budget: int) -> int:
    """The largest length L with sum(min(length, L)) <= budget."""
    left, remaining = len(lengths), budget
    for length in sorted(lengths):
        if length * left > remaining:
            return remaining // left
        remaining -= length
        left -= 1
    return max(lengths, default=budget)


def _quoted(text: str, share: int) -> str:
    kept = text if len(text) <= share else text[: share - 1].rstrip() + "…"
    return f"{OPEN}{kept}{CLOSE}"


def _size(name: str, description: str, schema: dict[str, Any]) -> int:
    entry = {"name": name, "description": description, "parameters": schema}
    return len(json.dumps(entry, separators=(",", ":"), default=str)) + ENVELOPE_BYTES  # ASCII: 1 char, 1 byte


def _dropping(key: str, when: Callable[[Any], bool] = lambda _: True) -> Callable[[list[dict[str, Any]]], None]:
    def step(nodes: list[dict[str, Any]]) -> None:
        for node in _having(nodes, key):
            if when(node[key]):
                del node[key]

    return step


def _having(nodes: list[dict[str, Any]], key: str) -> Iterator[dict[str, Any]]:
    return (node for node in nodes if key in node)


def _long_default(value: Any) -> bool:
    return isinstance(value, dict | list) or (isinstance(value, str) and len(value) > MAX_DEFAULT_CHARS)


def _long_enum(value: Any) -> bool:
    return isinstance(value, list) and len(value) > MAX_ENUM


TRIM_STEPS: tuple[Callable[[list[dict[str, Any]]], None], ...] = (
    _dropping("examples"),
    _dropping("default", _long_default),
    _dropping("enum", _long_enum),
    _dropping("description"),
    _dropping("default"),
)
"""What goes, in this order, while the tool is past `MAX_TOOL_BYTES`: what helps the model least first."""
