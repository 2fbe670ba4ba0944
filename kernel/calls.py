"""A tool call as the kernel sees it, whatever protocol the model used to make it.

Native function calls and every text format the parser understands normalise to `ToolCall`.
"""

from __future__ import annotations

import hashlib
import json
import math
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

FINISH_TOOL = "finish"
"""The reserved tool name that ends a run; its `answer` argument is the result."""


@dataclass(frozen=True)
class ToolCall:
    """One requested tool invocation: a name, its arguments, and the protocol's call id.

    A plain dataclass, built by the kernel from what it already checked (one per step, so construction must be
    cheap); a trace's calls are validated when the trace is loaded (`RunResult` types them).
    """

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    """The native tool-call id (OpenAI `tool_calls[].id`, Anthropic `tool_use.id`); None for text."""

    @property
    def key(self) -> str:
        """Identity of the call for loop detection and approvals: name + canonical arguments (worked out once)."""
        key: str | None = self.__dict__.get("_key")
        if key is None:  # kept beside the fields, not as one: `functools.cached_property` takes a lock on 3.11
            key = self.__dict__["_key"] = f"{self.name}:{canonical_args(self.args)}"
        return key

    def args_hash(self) -> str:
        """SHA-256 of the name and canonical arguments, to bind an approval to this exact call."""
        return hashlib.sha256(self.key.encode()).hexdigest()

    def render(self) -> str:
        """A compact, human-readable `name(k=v, ...)` form for people (Slack, the terminal, the viewer, logs).

        Characters nobody can see (zero-width, bidi controls, separators) are written as escapes such as `\\u202e`,
        so what an approver reads is what the tool would receive.
        """
        inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in self.args.items())
        return visible_text(f"{self.name}({inner})")


def canonical_args(args: dict[str, Any]) -> str:
    """Stable JSON for arguments: sorted keys, no whitespace, so equal calls compare equal.

    Exactly `json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)` (approvals
    store its hash); flat arguments of plain scalars, nearly every call's, are written directly, a few times faster.
    """
    try:
        return (
            "{"
            + ",".join(f"{_string(key)}:{_SCALARS[type(value)](value)}" for key, value in sorted(args.items()))
            + "}"
        )
    except (KeyError, TypeError):  # nested values, other types, keys that are not strings: the encoder decides
        return _CANONICAL.encode(args)


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
"""Built once: `json.dumps` with options builds an encoder on every call."""
_string = json.encoder.encode_basestring
"""The encoder's own string quoting (ensure_ascii=False)."""


def _number(value: float) -> str:
    return float.__repr__(value) if math.isfinite(value) else _CANONICAL.encode(value)


_SCALARS: dict[type, Callable[[Any], str]] = {
    str: _string,
    int: int.__repr__,
    float: _number,
    bool: lambda value: "true" if value else "false",
    type(None): lambda _: "null",
}
"""How the encoder writes each plain scalar type (exact types: subclasses, such as enums, go to the encoder)."""


_UNSEEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Zl", "Zp"})
"""Controls, format characters (zero-width, bidi embeddings, overrides and isolates, tags), private use, lone
surrogates, and the line and paragraph separators: none shows as what it is."""
_BLANK_LETTERS = frozenset(
    {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, *range(0x180B, 0x1810), *range(0xFE00, 0xFE10)}
    | set(range(0xE0100, 0xE01F0))
)
"""Letters and marks that draw nothing (fillers, variation selectors, the combining grapheme joiner)."""


def unseen(char: str) -> bool:
    """Whether a person reading the character would see nothing, or something other than it (a tab or a line
    break is layout, and seen)."""
    if char in "\t\n\r":
        return False
    return ord(char) in _BLANK_LETTERS or unicodedata.category(char) in _UNSEEN_CATEGORIES


def visible_text(text: str) -> str:
    """`text` with every character a person cannot see written as its escape (`\\u200b`, `\\U000e0041`)."""
    if text.isprintable() and not any(ord(c) in _BLANK_LETTERS for c in text):
        return text  # the usual case, checked fast: printable text holds no control or format character
    return "".join(_escape(c) if unseen(c) else c for c in text)


def unseen_characters(value: Any, where: str = "") -> Iterator[str]:
    """Each unseen character in a JSON-like value (keys included), described with where it is: for errors."""
    if isinstance(value, str):
        for position, char in enumerate(value):
            if unseen(char):
                name = unicodedata.name(char, "unnamed")
                yield f"U+{ord(char):04X} {name} at position {position} of {where or 'the arguments'}"
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from unseen_characters(str(key), f"the name {where + '.' if where else ''}{key}")
            yield from unseen_characters(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from unseen_characters(item, f"{where}[{index}]")


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
