"""JSON from outside (a backend's body, a log line) parsed with a bound on how deep it nests.

Python's `json` recurses once per level: a body nested 200,000 deep (which any server, or a line an application
logs, can send) raises `RecursionError`, which is not a `ValueError`, so it escaped every `except ValueError`
and reached the model as a raw interpreter error. Here it is a `JsonTooDeep`, a `ValueError` whose message says
what happened, and no value nested deeper than `MAX_JSON_DEPTH` is ever returned (code that walks a parsed
value recursively stays safe too).

The parser is pydantic-core's (jiter, in Rust): bounded at `MAX_JSON_DEPTH` by construction, and faster than
`json`. A text it refuses for another reason goes to `json.loads`, whose readings differ on a few odd inputs
that backends do send (a lone surrogate escape in a log line, a UTF-8 BOM), so nothing that parsed before is
refused now; that rarely taken path checks the depth itself.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import from_json

MAX_JSON_DEPTH = 200
"""Arrays and objects inside one another; jiter's own limit. No Kubernetes object, metric or log document comes
close (a pod's managedFields, the deepest we read, nest about 20)."""
_JITER_TOO_DEEP = "recursion limit exceeded"


class JsonTooDeep(ValueError):
    """The text nests arrays and objects deeper than `MAX_JSON_DEPTH`."""

    def __init__(self) -> None:
        super().__init__(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")


def load_json(text: bytes | str) -> Any:
    """The value of a JSON text; a `JsonTooDeep` when it nests too deep, another `ValueError` (as `json.loads`
    raises) when it is not JSON."""
    try:
        return from_json(text)
    except ValueError as exc:
        if _JITER_TOO_DEEP in str(exc):
            raise JsonTooDeep from None
    try:
        value = json.loads(text)
    except RecursionError:
        raise JsonTooDeep from None
    if deeper_than(value, MAX_JSON_DEPTH):
        raise JsonTooDeep
    return value


def deeper_than(value: Any, limit: int) -> bool:
    """Whether a parsed JSON `value` holds something inside more than `limit` arrays and objects, as jiter
    counts (an empty one at `limit + 1` is fine); a walk with a stack, not recursion."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        if children and depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
