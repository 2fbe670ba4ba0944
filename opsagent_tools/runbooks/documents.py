"""A runbook: a Markdown file whose front matter (a `---` block) names its title, services, alerts and tags.

The front matter is the simple subset of YAML runbooks use (`key: value`, `[a, b]` and `- item` lists, quoted
strings), parsed here rather than by a YAML library: no runtime dependency, and a mistake is one line naming it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

KEYS = ("title", "services", "alerts", "tags", "when_to_use")
"""The front matter keys OpsAgent reads; others (owner, reviewed…) are allowed and ignored."""
FENCE = "---"
SUMMARY_CHARS = 200
"""Longest title or when-to-use shown in a one-line summary."""
_KEY_LINE = re.compile(r"(?P<key>[A-Za-z_][\w-]*)\s*:(?:\s+(?P<value>.*)|\s*)$")
_ITEM_LINE = re.compile(r"\s*-(?:\s+(?P<value>.*))?$")
_INLINE_ITEM = re.compile(r"""\s*(?P<item>"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^,'"]*?)\s*(?:,|$)""")


class FrontMatterError(ValueError):
    """A runbook's front matter cannot be read; the message says where and what to write instead."""


@dataclass(frozen=True, slots=True)
class Runbook:
    """One runbook, its id being its path in the library without `.md` (e.g. `checkout/high-5xx`)."""

    id: str
    title: str
    services: tuple[str, ...]
    alerts: tuple[str, ...]
    tags: tuple[str, ...]
    when_to_use: str
    body: str
    """The Markdown after the front matter."""

    def summary(self, chars: int = SUMMARY_CHARS) -> str:
        """One line for a listing: id, title and when to use it, quoted (they are the author's words) and each
        cut to `chars`."""
        when = f", when to use: {_quoted(self.when_to_use, chars)}" if self.when_to_use else ""
        return f"[{self.id}] {_quoted(self.title, chars)}{when}"


def _quoted(text: str, chars: int) -> str:
    clipped = text if len(text) <= chars else text[: chars - 1] + "…"
    return json.dumps(clipped, ensure_ascii=False)


def parse_runbook(runbook_id: str, text: str) -> Runbook:
    """The runbook in `text`; a `FrontMatterError` naming the line when its front matter is not the supported subset."""
    lines = text.removeprefix("\ufeff").splitlines()
    if not lines or lines[0].strip() != FENCE:
        raise FrontMatterError("no front matter: the file must start with a '---' line, then title: …")
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() in (FENCE, "...")), None)
    if end is None:
        raise FrontMatterError("the front matter is not closed: add a '---' line after its last key")
    fields = _fields(lines[1:end])
    title = _text(fields, "title")
    if not title:
        raise FrontMatterError("the front matter has no title: add a line such as 'title: Checkout 5xx above SLO'")
    return Runbook(
        id=runbook_id,
        title=title,
        services=_list(fields, "services"),
        alerts=_list(fields, "alerts"),
        tags=_list(fields, "tags"),
        when_to_use=_text(fields, "when_to_use"),
        body="\n".join(lines[end + 1 :]).strip("\n"),
    )


def _fields(lines: list[str]) -> dict[str, str | list[str]]:
    """Front matter lines (numbered from 2, the line after the opening `---`) as keys and values."""
    fields: dict[str, str | list[str]] = {}
    key: str | None = None
    for number, raw in enumerate(lines, start=2):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if item := _ITEM_LINE.match(line):
            if key is None or (isinstance(fields[key], str) and fields[key] != ""):
                raise FrontMatterError(f"line {number}: a '- item' line must follow a key with no value, e.g. 'tags:'")
            previous = fields[key]
            fields[key] = [*(previous if isinstance(previous, list) else []), _scalar(item["value"] or "", number)]
            continue
        if line[0].isspace():
            raise FrontMatterError(
                f"line {number}: nested values are not supported: write 'key: value' or a list of '- item' lines"
            )
        match = _KEY_LINE.match(line)
        if match is None:
            raise FrontMatterError(f"line {number}: expected 'key: value', got {line.strip()[:60]!r}")
        key = match["key"]
        if key in fields:
            raise FrontMatterError(f"line {number}: '{key}' is given twice")
        _check_known(key, number)
        fields[key] = _value(match["value"] or "", number)
    return fields


def _value(text: str, number: int) -> str | list[str]:
    value = _without_comment(text.strip())
    if value[:1] in ("|", ">"):
        raise FrontMatterError(f"line {number}: block text ('|' or '>') is not supported: write the value on one line")
    if value.startswith("["):
        if not value.endswith("]"):
            raise FrontMatterError(f"line {number}: the list is not closed: write it as [a, b] on one line")
        inner = value[1:-1].strip()
        return [_scalar(m["item"], number) for m in _INLINE_ITEM.finditer(inner) if m["item"]] if inner else []
    if value[:1] in ("{", "&", "*", "!"):
        raise FrontMatterError(f"line {number}: YAML maps, anchors and tags are not supported: write 'key: value'")
    return _scalar(value, number)


def _scalar(text: str, number: int) -> str:
    value = text.strip()
    if value.startswith('"'):
        try:
            decoded = json.loads(value)
        except ValueError:
            raise FrontMatterError(
                f"line {number}: the double-quoted string is not closed or has a bad escape"
            ) from None
        return str(decoded)
    if value.startswith("'"):
        if len(value) < 2 or not value.endswith("'"):
            raise FrontMatterError(f"line {number}: the single-quoted string is not closed")
        return value[1:-1].replace("''", "'")
    return _without_comment(value)


def _without_comment(value: str) -> str:
    """A plain value without its ` # comment` (quoted values keep their `#`)."""
    if value[:1] in ('"', "'"):
        return value
    return re.split(r"\s#", value, maxsplit=1)[0].strip()


def _check_known(key: str, number: int) -> None:
    """Refuse a near-miss of a key OpsAgent reads ('service', 'when-to-use'), which would be silently ignored."""
    if key in KEYS:
        return
    wanted = _normal(key)
    meant = next((known for known in KEYS if _normal(known) == wanted), None)
    if meant is not None:
        raise FrontMatterError(f"line {number}: unknown key '{key}': write '{meant}'")


def _normal(key: str) -> str:
    return key.lower().replace("-", "").replace("_", "").removesuffix("s")


def _text(fields: dict[str, str | list[str]], key: str) -> str:
    value = fields.get(key, "")
    if isinstance(value, list):
        raise FrontMatterError(f"'{key}' must be one line of text, not a list")
    return " ".join(value.split())


def _list(fields: dict[str, str | list[str]], key: str) -> tuple[str, ...]:
    value = fields.get(key, [])
    items = [value] if isinstance(value, str) else value
    return tuple(item.strip() for item in items if item.strip())
