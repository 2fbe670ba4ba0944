"""The redactor every observation goes through before the model, Slack, logs or a trace see it.

Tool output routinely carries credentials (env dumps, DSNs, headers, key files); the patterns (`patterns`), compiled
once, run in order and mask only the value. A pattern whose hints a text lacks is skipped in one check.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Protocol, runtime_checkable

from kernel.redaction.patterns import DEFAULT_PATTERNS
from kernel.redaction.secret_lexicon import NOT_A_SECRET, marker
from kernel.redaction.secret_pattern import SecretPattern


@runtime_checkable
class Redactor(Protocol):
    """Anything that masks secrets in a text; it must be idempotent and never raise."""

    def redact(self, text: str) -> str:
        """The text with every secret it recognises replaced by a marker."""
        ...


def _replacer(pattern: SecretPattern) -> Callable[[re.Match[str]], str]:
    group, each, kind_of = pattern.group, pattern.each, pattern.kind

    def masked(text: str, start: int, end: int, marker: str) -> str:
        """`text[start:end]` masked, unless it is empty or plainly not a secret."""
        if start == end or NOT_A_SECRET.fullmatch(text, start, end):
            return text[start:end]
        return marker

    def replace(match: re.Match[str]) -> str:
        text, (start, end) = match.string, match.span(group)
        this_marker = pattern.marker
        if kind_of is not None:
            kind = kind_of(match)
            if kind is None:
                return match.group(0)
            this_marker = marker(kind)
        if each is None:
            inner = masked(text, start, end, this_marker)
        else:
            group_text, pieces, position = text[start:end], [], 0
            for value in each.finditer(group_text):
                pieces += [
                    group_text[position : value.start("value")],
                    masked(group_text, *value.span("value"), this_marker),
                ]
                position = value.end("value")
            inner = "".join([*pieces, group_text[position:]])
        return text[match.start() : start] + inner + text[end : match.end()]

    return replace


class PatternRedactor:
    """A `Redactor` that runs its patterns in order, replacing each secret with `[REDACTED:<name>]`.

    Markers and placeholders (`****`, `${VAR}`, `<redacted>`) are left alone, so `redact` is idempotent.
    """

    __slots__ = ("_always", "_by_hint", "_patterns", "_steps")

    def __init__(self, patterns: Iterable[SecretPattern] = DEFAULT_PATTERNS) -> None:
        self._patterns = tuple(patterns)
        self._steps = tuple((p.regex, _replacer(p)) for p in self._patterns)
        self._always = frozenset(i for i, p in enumerate(self._patterns) if not p.hints)
        by_hint: dict[str, set[int]] = {}
        for index, pattern in enumerate(self._patterns):
            for hint in pattern.hints:
                by_hint.setdefault(hint, set()).add(index)
        self._by_hint = tuple((hint, frozenset(indices)) for hint, indices in by_hint.items())
        """Each hint and the patterns that need it: text without a hint skips those patterns in one check."""

    @property
    def patterns(self) -> tuple[SecretPattern, ...]:
        """The patterns, in the order they run."""
        return self._patterns

    def redact(self, text: str) -> str:
        """The text with every recognised secret replaced by its marker; the rest is unchanged."""
        lowered = text.lower()
        chosen = set(self._always)
        for hint, indices in self._by_hint:
            if hint in lowered:
                chosen |= indices
        for index in sorted(chosen):
            regex, replace = self._steps[index]
            text = regex.sub(replace, text)
        return text

    def with_patterns(self, *extra: SecretPattern) -> PatternRedactor:
        """A new redactor that runs `extra` first (so a specific custom format wins), then these patterns."""
        return PatternRedactor((*extra, *self._patterns))

    def __repr__(self) -> str:
        return f"PatternRedactor({[p.name for p in self._patterns]!r})"


DEFAULT_REDACTOR = PatternRedactor()
"""The redactor every observation goes through unless a deployment configures its own."""
