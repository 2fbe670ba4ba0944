"""A runbook: a Markdown file whose front matter (a `---` block of YAML) names its title, services, alerts and tags.

The front matter is YAML, read by PyYAML (libyaml's C parser when the wheel has it): the people who write runbooks
write YAML, their editors and linters read it as YAML, and a parser of our own for "the simple subset" both
disagreed with them at the edges and ran a hand-written regex on text from a repository (one front-matter line
made it backtrack for minutes, issue 19).

A runbook comes from outside, so its YAML is read defensively, in this order, and a refusal is a `FrontMatterError`:
- the sizes first, before any parsing: the file at most `MAX_FILE_BYTES`, its front matter `MAX_FRONT_MATTER_BYTES`;
- then the parser's events, checked as they come and abandoned at the first problem: nesting no deeper than
  `MAX_DEPTH`, and no anchors, aliases or tags (so nothing expands, as in the "billion laughs", and no tag
  chooses a Python type);
- then the node tree, read here: no Python object is ever constructed from YAML, only text and lists of text.

Values are what YAML says they are: `services: 5` is a number and `tags: [no]` a boolean (YAML 1.1), refused with
a message saying to quote them, so a runbook means the same to us as to any other YAML reader.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import yaml
from yaml.reader import ReaderError

KEYS = ("title", "services", "alerts", "tags", "when_to_use")
"""The front matter keys OpsAgent reads; others (owner, reviewed…) are allowed and ignored."""
FENCE = "---"
SUMMARY_CHARS = 200
"""Longest title or when-to-use shown in a one-line summary."""
MAX_FILE_BYTES = 256 * 1024
"""The largest runbook file read (UTF-8 bytes); `knowledge.max_runbook_bytes` may lower it, not raise it."""
MAX_FRONT_MATTER_BYTES = 16 * 1024
"""The largest front matter parsed: a few keys need a few hundred bytes."""
MAX_DEPTH = 8
"""The deepest nesting of lists and mappings read (the front matter's own mapping is level 1)."""
FIRST_LINE = 2
"""The file's line number of the front matter's first line (after the opening `---`)."""
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's parser, linear and in C; PyYAML's pure-Python one when the wheel was built without libyaml."""
_COLLECTION_START = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_COLLECTION_END = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
_STR, _NULL = "tag:yaml.org,2002:str", "tag:yaml.org,2002:null"
_KINDS = {
    "tag:yaml.org,2002:int": "a number",
    "tag:yaml.org,2002:float": "a number",
    "tag:yaml.org,2002:bool": "a true/false value",
    "tag:yaml.org,2002:timestamp": "a date",
}
_EXAMPLES = {"services": "[checkout, payments]", "alerts": "[CheckoutHigh5xx]", "tags": "[http, latency]"}
_FLAT = "write 'key: value' lines and lists of names"
_HINTS = (
    ("quoted scalar", "close the quote (inside single quotes write '' for a quote, inside double quotes \\\")"),
    ("flow sequence", "close the list with ']', its items separated by commas: [a, b]"),
    ("flow mapping", "close the mapping with '}'"),
    ("mapping values are not allowed", 'quote a value that holds ": ", e.g. title: "Checkout: 5xx above SLO"'),
    ("cannot start any token", "quote a value that starts with @, ` or %, and indent with spaces, not tabs"),
    ("tab character", "indent with spaces, not tabs"),
    ("nesting depth", _FLAT),
)
_DEFAULT_HINT = "write 'key: value' lines, each key at the start of its line, and lists as [a, b] or '- item' lines"


class FrontMatterError(ValueError):
    """A runbook cannot be read (its size, or its front matter); the message says where and what to write instead."""


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
    """The runbook in `text`; a one-line `FrontMatterError` naming the line (and column) and what to write instead
    when the file is too large or its front matter is not YAML with the keys' types."""
    _check_size(text)
    lines = text.removeprefix("\ufeff").splitlines()
    if not lines or lines[0].strip() != FENCE:
        raise FrontMatterError("no front matter: the file must start with a '---' line, then title: …")
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() in (FENCE, "...")), None)
    if end is None:
        raise FrontMatterError("the front matter is not closed: add a '---' line after its last key")
    front = "\n".join(lines[1:end])
    if len(front.encode()) > MAX_FRONT_MATTER_BYTES:
        raise FrontMatterError(
            f"the front matter is over {MAX_FRONT_MATTER_BYTES:,} bytes: keep title, services, alerts, tags and "
            "when_to_use there, and move the rest into the body"
        )
    fields = _fields(_tree(front))
    title = _text(fields, "title")
    if not title:
        raise FrontMatterError("the front matter has no title: add a line such as 'title: Checkout 5xx above SLO'")
    return Runbook(
        id=runbook_id,
        title=title,
        services=_names(fields, "services"),
        alerts=_names(fields, "alerts"),
        tags=_names(fields, "tags"),
        when_to_use=_text(fields, "when_to_use"),
        body="\n".join(lines[end + 1 :]).strip("\n"),
    )


def _check_size(text: str) -> None:
    """Refuse a file over `MAX_FILE_BYTES` (given as text by an evaluation, say, rather than read by the library)."""
    if len(text) > MAX_FILE_BYTES:  # a character is at least a byte: no need to encode a huge text to know
        size = len(text)
    else:
        try:
            size = len(text.encode())
        except UnicodeEncodeError:
            raise FrontMatterError("the text is not valid Unicode (a lone surrogate): save the file as UTF-8") from None
    if size > MAX_FILE_BYTES:
        raise FrontMatterError(
            f"the file is over {MAX_FILE_BYTES:,} bytes, the most a runbook may be: split it into several runbooks"
        )


def _tree(front: str) -> yaml.Node | None:
    """The front matter's YAML node tree (None when it is empty), after its events passed `_check_events`."""
    try:
        _check_events(front)
        return yaml.compose(front, Loader=_LOADER)
    except yaml.MarkedYAMLError as exc:
        raise FrontMatterError(_syntax_error(exc, front)) from None
    except ReaderError as exc:  # a character YAML does not allow (a control character)
        line = front.count("\n", 0, max(0, front.find(chr(exc.character)))) + FIRST_LINE
        raise FrontMatterError(
            f"line {line}: the character U+{exc.character:04X} is not allowed in YAML ({exc.reason}): remove it"
        ) from None


def _check_events(front: str) -> None:
    """Read the parser's events, and stop at the first that nests too deep or carries an anchor, alias or tag."""
    depth = 0
    for event in yaml.parse(front, Loader=_LOADER):
        line = event.start_mark.line + FIRST_LINE
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise FrontMatterError(
                f"line {line}: YAML anchors and aliases ('&name', '*name') are not supported: write the value out"
            )
        if getattr(event, "tag", None) is not None:
            raise FrontMatterError(
                f"line {line}: YAML tags ({event.tag!r}) are not supported: write the value as plain text"
            )
        if isinstance(event, _COLLECTION_START):
            depth += 1
            if depth > MAX_DEPTH:
                raise FrontMatterError(f"line {line}: the values nest deeper than {MAX_DEPTH} levels: {_FLAT}")
        elif isinstance(event, _COLLECTION_END):
            depth -= 1


def _syntax_error(exc: yaml.MarkedYAMLError, front: str) -> str:
    """One line from the parser's error: where (the start of an unclosed quote or list, when the front matter
    ended inside one), what the parser found, and what to write instead."""
    ended = exc.problem_mark is None or exc.problem_mark.index >= len(front)
    mark = exc.context_mark if ended and exc.context_mark is not None else exc.problem_mark
    found = ", ".join(part for part in (exc.context, exc.problem) if part)
    found = found.replace("end of stream", "end of the front matter").replace("'<stream end>'", "its end")
    found = found.replace("\n", " ")
    hint = next((hint for clue, hint in _HINTS if clue in found), _DEFAULT_HINT)
    where = f"line {mark.line + FIRST_LINE}, column {mark.column + 1}" if mark is not None else "the front matter"
    return f"{where}: {found}: {hint}"


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + FIRST_LINE


def _fields(root: yaml.Node | None) -> dict[str, yaml.Node]:
    """The value nodes of the keys OpsAgent reads, after refusing a repeated key or a near-miss of a known one."""
    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode):
        raise FrontMatterError(
            f"line {_line(root)}: expected 'key: value' lines, e.g. 'title: Checkout 5xx above SLO'; got {_shape(root)}"
        )
    fields: dict[str, yaml.Node] = {}
    seen: set[str] = set()
    for key_node, value in root.value:
        number = _line(key_node)
        if not isinstance(key_node, yaml.ScalarNode):
            raise FrontMatterError(f"line {number}: a key must be a name such as 'title', not {_shape(key_node)}")
        key = key_node.value
        if key in seen:
            raise FrontMatterError(f"line {number}: '{key}' is given twice")
        seen.add(key)
        _check_known(key, number)
        if key in KEYS:
            fields[key] = value
    return fields


def _shape(node: yaml.Node) -> str:
    match node:
        case yaml.MappingNode():
            return "a mapping"
        case yaml.SequenceNode():
            return "a list"
        case _:
            return "text"


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


def _scalar_text(node: yaml.ScalarNode, key: str) -> str:
    """A scalar's text: "" for an empty or null value; a number, boolean or date is refused with how to quote it."""
    if node.tag == _NULL:
        return ""
    if node.tag != _STR:
        kind = _KINDS.get(node.tag, "a special value")
        raise FrontMatterError(
            f"line {_line(node)}: YAML reads {node.value} in '{key}' as {kind}, not text: "
            f"quote it: {json.dumps(node.value)}"
        )
    return node.value


def _text(fields: dict[str, yaml.Node], key: str) -> str:
    node = fields.get(key)
    if node is None:
        return ""
    if not isinstance(node, yaml.ScalarNode):
        raise FrontMatterError(f"line {_line(node)}: '{key}' must be one line of text, not {_shape(node)}")
    return " ".join(_scalar_text(node, key).split())


def _names(fields: dict[str, yaml.Node], key: str) -> tuple[str, ...]:
    """A list of names, given as a YAML list or as one name."""
    node = fields.get(key)
    if node is None:
        return ()
    if isinstance(node, yaml.MappingNode):
        raise FrontMatterError(
            f"line {_line(node)}: '{key}' must be a list of names, e.g. {key}: {_EXAMPLES[key]}, not a mapping"
        )
    items = node.value if isinstance(node, yaml.SequenceNode) else [node]
    names = []
    for item in items:
        if not isinstance(item, yaml.ScalarNode):
            raise FrontMatterError(
                f"line {_line(item)}: each of '{key}' must be a name, not {_shape(item)} (quote a name that holds ': ')"
            )
        names.append(_scalar_text(item, key).strip())
    return tuple(name for name in names if name)
