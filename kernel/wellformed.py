"""Text and arguments made well-formed where they enter the kernel: lone surrogates replaced, nesting capped.

A logger that cuts an emoji in half, or a model that writes `"\\ud83d"`, must cost one odd character, never the run:
a lone UTF-16 surrogate cannot be written as UTF-8 (so no trace, checkpoint or hash could hold it).
"""

from __future__ import annotations

from typing import Any

MAX_ARG_DEPTH = 32
"""How deeply a call's arguments may nest (objects and arrays); real tool arguments are 1–3 levels deep."""


class ArgsTooDeepError(ValueError):
    """A call's arguments nest deeper than `MAX_ARG_DEPTH`; the message says what to send instead."""


def wellformed(text: str) -> str:
    """`text` with each lone UTF-16 surrogate replaced by U+FFFD (a high and low surrogate side by side become the
    character they encode); text without any is returned as it is."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def wellformed_args(value: Any, *, depth: int = 0) -> Any:
    """A JSON-like value (a call's arguments) with every string, keys included, made `wellformed`; raises
    `ArgsTooDeepError` past `MAX_ARG_DEPTH` levels of nesting, before anything has to serialise it. Arguments that
    need no change are returned as they are (the usual case: checked, not copied); tuples become lists."""
    return _repaired(value, depth) if _needs_repair(value, depth) else value


def _needs_repair(value: Any, depth: int) -> bool:
    """Whether a string in `value` is not well-formed or a tuple is in it; raises past `MAX_ARG_DEPTH` (stopping
    at the first repair needed: `_repaired` checks the depth of the rest)."""
    if isinstance(value, str):
        return not value.isascii() and wellformed(value) is not value
    if not isinstance(value, dict | list | tuple):
        return False
    _check_depth(depth)
    if isinstance(value, tuple):
        return True
    if isinstance(value, list):
        return any(_needs_repair(item, depth + 1) for item in value)
    for key, item in value.items():
        if type(key) is str and type(item) is str and key.isascii() and item.isascii():
            continue  # the usual argument, checked inline: an ASCII name with an ASCII text
        if _needs_repair(key, depth) or _needs_repair(item, depth + 1):
            return True
    return False


def _repaired(value: Any, depth: int) -> Any:
    if isinstance(value, str):
        return wellformed(value)
    if isinstance(value, dict | list | tuple):
        _check_depth(depth)
    if isinstance(value, dict):
        return {_key(key): _repaired(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_repaired(item, depth + 1) for item in value]
    return value


def _check_depth(depth: int) -> None:
    if depth >= MAX_ARG_DEPTH:
        raise ArgsTooDeepError(
            f"the arguments nest deeper than {MAX_ARG_DEPTH} levels; send a flat object of the tool's arguments"
        )


def _key(key: Any) -> Any:
    return wellformed(key) if isinstance(key, str) else key
