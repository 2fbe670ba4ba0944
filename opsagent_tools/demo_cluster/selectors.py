"""Label and field selectors as the API server reads them, by plain string scanning (no regular expression runs on
a request's text): terms are comma-separated outside parentheses, and every term must hold."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

OPERATORS = ("!=", "==", "=")


def label_matches(selector: str, labels: Mapping[str, str]) -> bool:
    """`k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, comma-separated."""
    for term in _terms(selector):
        head, paren, rest = term.partition("(")
        words = head.split()
        if paren and rest.endswith(")") and len(words) == 2 and words[1] in ("in", "notin"):
            key, values = words[0], {value.strip() for value in rest[:-1].split(",")}
            if (labels.get(key) in values) != (words[1] == "in") or (words[1] == "in" and key not in labels):
                return False
        elif (split := _comparison(term)) is not None:
            key, operator, value = split
            if (labels.get(key.strip()) == value.strip()) != (operator != "!="):
                return False
        elif term.startswith("!"):
            if term[1:].strip() in labels:
                return False
        elif term not in labels:
            return False
    return True


def field_matches(selector: str, obj: Mapping[str, Any]) -> bool:
    """`a.b=v`, `a.b==v`, `a.b!=v`, comma-separated; a term that is no comparison matches nothing."""
    for term in filter(None, selector.split(",")):
        split = _comparison(term)
        if split is None:
            return False
        key, operator, value = split
        if (_lookup(obj, key) == value) != (operator != "!="):
            return False
    return True


def _terms(selector: str) -> Iterator[str]:
    """The selector's terms, stripped: split at the commas outside parentheses."""
    depth, start = 0, 0
    for at, char in enumerate(selector):
        depth += (char == "(") - (char == ")")
        if char == "," and depth <= 0:
            yield from filter(None, [selector[start:at].strip()])
            start = at + 1
    yield from filter(None, [selector[start:].strip()])


def _comparison(term: str) -> tuple[str, str, str] | None:
    """(key, operator, value) of `key=value`, `key==value` or `key!=value`; the key holds no `=` or `!`."""
    at = next((i for i, char in enumerate(term) if char in "=!"), -1)
    if at <= 0:
        return None
    operator = next((op for op in OPERATORS if term.startswith(op, at)), None)
    return (term[:at], operator, term[at + len(operator) :]) if operator else None


def _lookup(obj: Any, dotted: str) -> str:
    for part in dotted.split("."):
        obj = obj.get(part) if isinstance(obj, Mapping) else None
    return "" if obj is None else str(obj)
