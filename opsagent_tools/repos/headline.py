"""A repository read in one line for people: a file with its size at a ref, a listing, or a comparison that names the
setting a changed line gives another value ("config/app.yaml upstream_timeout 2s → 200ms").
"""

from __future__ import annotations

import re

from opsagent_tools.repos.shapes import Diff, DirListing, FileContent, change_priority

VALUE_CHARS = 32
HEADLINE_CHARS = 120
_SETTING = re.compile(r"""\s*+(?:-\s++)?["']?(?P<key>[A-Za-z_][\w.\-]*+)["']?\s*+[:=]\s*+(?P<value>.*)""")
"""A `key: value` or `key = value` line (YAML, TOML, .properties, .env, JSON), then the rest of the line. Its runs
are possessive (each is followed by a character it cannot hold) and the value's end is trimmed in `_value`: a lazy
value before optional blanks, a comma and blanks tried every split of a line's trailing blanks."""
_COMMENT = re.compile(r"(?<!\s)\s++#.*$")
"""A trailing comment after an unquoted value (YAML, TOML, .env), from where its blanks start: the leftmost place
it matches, and the only one tried, so a run of blanks is scanned once."""


def file_headline(content: FileContent) -> str:
    """ "config/app.yaml@v3.8.0 (42 lines)", cut or binary files said so."""
    where = f"{content.path}@{content.ref}"
    if content.binary_kind is not None:
        return f"{where} (binary: {content.binary_kind}, {content.size:,} bytes)"
    lines = content.text.count("\n") + (0 if content.text.endswith("\n") or not content.text else 1)
    if content.truncated:
        return f"{where} (first {lines:,} lines, {content.shown_bytes:,} of {content.size:,} bytes)"
    return f"{where} ({lines:,} line{'' if lines == 1 else 's'})"


def listing_headline(listing: DirListing) -> str:
    """ "config/@v3.8.0: 12 entries"."""
    where = f"{listing.path}/" if listing.path else listing.repo
    return f"{where}@{listing.ref}: {len(listing.entries)} entr{'y' if len(listing.entries) == 1 else 'ies'}"


def diff_headline(diff: Diff) -> str:
    """ "v3.7.2…v3.8.0: 3 files · config/app.yaml upstream_timeout 2s → 200ms": the settings that changed lines give
    another value (config files first; withheld patches never read), as many as fit; else the counts and commits."""
    n = len(diff.changes)
    head = f"{diff.base}…{diff.head}: "
    if not n:
        return head + "no file differs"
    head += f"{n} file{'' if n == 1 else 's'}"
    settings = [
        (change.path, f"{key} {_cut(old)} → {_cut(new)}")
        for change in sorted(diff.changes, key=lambda c: change_priority(c.path))
        if not change.withheld
        for key, old, new in setting_changes(change.patch or "")
    ]
    if not settings:
        commits = (
            f" · {diff.total_commits} commit{'' if diff.total_commits == 1 else 's'}" if diff.total_commits else ""
        )
        return f"{head} +{diff.additions} −{diff.deletions}{commits}"
    shown: list[str] = []
    for number, (path, setting) in enumerate(settings):
        said = setting if number and settings[number - 1][0] == path else f"{path} {setting}"
        left = len(settings) - number - 1
        if shown and len(" · ".join([head, *shown, said])) + (len(f" (+{left} more)") if left else 0) > HEADLINE_CHARS:
            break
        shown.append(said)
    more = f" (+{len(settings) - len(shown)} more)" if len(settings) > len(shown) else ""
    return " · ".join([head, *shown]) + more


def setting_changes(patch: str) -> list[tuple[str, str, str]]:
    """(key, old value, new value) for each key a run of changed lines removes and adds back with another value."""
    found: list[tuple[str, str, str]] = []
    removed: dict[str, str] = {}
    for line in [*patch.splitlines(), " "]:  # a closing context line ends the last run
        setting = _SETTING.match(line[1:])
        if line.startswith("-") and not line.startswith("---"):
            if setting is not None:
                removed.setdefault(setting["key"], _value(setting))
        elif line.startswith("+") and not line.startswith("+++"):
            if setting is not None and removed.get(setting["key"], _value(setting)) != _value(setting):
                found.append((setting["key"], removed.pop(setting["key"]), _value(setting)))
        elif not line.startswith("\\"):  # "\ No newline at end of file" belongs to the line before
            removed = {}
    return found


def _cut(value: str) -> str:
    return value if len(value) <= VALUE_CHARS else value[: VALUE_CHARS - 1] + "…"


def _value(setting: re.Match[str]) -> str:
    """The value a setting line gives, without a trailing comma, and its trailing comment dropped unless the value
    is quoted."""
    value = setting["value"].rstrip()
    value = value.removesuffix(",").rstrip()
    return value if value.startswith(("'", '"')) else _COMMENT.sub("", value)
